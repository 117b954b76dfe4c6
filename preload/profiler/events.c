/* The per-call event ring (events.h). */
#include "events.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

bool pl__events_on;

static struct pl_event *ring;
static uint32_t mask;  /* cells - 1, cells a power of two */
static uint32_t head;  /* atomic: the next cell to write */
static uint32_t tail;  /* reporter only: the next cell to read */
/* atomic; 32 bits (MIPS32 has no 64-bit atomics): the reporter widens it */
static uint32_t dropped;

/* Cell i starts at turn i: free for the writer of position i. */
static void reset(void)
{
	uint32_t i;

	for (i = 0; i <= mask; i++)
		__atomic_store_n(&ring[i].turn, i, __ATOMIC_RELAXED);
	__atomic_store_n(&head, 0, __ATOMIC_RELAXED);
	tail = 0;
	__atomic_store_n(&dropped, 0, __ATOMIC_RELAXED);
}

int pl__events_init(uint32_t kib)
{
	size_t cells = 1, want = (size_t)kib * 1024 / sizeof(struct pl_event);
	void *p;

	while (cells * 2 <= want)
		cells *= 2;
	p = mmap(NULL, cells * sizeof(struct pl_event), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	ring = p;
	mask = (uint32_t)cells - 1;
	reset();
	__atomic_store_n(&pl__events_on, true, __ATOMIC_RELEASE);
	return 0;
}

static uint32_t clamp32(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

static uint8_t result_of(const struct pl_sample *s)
{
	if (s->ret >= 0)
		return PL_EVENT_OK;
	switch (s->err) {
	case EAGAIN: return PL_EVENT_EAGAIN;
	case ENODATA: return PL_EVENT_ENODATA;
	case EINTR: return PL_EVENT_EINTR;
	default: return PL_EVENT_ERROR;
	}
}

void pl__events_record(const struct pl_sample *s, uint32_t tid)
{
	uint32_t pos = __atomic_load_n(&head, __ATOMIC_RELAXED);
	struct pl_event *e;

	for (;;) {
		int32_t diff;

		e = &ring[pos & mask];
		diff = (int32_t)(__atomic_load_n(&e->turn, __ATOMIC_ACQUIRE) - pos);
		if (diff == 0) {
			if (__atomic_compare_exchange_n(&head, &pos, pos + 1, true,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
				break;
		} else if (diff < 0) {
			/* the cell still holds an event from a lap ago: full */
			__atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
			return;
		} else {
			pos = __atomic_load_n(&head, __ATOMIC_RELAXED);
		}
	}
	e->tid = tid;
	e->start_ns = s->start_ns;
	e->wall_ns = clamp32(s->wall_ns);
	e->cpu_ns = clamp32(s->cpu_ns);
	e->bytes = clamp32(s->cache_bytes + s->stream_bytes);
	e->stage = (uint8_t)s->stage;
	e->result = result_of(s);
	e->unused = 0;
	__atomic_store_n(&e->turn, pos + 1, __ATOMIC_RELEASE);
}

size_t pl__events_take(struct pl_event *out, size_t max)
{
	size_t n = 0;

	while (n < max) {
		struct pl_event *e = &ring[tail & mask];

		/* not yet written (or being written: a writer between its claim
		 * and its mark; the next take finds it) */
		if (__atomic_load_n(&e->turn, __ATOMIC_ACQUIRE) != tail + 1)
			break;
		out[n++] = *e;
		/* free for the writer of this cell's next lap */
		__atomic_store_n(&e->turn, tail + mask + 1, __ATOMIC_RELEASE);
		tail++;
	}
	return n;
}

uint32_t pl__events_dropped(void) { return __atomic_load_n(&dropped, __ATOMIC_RELAXED); }

void pl__events_fork_child(void)
{
	if (ring)
		reset();
}
