/* A producer's shared memory as both ends see it (producer_proto.h has the
 * layout): the mapping, its counters, the two rings and the frame slots.
 * perflinkd (daemon/collector/collector.c) makes the memory and the welcome that
 * describes it; the producer (client/producer.c) maps what it was sent.
 * Both map it through pl__producer_view_map, which refuses a layout that
 * does not fit the memory, so neither trusts the other's numbers. */
#ifndef PL_COMMON_PRODUCER_VIEW_H
#define PL_COMMON_PRODUCER_VIEW_H

#include "producer_proto.h"
#include "shm_ring.h"

#include <stddef.h>
#include <stdint.h>

struct pl_producer_view {
	uint8_t *mem; /* NULL when not mapped */
	size_t mem_bytes;
	struct pl_producer_shm *shm;
	struct pl_shm_ring records, replies;
	uint32_t slot_count, slot_bytes;
	uint8_t *slots;
};

/* Map w->shm_bytes of fd and attach the rings and slots at the welcome's
 * offsets. 0; -EPROTO when the layout does not fit (rings outside the memory,
 * overlapping the counters, too many slots, a ring size that is not a power
 * of two); -errno from mmap. On failure nothing stays mapped. */
int pl__producer_view_map(struct pl_producer_view *v, int fd,
			  const struct pl_producer_welcome *w);
void pl__producer_view_unmap(struct pl_producer_view *v);

static inline uint8_t *pl__producer_view_slot(const struct pl_producer_view *v, uint32_t i)
{
	return v->slots + (size_t)i * v->slot_bytes;
}

#endif
