/* btf_find.h: look-ups in a BTF blob built here (a structure whose fields
 * sit in an unnamed union, as task_struct's do in a kernel with randomized
 * layout; a typedef'd int; a pointer; a bitfield; a function), the same
 * blob damaged in each of the ways a hostile file could be, and the running
 * kernel's own BTF where there is one. */
#include <errno.h>
#include <linux/btf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btf_find.h"
#include "tap.h"

struct blob {
	unsigned char b[1024];
	size_t len;
};

static void put32(struct blob *x, uint32_t v)
{
	memcpy(x->b + x->len, &v, 4);
	x->len += 4;
}

static void type(struct blob *x, uint32_t name, uint32_t kind, uint32_t vlen, bool kflag,
		 uint32_t size_or_type)
{
	put32(x, name);
	put32(x, (kflag ? 1u << 31 : 0) | kind << 24 | vlen);
	put32(x, size_or_type);
}

static void memb(struct blob *x, uint32_t name, uint32_t type_id, uint32_t offset)
{
	put32(x, name);
	put32(x, type_id);
	put32(x, offset);
}

/* Strings: offsets into this table. */
static const char strs[] = "\0int\0pid_t\0task\0__state\0tgid\0next\0flags\0bpf_iter_task\0u\0outer\0comm";
enum { S_INT = 1, S_PID_T = 5, S_TASK = 11, S_STATE = 16, S_TGID = 24, S_NEXT = 29,
       S_FLAGS = 34, S_FUNC = 40, S_U = 54, S_OUTER = 56, S_COMM = 62 };

/* ids: 1 int, 2 pid_t, 3 ptr to 4, 4 struct task, 5 unnamed union, 6 func,
 * 7 func_proto, 8 struct outer (a task at 32, an array of 4 ints at 80), 9 that
 * array */
static struct blob build(void)
{
	struct blob x = { .len = sizeof(struct btf_header) };
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION,
				.hdr_len = sizeof(struct btf_header) };
	size_t t0 = x.len;

	type(&x, S_INT, BTF_KIND_INT, 0, false, 4);
	put32(&x, 32); /* encoding: 32 bits at offset 0 */
	type(&x, S_PID_T, BTF_KIND_TYPEDEF, 0, false, 1);
	type(&x, 0, BTF_KIND_PTR, 0, false, 4);
	type(&x, S_TASK, BTF_KIND_STRUCT, 3, true, 64);
	memb(&x, S_STATE, 1, 8 * 8);
	memb(&x, 0, 5, 16 * 8);                     /* the unnamed union at 16 */
	memb(&x, S_FLAGS, 1, 3u << 24 | 40 * 8);   /* a 3-bit bitfield */
	type(&x, 0, BTF_KIND_UNION, 2, false, 16);
	memb(&x, S_TGID, 2, 4 * 8);                 /* tgid at 16 + 4 */
	memb(&x, S_NEXT, 3, 8 * 8);                 /* a pointer at 16 + 8 */
	type(&x, S_FUNC, BTF_KIND_FUNC, 0, false, 7);
	type(&x, 0, BTF_KIND_FUNC_PROTO, 0, false, 0);
	type(&x, S_OUTER, BTF_KIND_STRUCT, 2, false, 96);
	memb(&x, S_TASK, 4, 32 * 8);
	memb(&x, S_COMM, 9, 80 * 8);
	type(&x, 0, BTF_KIND_ARRAY, 0, false, 0);
	put32(&x, 1); /* of int, */
	put32(&x, 1); /* indexed by int, */
	put32(&x, 4); /* 4 of them */
	h.type_len = (uint32_t)(x.len - t0);
	h.str_off = h.type_len;
	h.str_len = sizeof(strs);
	memcpy(x.b + x.len, strs, sizeof(strs));
	x.len += sizeof(strs);
	memcpy(x.b, &h, sizeof(h));
	return x;
}

