/* Names looked up in the kernel's own type information (BTF,
 * /sys/kernel/btf/vmlinux): the type id of a kernel function, which a BPF
 * program names to call it (a kfunc) or to attach to it, and the byte offset
 * and size of a structure's member, which a program needs to read a field of
 * a kernel object (task_struct's __state, tgid). perflink assembles its BPF
 * programs by hand, so that it builds with no BPF compiler and no libbpf in
 * its cross builds; these few look-ups are all it needs of what libbpf would
 * do with BTF.
 *
 * The file is read whole and checked as it is walked: every record, name
 * and member must lie inside it, or the look-ups fail (a fuzz target feeds
 * it hostile bytes). Little-endian BTF of the running kernel only: a file
 * with the other byte order is refused. */
#ifndef PL_TRACER_BTF_FIND_H
#define PL_TRACER_BTF_FIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pl_btf {
	unsigned char *data;   /* the whole file */
	size_t len;
	const unsigned char *types, *strs;
	uint32_t types_len, strs_len;
	uint32_t *type_at;     /* type id -> offset of its record in types */
	uint32_t ntypes;       /* ids 1 .. ntypes - 1 */
};

/* BTF kinds looked up here (linux/btf.h) */
#define PL_BTF_STRUCT 4
#define PL_BTF_FUNC 12

/* Read and index a BTF file. 0, or -errno (-EINVAL: not BTF, or malformed). */
int pl__btf_load(struct pl_btf *b, const char *path);
/* The same over bytes in memory; takes data (malloc'd) whether it succeeds
 * or not. */
int pl__btf_parse(struct pl_btf *b, unsigned char *data, size_t len);
void pl__btf_free(struct pl_btf *b);

/* The id of the first type of kind named name, or -ENOENT. */
int pl__btf_find(const struct pl_btf *b, const char *name, unsigned kind);

/* The byte offset and size of member name of structure (or union) id,
 * looking inside unnamed structures and unions (a kernel built with
 * randomized layout puts task_struct's fields in one). The member must be
 * a whole-byte integer (through typedefs and qualifiers), a pointer, a
 * structure or union (its whole size), or an array of whole-byte integers
 * (task_struct's comm).
 * 0, or -ENOENT. */
int pl__btf_member(const struct pl_btf *b, int id, const char *name, uint32_t *offset,
		   uint32_t *size);
/* The same for a member of exactly size bytes (what a program loads):
 * true with its offset, false when absent or of another size. */
bool pl__btf_member_sized(const struct pl_btf *b, int id, const char *name, uint32_t size,
			  uint32_t *offset);

#endif
