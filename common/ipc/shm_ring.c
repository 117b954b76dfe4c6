/* See shm_ring.h. */
#include "shm_ring.h"

#include <errno.h>
#include <string.h>

static uint32_t record_size(size_t len)
{
	return (uint32_t)((PL_SHM_RING_RECORD_HEADER + len + 7) & ~(size_t)7);
}

int pl__shm_ring_attach(struct pl_shm_ring *r, struct pl_shm_ring_ctl *ctl, uint8_t *data,
			uint32_t cap)
{
	if (cap < PL_SHM_RING_MIN || cap > PL_SHM_RING_MAX || (cap & (cap - 1)))
		return -EINVAL;
	r->ctl = ctl;
	r->data = data;
	r->cap = cap;
	r->corrupt = 0;
	return 0;
}

/* Copy in or out at a free-running position, wrapping at the end. */
static void copy_in(struct pl_shm_ring *r, uint32_t pos, const void *src, size_t len)
{
	uint32_t off = pos & (r->cap - 1);
	size_t first = len < r->cap - off ? len : r->cap - off;

	memcpy(r->data + off, src, first);
	if (len > first)
		memcpy(r->data, (const uint8_t *)src + first, len - first);
}

static void copy_out(const struct pl_shm_ring *r, uint32_t pos, void *dst, size_t len)
{
	uint32_t off = pos & (r->cap - 1);
	size_t first = len < r->cap - off ? len : r->cap - off;

	memcpy(dst, r->data + off, first);
	if (len > first)
		memcpy((uint8_t *)dst + first, r->data, len - first);
}

int pl__shm_ring_push(struct pl_shm_ring *r, uint32_t kind, const void *a, size_t alen,
		      const void *b, size_t blen)
{
	uint32_t head = atomic_load_explicit(&r->ctl->head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&r->ctl->tail, memory_order_acquire);
	uint32_t used = head - tail, need;
	uint32_t hdr[2];

	if (alen + blen > r->cap - PL_SHM_RING_RECORD_HEADER)
		return -EMSGSIZE;
	need = record_size(alen + blen);
	if (used > r->cap) {
		/* The popper's tail makes no sense: it is not ours to fix. */
		return -ENOSPC;
	}
	if (need > r->cap - used)
		return -ENOSPC;
	hdr[0] = (uint32_t)(alen + blen);
	hdr[1] = kind;
	copy_in(r, head, hdr, sizeof(hdr));
	if (alen)
		copy_in(r, head + PL_SHM_RING_RECORD_HEADER, a, alen);
	if (blen)
		copy_in(r, head + PL_SHM_RING_RECORD_HEADER + (uint32_t)alen, b, blen);
	atomic_store_explicit(&r->ctl->head, head + need, memory_order_release);
	return 0;
}

static int corrupt(struct pl_shm_ring *r, uint32_t head)
{
	r->corrupt++;
	atomic_store_explicit(&r->ctl->tail, head, memory_order_release);
	return -EBADMSG;
}

int pl__shm_ring_pop(struct pl_shm_ring *r, uint32_t *kind, void *out, size_t cap, size_t *len)
{
	uint32_t head = atomic_load_explicit(&r->ctl->head, memory_order_acquire);
	uint32_t tail = atomic_load_explicit(&r->ctl->tail, memory_order_relaxed);
	uint32_t used = head - tail, hdr[2], need;

	if (used == 0)
		return 0;
	if (used > r->cap || used < PL_SHM_RING_RECORD_HEADER || (used & 7) || (tail & 7))
		return corrupt(r, head);
	copy_out(r, tail, hdr, sizeof(hdr));
	if (hdr[0] > used - PL_SHM_RING_RECORD_HEADER)
		return corrupt(r, head);
	need = record_size(hdr[0]);
	if (need > used || hdr[0] > cap)
		return corrupt(r, head);
	copy_out(r, tail + PL_SHM_RING_RECORD_HEADER, out, hdr[0]);
	atomic_store_explicit(&r->ctl->tail, tail + need, memory_order_release);
	*kind = hdr[1];
	*len = hdr[0];
	return 1;
}

uint32_t pl__shm_ring_used(const struct pl_shm_ring *r)
{
	uint32_t used = atomic_load_explicit(&r->ctl->head, memory_order_acquire) -
			atomic_load_explicit(&r->ctl->tail, memory_order_relaxed);

	return used > r->cap ? r->cap : used;
}