static int parse(const struct blob *x, struct pl_btf *b)
{
	unsigned char *d = malloc(x->len ? x->len : 1);

	memcpy(d, x->b, x->len);
	return pl__btf_parse(b, d, x->len);
}

static void test_lookups(void)
{
	struct blob x = build();
	struct pl_btf b;
	uint32_t off = 0, size = 0;
	int task, outer;

	TAP_OK(parse(&x, &b) == 0 && b.ntypes == 10, "a blob of 9 types parses (%u)", b.ntypes);
	task = pl__btf_find(&b, "task", PL_BTF_STRUCT);
	TAP_OK(task == 4, "the structure is found by name and kind (%d)", task);
	TAP_OK(pl__btf_find(&b, "task", PL_BTF_FUNC) == -ENOENT,
	       "not under another kind");
	TAP_OK(pl__btf_find(&b, "bpf_iter_task", PL_BTF_FUNC) == 6, "the function is found");
	TAP_OK(pl__btf_member(&b, task, "__state", &off, &size) == 0 && off == 8 && size == 4,
	       "a direct member: offset 8, size 4 (%u, %u)", off, size);
	TAP_OK(pl__btf_member(&b, task, "tgid", &off, &size) == 0 && off == 20 && size == 4,
	       "a member of the unnamed union, through a typedef: offset 20, size 4 (%u, %u)",
	       off, size);
	TAP_OK(pl__btf_member(&b, task, "next", &off, &size) == 0 && off == 24 &&
		       size == sizeof(void *),
	       "a pointer member (%u, %u)", off, size);
	TAP_OK(pl__btf_member(&b, task, "flags", &off, &size) == -ENOENT,
	       "a bitfield is no field to read");
	TAP_OK(pl__btf_member(&b, task, "u", &off, &size) == -ENOENT &&
		       pl__btf_member(&b, 6, "tgid", &off, &size) == -ENOENT &&
		       pl__btf_member(&b, 999, "tgid", &off, &size) == -ENOENT &&
		       pl__btf_member(&b, -1, "tgid", &off, &size) == -ENOENT,
	       "no such member, not a structure, ids out of range: -ENOENT");
	outer = pl__btf_find(&b, "outer", PL_BTF_STRUCT);
	TAP_OK(outer == 8 && pl__btf_member(&b, outer, "task.tgid", &off, &size) == 0 &&
		       off == 32 + 20 && size == 4,
	       "a member of a structure member, by path: offset 52, size 4 (%u, %u)", off, size);
	TAP_OK(pl__btf_member(&b, outer, "task.next", &off, &size) == 0 && off == 32 + 24,
	       "and a pointer in it (%u)", off);
	TAP_OK(pl__btf_member(&b, outer, "task", &off, &size) == 0 && off == 32 && size == 64,
	       "a structure member is read whole: offset 32, size 64 (%u, %u)", off, size);
	TAP_OK(pl__btf_member(&b, outer, "comm", &off, &size) == 0 && off == 80 && size == 16,
	       "an array of integers is: offset 80, size 16 (%u, %u)", off, size);
	TAP_OK(pl__btf_member(&b, outer, "task.flags", &off, &size) == -ENOENT &&
		       pl__btf_member(&b, outer, "task.nosuch", &off, &size) == -ENOENT &&
		       pl__btf_member(&b, outer, "tas.tgid", &off, &size) == -ENOENT &&
		       pl__btf_member(&b, task, "tgid.x", &off, &size) == -ENOENT &&
		       pl__btf_member(&b, outer, "task.", &off, &size) == -ENOENT,
	       "a bitfield in a structure member is no field to read, nor a wrong name on the path, "
	       "a path through an integer, or an empty last name: -ENOENT");
	pl__btf_free(&b);
}

