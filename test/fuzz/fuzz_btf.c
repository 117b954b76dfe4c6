/* libFuzzer target: btf_find.h's reading of BTF (the kernel's type
 * information, which the D scan reads task_struct's offsets from) on
 * arbitrary bytes: the parse, then every look-up the scan makes, and
 * member look-ups, by name and by path, in every structure the bytes
 * declare. */
#include "btf_find.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "task_struct", "bpf_iter_task", "__state", "tgid",
					     "seq", "" };
	unsigned char *copy = malloc(size ? size : 1);
	struct pl_btf b;
	uint32_t off, sz;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (pl__btf_parse(&b, copy, size) != 0)
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		pl__btf_find(&b, names[i], PL_BTF_STRUCT);
		pl__btf_find(&b, names[i], PL_BTF_FUNC);
	}
	for (uint32_t id = 0; id < b.ntypes && id < 4096; id++) {
		pl__btf_member(&b, (int)id, "tgid", &off, &sz);
		pl__btf_member(&b, (int)id, "", &off, &sz);
		/* paths through structure members, as the scan's gate asks */
		pl__btf_member(&b, (int)id, "se.cfs_rq", &off, &sz);
		pl__btf_member(&b, (int)id, "seq.seq.seq", &off, &sz);
		pl__btf_member(&b, (int)id, ".", &off, &sz);
	}
	pl__btf_free(&b);
	return 0;
}
