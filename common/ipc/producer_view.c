/* See producer_view.h. */
#include "producer_view.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

/* [off, off + len) inside [min, size), without overflow: the numbers come
 * from the other process. */
static bool inside(uint64_t off, uint64_t len, uint64_t min, uint64_t size)
{
	return off >= min && off <= size && len <= size - off;
}

static bool layout_fits(const struct pl_producer_welcome *w)
{
	uint64_t counters = sizeof(struct pl_producer_shm);

	return w->shm_bytes >= counters && (uint64_t)(size_t)w->shm_bytes == w->shm_bytes &&
	       inside(w->records_off, w->records_cap, counters, w->shm_bytes) &&
	       inside(w->replies_off, w->replies_cap, counters, w->shm_bytes) &&
	       w->slot_count <= PL_PRODUCER_MAX_SLOTS &&
	       inside(w->slots_off, (uint64_t)w->slot_count * w->slot_bytes, counters,
		      w->shm_bytes);
}

int pl__producer_view_map(struct pl_producer_view *v, int fd,
			  const struct pl_producer_welcome *w)
{
	uint8_t *mem;

	memset(v, 0, sizeof(*v));
	if (!layout_fits(w))
		return -EPROTO;
	mem = mmap(NULL, (size_t)w->shm_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		return -errno;
	v->mem = mem;
	v->mem_bytes = (size_t)w->shm_bytes;
	v->shm = (struct pl_producer_shm *)mem;
	if (pl__shm_ring_attach(&v->records, &v->shm->records, mem + w->records_off,
				w->records_cap) < 0 ||
	    pl__shm_ring_attach(&v->replies, &v->shm->replies, mem + w->replies_off,
				w->replies_cap) < 0) {
		pl__producer_view_unmap(v);
		return -EPROTO;
	}
	v->slots = mem + w->slots_off;
	v->slot_count = w->slot_count;
	v->slot_bytes = w->slot_bytes;
	return 0;
}

void pl__producer_view_unmap(struct pl_producer_view *v)
{
	if (v->mem)
		munmap(v->mem, v->mem_bytes);
	memset(v, 0, sizeof(*v));
}