static void test_damage(void)
{
	struct blob good = build(), x;
	struct btf_header h;
	struct pl_btf b;
	uint32_t off, size;
	int refused = 0, cases = 0;

	/* every truncation */
	for (size_t len = 0; len < good.len; len++) {
		x = good;
		x.len = len;
		cases++;
		refused += parse(&x, &b) == -EINVAL;
		pl__btf_free(&b);
	}
	TAP_OK(refused == cases, "each of %d truncations is refused (%d)", cases, refused);

	x = good;
	x.b[0] ^= 0xff;
	TAP_OK(parse(&x, &b) == -EINVAL, "another magic (or byte order) is refused");
	pl__btf_free(&b);

	x = good;
	memcpy(&h, x.b, sizeof(h));
	h.str_len = 0xfffffff0u;
	memcpy(x.b, &h, sizeof(h));
	TAP_OK(parse(&x, &b) == -EINVAL, "a string table past the end is refused");
	pl__btf_free(&b);

	x = good;
	/* the struct's vlen made huge: its members would run past the types */
	x.b[sizeof(h) + 16 + 12 + 12 + 4] = 0xff;
	x.b[sizeof(h) + 16 + 12 + 12 + 5] = 0xff;
	TAP_OK(parse(&x, &b) == -EINVAL, "members past the end of the types are refused");
	pl__btf_free(&b);

	x = good;
	x.b[sizeof(h) + 4 + 3] = 0x1f; /* the first record's kind: unknown */
	TAP_OK(parse(&x, &b) == -EINVAL, "an unknown kind is refused (its size is not known)");
	pl__btf_free(&b);

	/* names and member types out of range: parsed, but never followed */
	x = good;
	{
		uint32_t bad = 0x7fffffff;

		memcpy(x.b + sizeof(h) + 16 + 12 + 12 + 12, &bad, 4); /* __state's name */
		memcpy(x.b + sizeof(h) + 16 + 12 + 12 + 12 + 12 + 4, &bad, 4); /* the union's type */
	}
	TAP_OK(parse(&x, &b) == 0 && pl__btf_member(&b, 4, "__state", &off, &size) == -ENOENT &&
		       pl__btf_member(&b, 4, "tgid", &off, &size) == -ENOENT,
	       "a name outside the strings and a member type out of range are not followed");
	pl__btf_free(&b);

	/* a union whose unnamed member is itself: the depth bound ends it */
	x = good;
	{
		uint32_t self = 5;

		memcpy(x.b + sizeof(h) + 16 + 12 + 12 + 12 + 36 + 12 + 4, &self, 4);
		memset(x.b + sizeof(h) + 16 + 12 + 12 + 12 + 36 + 12, 0, 4); /* unnamed */
	}
	TAP_OK(parse(&x, &b) == 0 && pl__btf_member(&b, 4, "zzz", &off, &size) == -ENOENT,
	       "a union holding itself unnamed: the walk is bounded");
	pl__btf_free(&b);
	TAP_OK(pl__btf_load(&b, "/nonexistent/btf") == -ENOENT, "no file: -ENOENT");
}

/* The running kernel's, where it has one: the fields the D scan reads. */
static void test_vmlinux(void)
{
	struct pl_btf b;
	uint32_t off = 0, size = 0;
	int task;

	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		TAP_SKIP("no /sys/kernel/btf/vmlinux here");
		return;
	}
	TAP_OK(pl__btf_load(&b, "/sys/kernel/btf/vmlinux") == 0 && b.ntypes > 1000,
	       "the kernel's BTF loads (%u types)", b.ntypes);
	task = pl__btf_find(&b, "task_struct", PL_BTF_STRUCT);
	TAP_OK(task > 0 && pl__btf_member(&b, task, "tgid", &off, &size) == 0 && size == 4,
	       "task_struct's tgid: offset %u, size %u", off, size);
	TAP_OK(pl__btf_member(&b, task, "se.sum_exec_runtime", &off, &size) == 0 && size == 8 &&
		       off > 0,
	       "task_struct's se.sum_exec_runtime, by path: offset %u, size %u", off, size);
	pl__btf_free(&b);
}

int main(void)
{
	test_lookups();
	test_damage();
	test_vmlinux();
	return tap_done();
}
