/* A module's own thread: it calls tick every interval, off the event loop,
 * and hands the lines tick makes to the loop's thread through a bounded
 * queue that never blocks either side. What reads other processes' /proc
 * (the stall tracer, the resource sampler) can block on a target's locks
 * or a slow disk for hundreds of milliseconds; on its own thread that
 * delays only its own ticks, never the link's frames.
 *
 * Lifecycle: pl__worker_new on the loop's thread, pl__worker_start once
 * everything that needs privilege is done (the thread takes the process's
 * credentials and signal mask as they are then), pl__worker_free to stop
 * and join it. */
#ifndef PL_DAEMON_WORKER_H
#define PL_DAEMON_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pl_loop;
struct pl_worker;

struct pl_worker_ops {
	/* On the worker's thread, once, before its first tick; may be NULL. */
	void (*start)(void *ctx);
	/* On the worker's thread, once an interval: 0 to go on; any other
	 * value stops the worker and is handed to done. */
	int (*tick)(void *ctx);
	/* On the loop's thread: one line put by tick, in order, NUL-terminated
	 * (len leaves the NUL out). */
	void (*line)(void *ctx, const char *line, size_t len);
	/* On the loop's thread, once, after the last line: tick's return. */
	void (*done)(void *ctx, int ret);
};

struct pl_worker_stats {
	uint64_t ticks;
	uint64_t late_ticks;    /* intervals skipped because a tick ran late */
	uint64_t lines_dropped; /* put while the queue was full */
};

/* queue_bytes: what the queue holds at most (lines and their lengths).
 * 0 or -errno. */
int pl__worker_new(struct pl_loop *loop, const char *name, uint64_t interval_ns,
		   size_t queue_bytes, const struct pl_worker_ops *ops, void *ctx,
		   struct pl_worker **out);
/* Start the thread; its first tick is one interval from now. 0 or -errno. */
int pl__worker_start(struct pl_worker *w);
/* From tick, on the worker's thread: queue a line for the loop's thread.
 * false when it does not fit (counted in lines_dropped). */
bool pl__worker_put(struct pl_worker *w, const char *line, size_t len);
/* Any thread. */
void pl__worker_get_stats(struct pl_worker *w, struct pl_worker_stats *out);
/* Stop the thread after its current tick, join it, hand on the lines
 * queued, and release w. NULL is fine. */
void pl__worker_free(struct pl_worker *w);

#endif
