/* Single-producer single-consumer ring between the signal handler and the
 * sampler thread. Preallocated, no locks: the handler only claims a slot,
 * fills it and publishes the head; a full ring drops the sample and counts
 * it (never blocks the render thread). One producer holds because the
 * timer signals one thread and a handler is not re-entered by its own
 * signal.
 *
 * Every atomic here is 32-bit or pointer-sized. A 64-bit atomic on a
 * 32-bit target (mipsel, armhf without LDREXD in use) becomes a libatomic
 * call that takes a lock: in a signal handler that lock can be held by the
 * interrupted thread itself, a deadlock. The drop counter is therefore an
 * unsigned long (wraps after 4 G drops on 32-bit, harmless for a count
 * shown per window) and the build fails where these are not lock-free. */
#include "sampler.h"

/* 2: always lock-free (GCC and clang predefine these) */
_Static_assert(__GCC_ATOMIC_INT_LOCK_FREE == 2 && sizeof(uint32_t) == sizeof(int),
	       "the sampler ring needs lock-free 32-bit atomics");
_Static_assert(__GCC_ATOMIC_LONG_LOCK_FREE == 2,
	       "the sampler ring needs lock-free pointer-sized atomics");

/* A power of two. Each slot holds a stack copy (sampler.h), ~1 MiB in
 * all, resident only as deep as the stacks copied reach. The handler asks
 * for a drain at half full: at 1000 Hz the sampler thread empties it
 * every 32 ms, not at its 0.1 s tick. */
#define RING_SLOTS 64u

static struct pl_raw_sample ring[RING_SLOTS];
static uint32_t head;         /* atomic: written by the producer */
static uint32_t tail;         /* atomic: written by the consumer */
static unsigned long dropped; /* atomic */

struct pl_raw_sample *pl__ring_claim(void)
{
	uint32_t h = __atomic_load_n(&head, __ATOMIC_RELAXED);

	if (h - __atomic_load_n(&tail, __ATOMIC_ACQUIRE) >= RING_SLOTS) {
		__atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	return &ring[h % RING_SLOTS];
}

bool pl__ring_commit(void)
{
	uint32_t h = __atomic_load_n(&head, __ATOMIC_RELAXED) + 1;

	__atomic_store_n(&head, h, __ATOMIC_RELEASE);
	/* once, as it reaches half full: not on every sample after */
	return h - __atomic_load_n(&tail, __ATOMIC_ACQUIRE) == RING_SLOTS / 2;
}

const struct pl_raw_sample *pl__ring_peek(void)
{
	uint32_t t = __atomic_load_n(&tail, __ATOMIC_RELAXED);

	if (t == __atomic_load_n(&head, __ATOMIC_ACQUIRE))
		return NULL;
	return &ring[t % RING_SLOTS];
}

void pl__ring_release(void)
{
	__atomic_store_n(&tail, __atomic_load_n(&tail, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
}

unsigned long pl__ring_dropped(void)
{
	return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}
