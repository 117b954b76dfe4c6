/* See btf_find.h. The layout is linux/btf.h's: a header, then type records
 * (each a struct btf_type and a tail whose size its kind and vlen give) and
 * a string table; type ids count the records from 1. */
#include "btf_find.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/btf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BTF_MAX_BYTES (64u << 20) /* vmlinux's is 5-6 MB */
#define BTF_MAX_DEPTH 8           /* unnamed members inside unnamed members */
#define BTF_KIND_DECL_TAG_ 17
#define BTF_KIND_TYPE_TAG_ 18
#define BTF_KIND_ENUM64_ 19

static struct btf_type type_of(const struct pl_btf *b, uint32_t id)
{
	struct btf_type t;

	memcpy(&t, b->types + b->type_at[id], sizeof(t));
	return t;
}

/* The size of a record's tail, or -1 for a kind this does not know. */
static long tail_size(const struct btf_type *t)
{
	uint32_t vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG_:
		return 4;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * (long)sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * 8;
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * (long)sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
	case BTF_KIND_ENUM64_:
		return (long)vlen * 12;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG_:
		return 0;
	default:
		return -1;
	}
}

/* The string at off, or NULL when it does not end inside the table. */
static const char *str_at(const struct pl_btf *b, uint32_t off)
{
	if (off >= b->strs_len || !memchr(b->strs + off, '\0', b->strs_len - off))
		return NULL;
	return (const char *)b->strs + off;
}

int pl__btf_parse(struct pl_btf *b, unsigned char *data, size_t len)
{
	struct btf_header h;
	uint64_t types_end, strs_end;
	uint32_t cap = 1024, id = 1;

	memset(b, 0, sizeof(*b));
	b->data = data;
	b->len = len;
	if (len < sizeof(h))
		goto bad;
	memcpy(&h, data, sizeof(h));
	if (h.magic != BTF_MAGIC || h.version != BTF_VERSION || h.hdr_len < sizeof(h) ||
	    h.hdr_len > len || h.type_off % 4 || (h.hdr_len + h.type_off) % 4)
		goto bad;
	types_end = (uint64_t)h.hdr_len + h.type_off + h.type_len;
	strs_end = (uint64_t)h.hdr_len + h.str_off + h.str_len;
	if (types_end > len || strs_end > len || h.str_len == 0)
		goto bad;
	b->types = data + h.hdr_len + h.type_off;
	b->types_len = h.type_len;
	b->strs = data + h.hdr_len + h.str_off;
	b->strs_len = h.str_len;
	if (!(b->type_at = malloc(cap * sizeof(*b->type_at))))
		goto nomem;
	b->type_at[0] = 0; /* id 0 is void: no record */
	for (uint32_t off = 0; off < b->types_len; id++) {
		struct btf_type t;
		long tail;

		if (b->types_len - off < sizeof(t))
			goto bad;
		memcpy(&t, b->types + off, sizeof(t));
		if ((tail = tail_size(&t)) < 0 || b->types_len - off - sizeof(t) < (uint64_t)tail)
			goto bad;
		if (id == cap) {
			uint32_t *n = cap >= (1u << 24) ? NULL
							: realloc(b->type_at, 2 * cap * sizeof(*n));

			if (!n)
				goto nomem;
			b->type_at = n;
			cap *= 2;
		}
		b->type_at[id] = off;
		off += (uint32_t)(sizeof(t) + (size_t)tail);
	}
	b->ntypes = id;
	return 0;
bad:
	pl__btf_free(b);
	return -EINVAL;
nomem:
	pl__btf_free(b);
	return -ENOMEM;
}

