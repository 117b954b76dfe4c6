/* A single-producer, single-consumer ring of records in memory shared
 * between two processes (a producer and perflinkd), used in both directions:
 * frames and telemetry to the daemon, replies back.
 *
 * The other side is not trusted. Its indices and lengths are checked before
 * anything is read, a record is copied out of the shared memory before it
 * is looked at (so the other side cannot change it after the check), and a
 * ring that makes no sense is emptied and counted, never followed. Pushing
 * never blocks or waits: a full ring refuses the record, and the caller
 * counts the drop.
 *
 * A record is an 8-byte header (payload length, kind) and the payload,
 * padded to 8 bytes; records wrap around the end of the data area. head and
 * tail are free-running 32-bit byte counters (the pusher owns head, the
 * popper tail), each on its own cache line, and 32-bit so that the atomics
 * are lock-free on every target (mipsel has no 64-bit atomics). */
#ifndef PL_COMMON_SHM_RING_H
#define PL_COMMON_SHM_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define PL_SHM_RING_RECORD_HEADER 8
#define PL_SHM_RING_MIN 4096u
#define PL_SHM_RING_MAX (16u << 20)

/* Lives in the shared memory. */
struct pl_shm_ring_ctl {
	_Atomic uint32_t head; /* bytes pushed, ever (written by the pusher) */
	uint32_t pad0[15];
	_Atomic uint32_t tail; /* bytes popped, ever (written by the popper) */
	uint32_t pad1[15];
};

/* A process's view of one ring. */
struct pl_shm_ring {
	struct pl_shm_ring_ctl *ctl;
	uint8_t *data;
	uint32_t cap; /* a power of two, PL_SHM_RING_MIN..PL_SHM_RING_MAX */
	uint64_t corrupt; /* times the ring made no sense and was emptied */
};

_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "32-bit atomics are lock-free");

/* cap must be a power of two in range; data has cap bytes. 0 or -EINVAL. */
int pl__shm_ring_attach(struct pl_shm_ring *r, struct pl_shm_ring_ctl *ctl, uint8_t *data,
			uint32_t cap);
/* The pusher's side. The payload is given in two pieces (either may be
 * empty) so a small header and a body need no joining copy. 0, -ENOSPC when
 * the ring has no room now, -EMSGSIZE when the record could never fit. */
int pl__shm_ring_push(struct pl_shm_ring *r, uint32_t kind, const void *a, size_t alen,
		      const void *b, size_t blen);
/* The popper's side: copy the next record's payload into out (cap bytes).
 * 1 with *kind and *len, 0 when empty, -EBADMSG when the ring made no sense
 * or the record is larger than cap (the ring is then emptied and counted). */
int pl__shm_ring_pop(struct pl_shm_ring *r, uint32_t *kind, void *out, size_t cap,
		     size_t *len);
/* Bytes waiting (as the pusher's head says, bounded by cap). */
uint32_t pl__shm_ring_used(const struct pl_shm_ring *r);

#endif
