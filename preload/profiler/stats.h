/* Per-thread statistics, merged by the reporter.
 *
 * Each thread that makes a measured call claims a slot in a fixed array
 * (a compare-and-swap, once per thread) and keeps a pointer to it in an
 * initial-exec TLS variable. Only that thread writes the slot; it brackets
 * each update with a sequence counter (odd while writing), so that the
 * reporter copies a consistent slot without the writer ever waiting. Slots
 * of threads that have exited (the kernel says so: tgkill(pid, tid, 0)
 * fails with ESRCH) are folded into retired totals and freed by the
 * reporter. A thread that finds no free slot, or a hook nested inside
 * another's update (a signal handler), counts a dropped call instead of
 * writing: the report says how many.
 *
 * Counters are 64-bit but updated by one writer under the sequence
 * counter, so no 64-bit atomics are needed (MIPS32 has none). */
#ifndef PL_PRELOAD_STATS_H
#define PL_PRELOAD_STATS_H

#include <stdint.h>

#include "stages.h"

#define PL_MAX_THREADS 128
#define PL_MAX_SITES 32     /* per thread */
#define PL_MAX_MERGED_SITES 256

struct pl_stage_stats {
	uint64_t calls;
	uint64_t errors;  /* failed calls other than the retries below */
	uint64_t eagain, enodata, eintr;
	uint64_t wall_total_ns, wall_max_ns;
	uint64_t cpu_total_ns, cpu_max_ns;
	uint64_t cache_bytes, stream_bytes;
};

/* Calls to a cache stage from one call site (the hook's return address). */
struct pl_site_stats {
	uintptr_t addr; /* 0: empty */
	uint32_t stage;
	uint64_t calls, wall_total_ns, cpu_total_ns, bytes;
};

/* One measured call, as the hook saw it. */
struct pl_sample {
	unsigned stage;
	uint64_t start_ns; /* CLOCK_MONOTONIC at the call's start (events.h) */
	int ret, err;
	uint64_t wall_ns, cpu_ns;
	uint64_t cache_bytes, stream_bytes;
	uintptr_t site; /* 0 when the stage is not a cache stage */
};

/* Map the per-thread slots: before profiling is turned on, 0 or -errno
 * (profiling must then stay off). */
int pl__stats_init(void);

/* Record a call on this thread. Async-signal-safe, lock-free. */
void pl__stats_record(const struct pl_sample *s);

/* What the reporter gets: everything since the process (or fork) began. */
struct pl_snapshot {
	struct pl_stage_stats stage[PL_MAX_STAGES];
	struct pl_site_stats site[PL_MAX_MERGED_SITES];
	unsigned n_sites;
	uint64_t site_overflow_calls; /* calls whose site did not fit a table */
	unsigned live_threads;        /* slots in use */
	uint64_t dropped_calls;
};

/* Merge all slots and the retired totals into out; free the slots of
 * exited threads. Reporter thread only. */
void pl__stats_collect(struct pl_snapshot *out);

/* In a fork child: forget everything (the child starts fresh). Runs on the
 * only thread there is. */
void pl__stats_reset_after_fork(void);

#endif