int pl__btf_load(struct pl_btf *b, const char *path)
{
	size_t cap = 1u << 20, len = 0;
	unsigned char *data = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	struct stat st;

	memset(b, 0, sizeof(*b));
	if (fd < 0)
		return -errno;
	/* sysfs gives the size: one allocation of it (5-6 MB for vmlinux) */
	if (fstat(fd, &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size < BTF_MAX_BYTES)
		cap = (size_t)st.st_size + 1;
	for (;;) {
		ssize_t n;

		if (!data || len == cap) {
			unsigned char *d = cap > BTF_MAX_BYTES ? NULL : realloc(data, data ? 2 * cap : cap);

			if (!d) {
				err = data && cap > BTF_MAX_BYTES ? -EFBIG : -ENOMEM;
				break;
			}
			if (data)
				cap *= 2;
			data = d;
		}
		n = read(fd, data + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (err < 0) {
		free(data);
		return err;
	}
	return pl__btf_parse(b, data, len);
}

void pl__btf_free(struct pl_btf *b)
{
	free(b->data);
	free(b->type_at);
	memset(b, 0, sizeof(*b));
}

int pl__btf_find(const struct pl_btf *b, const char *name, unsigned kind)
{
	for (uint32_t id = 1; id < b->ntypes; id++) {
		struct btf_type t = type_of(b, id);
		const char *n;

		if (BTF_INFO_KIND(t.info) == kind && (n = str_at(b, t.name_off)) && strcmp(n, name) == 0)
			return (int)id;
	}
	return -ENOENT;
}

/* id through typedefs and qualifiers (0 when there are too many) */
static uint32_t unqualified(const struct pl_btf *b, uint32_t id)
{
	for (int hops = 0; hops < 16 && id > 0 && id < b->ntypes; hops++) {
		struct btf_type t = type_of(b, id);

		switch (BTF_INFO_KIND(t.info)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG_:
			id = t.type;
			break;
		default:
			return id;
		}
	}
	return 0;
}

/* The size of a whole-byte integer, enum or pointer that id is (through
 * typedefs and qualifiers), or 0. */
static uint32_t scalar_size(const struct pl_btf *b, uint32_t id)
{
	struct btf_type t;
	uint32_t enc;

	if ((id = unqualified(b, id)) == 0)
		return 0;
	t = type_of(b, id);
	switch (BTF_INFO_KIND(t.info)) {
	case BTF_KIND_INT:
		memcpy(&enc, b->types + b->type_at[id] + sizeof(t), sizeof(enc));
		return BTF_INT_OFFSET(enc) == 0 && BTF_INT_BITS(enc) == t.size * 8 ? t.size : 0;
	case BTF_KIND_ENUM:
		return t.size;
	case BTF_KIND_PTR:
		return sizeof(void *);
	default:
		return 0;
	}
}

/* The size of a structure or union id is, or of an array of whole-byte
 * scalars (task_struct's comm), through typedefs and qualifiers; 0 for
 * anything else. */
static uint32_t object_size(const struct pl_btf *b, uint32_t id)
{
	struct btf_type t;
	struct btf_array a;
	uint32_t elem;

	if ((id = unqualified(b, id)) == 0)
		return 0;
	t = type_of(b, id);
	switch (BTF_INFO_KIND(t.info)) {
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return t.size;
	case BTF_KIND_ARRAY:
		memcpy(&a, b->types + b->type_at[id] + sizeof(t), sizeof(a));
		elem = a.type < b->ntypes ? scalar_size(b, a.type) : 0;
		return elem && a.nelems <= UINT32_MAX / elem ? elem * a.nelems : 0;
	default:
		return 0;
	}
}

static int member_in(const struct pl_btf *b, uint32_t id, const char *name, uint32_t base,
		     int depth, uint32_t *offset, uint32_t *size)
{
	const char *dot = strchr(name, '.');
	struct btf_type t;
	uint32_t kind;

	if (id == 0 || id >= b->ntypes || depth > BTF_MAX_DEPTH)
		return -ENOENT;
	t = type_of(b, id);
	kind = BTF_INFO_KIND(t.info);
	if (kind != BTF_KIND_STRUCT && kind != BTF_KIND_UNION)
		return -ENOENT;
	for (uint32_t i = 0; i < BTF_INFO_VLEN(t.info); i++) {
		struct btf_member m;
		uint32_t bits;
		const char *n;

		memcpy(&m, b->types + b->type_at[id] + sizeof(t) + i * sizeof(m), sizeof(m));
		bits = BTF_INFO_KFLAG(t.info) ? BTF_MEMBER_BIT_OFFSET(m.offset) : m.offset;
		if (BTF_INFO_KFLAG(t.info) && BTF_MEMBER_BITFIELD_SIZE(m.offset))
			continue; /* a bitfield: no field of its own to read */
		if (bits % 8)
			continue;
		if (m.name_off == 0) {
			if (member_in(b, m.type, name, base + bits / 8, depth + 1, offset, size) == 0)
				return 0;
		} else if (!(n = str_at(b, m.name_off))) {
			continue;
		} else if (dot) {
			/* "se.cfs_rq": a member of the structure member se */
			if (strlen(n) == (size_t)(dot - name) && memcmp(n, name, strlen(n)) == 0)
				return member_in(b, unqualified(b, m.type), dot + 1, base + bits / 8,
						 depth + 1, offset, size);
		} else if (strcmp(n, name) == 0) {
			uint32_t sz = scalar_size(b, m.type);

			if (sz == 0)
				sz = object_size(b, m.type);
			if (sz == 0 || base + bits / 8 > UINT32_MAX - sz)
				return -ENOENT;
			*offset = base + bits / 8;
			*size = sz;
			return 0;
		}
	}
	return -ENOENT;
}

int pl__btf_member(const struct pl_btf *b, int id, const char *name, uint32_t *offset,
		   uint32_t *size)
{
	if (id <= 0)
		return -ENOENT;
	return member_in(b, (uint32_t)id, name, 0, 0, offset, size);
}

bool pl__btf_member_sized(const struct pl_btf *b, int id, const char *name, uint32_t size,
			  uint32_t *offset)
{
	uint32_t got;

	return pl__btf_member(b, id, name, offset, &got) == 0 && got == size;
}
