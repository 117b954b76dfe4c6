/* libFuzzer target: the record ring's reader (common/ipc/shm_ring.h) on memory
 * a hostile producer controls completely: the first 8 input bytes are the
 * head and tail counters, the rest the ring's data. Every pop must stay in
 * bounds, hand out only records that fit, and make progress (the ring
 * empties: a reader can never be made to loop). */
#include "shm_ring.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pl_shm_ring_ctl ctl;
	static uint8_t ring[PL_SHM_RING_MIN];
	static uint8_t out[512];
	struct pl_shm_ring r;
	uint32_t head, tail, kind;
	size_t len;
	int pops = 0, ret;

	if (size < 8)
		return 0;
	memcpy(&head, data, 4);
	memcpy(&tail, data + 4, 4);
	memset(ring, 0, sizeof(ring));
	memcpy(ring, data + 8, size - 8 < sizeof(ring) ? size - 8 : sizeof(ring));
	atomic_store(&ctl.head, head);
	atomic_store(&ctl.tail, tail);
	if (pl__shm_ring_attach(&r, &ctl, ring, sizeof(ring)) < 0)
		abort();
	while ((ret = pl__shm_ring_pop(&r, &kind, out, sizeof(out), &len)) != 0) {
		if (ret == 1 && len > sizeof(out))
			abort();
		if (ret < 0 && atomic_load(&ctl.tail) != head)
			abort(); /* a damaged ring is emptied */
		if (++pops > (int)(sizeof(ring) / PL_SHM_RING_RECORD_HEADER) + 1)
			abort(); /* every pop consumes at least one header */
	}
	return 0;
}
