/* Per-call events (PERFLINK_PROFILE_EVENTS=1): every call the profiler
 * times, also as an event of its own, so that the host can put each call
 * on its thread's timeline, not only in the report's totals.
 *
 * The hook appends a 32-byte event to one ring for the whole process,
 * allocated once when profiling starts (PERFLINK_PROFILE_EVENTS_KB, 256 KiB
 * by default: 8192 events). The ring is a bounded multi-producer queue
 * with a turn counter in every cell (Vyukov's): a writer claims the next
 * cell with one compare-and-swap when that cell has been read, fills it and
 * marks it written; a full ring drops the event and counts it. No lock, no
 * allocation, no system call: async-signal-safe. The reporter thread takes
 * them (events_out.c) every EVENTS_DRAIN_MS and sends them on. */
#ifndef PL_PRELOAD_EVENTS_H
#define PL_PRELOAD_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

/* How a call ended, as the event says (docs/stages.md, "Events"). */
enum pl_event_result {
	PL_EVENT_OK,
	PL_EVENT_EAGAIN,
	PL_EVENT_ENODATA,
	PL_EVENT_EINTR,
	PL_EVENT_ERROR,
};

struct pl_event {
	uint32_t turn;     /* the ring's, not the event's */
	uint32_t tid;
	uint64_t start_ns; /* CLOCK_MONOTONIC when the call began */
	uint32_t wall_ns, cpu_ns; /* UINT32_MAX: 4.29 s or more */
	uint32_t bytes;    /* cache and stream bytes; UINT32_MAX: that or more */
	uint8_t stage;     /* index in pl__stages */
	uint8_t result;    /* enum pl_event_result */
	uint16_t unused;
};

/* Set when the ring exists; the hooks test it. */
extern bool pl__events_on;

/* Constructor: a ring of about kib KiB. 0 or -errno (events stay off). */
int pl__events_init(uint32_t kib);
/* Hot path: one timed call on thread tid. */
void pl__events_record(const struct pl_sample *s, uint32_t tid);
/* Reporter: take up to max events, oldest first. */
size_t pl__events_take(struct pl_event *out, size_t max);
/* Events dropped (a full ring) since the start or the fork, modulo 2^32. */
uint32_t pl__events_dropped(void);
/* In a fork child, on its only thread: an empty ring. */
void pl__events_fork_child(void);

#endif
