/* perflinkd's one event loop: epoll over file descriptors, timers (one
 * timerfd each) and signals (one signalfd for all of them).
 *
 * Callbacks run on the loop's thread, one at a time. A callback may add or
 * remove any watch, its own included: a removed watch is never called again,
 * even when its event is already in the batch being dispatched, and its
 * memory is released only after the batch.
 *
 * Not thread-safe: one thread owns a loop. */
#ifndef PL_DAEMON_EVENT_LOOP_H
#define PL_DAEMON_EVENT_LOOP_H

#include <stdint.h>

struct pl_loop;
struct pl_loop_watch;

/* events: the EPOLLIN/EPOLLOUT/EPOLLHUP/EPOLLERR bits that are ready. */
typedef void (*pl__loop_fd_cb)(void *ctx, int fd, uint32_t events);
/* expirations: how many intervals passed since the last call (more than 1
 * when the loop was late). */
typedef void (*pl__loop_timer_cb)(void *ctx, uint64_t expirations);
typedef void (*pl__loop_signal_cb)(void *ctx, int signo);

int pl__loop_new(struct pl_loop **out);
/* Removes all watches, closes the timerfds and the signalfd and restores the
 * signal mask the loop found; signals that arrived but were not dispatched
 * are discarded. NULL is fine. */
void pl__loop_free(struct pl_loop *l);

/* Watch fd (not owned: the caller closes it after removing the watch) for
 * events (EPOLLIN, EPOLLOUT). out may be NULL if the watch is never changed
 * or removed before pl__loop_free. 0 or -errno. */
int pl__loop_add_fd(struct pl_loop *l, int fd, uint32_t events, pl__loop_fd_cb cb, void *ctx,
		    struct pl_loop_watch **out);
/* Change the events of an fd watch; 0 stops watching without removing. */
int pl__loop_mod_fd(struct pl_loop_watch *w, uint32_t events);

/* A CLOCK_MONOTONIC timer: first expiry after first_ns, then every
 * interval_ns (0: once). first_ns == 0 creates it disarmed. 0 or -errno. */
int pl__loop_add_timer(struct pl_loop *l, uint64_t first_ns, uint64_t interval_ns,
		       pl__loop_timer_cb cb, void *ctx, struct pl_loop_watch **out);
/* Re-arm (or with first_ns == 0, disarm) a timer watch. */
int pl__loop_timer_set(struct pl_loop_watch *w, uint64_t first_ns, uint64_t interval_ns);

/* Block signo for the process and deliver it through the loop instead. One
 * handler per signal; adding a second replaces the first. 0 or -errno. */
int pl__loop_add_signal(struct pl_loop *l, int signo, pl__loop_signal_cb cb, void *ctx);

/* Stop watching and release w (closing it if it is a timer). NULL is fine. */
void pl__loop_remove(struct pl_loop_watch *w);

/* Wait up to timeout_ms (-1: forever) for events and dispatch them.
 * Returns the number of events dispatched or -errno. */
int pl__loop_run_once(struct pl_loop *l, int timeout_ms);
/* Dispatch until pl__loop_stop is called. 0, or -errno if epoll failed. */
int pl__loop_run(struct pl_loop *l);
/* Make pl__loop_run return after the current batch. */
void pl__loop_stop(struct pl_loop *l);

#endif
