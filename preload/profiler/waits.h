/* Waits in poll, select and epoll, timed as the stage they wait for.
 *
 * A capture client that polls before its DQBUF spends the frame period in
 * poll or select, and its DQBUF then returns at once: the blocking story
 * (wall far above CPU) is in the wait, not the call. So each dequeue and
 * wait stage has a companion stage NAME.wait (stages.c), and a poll,
 * select or epoll wait whose set holds a descriptor that has learnt its
 * wait stage (fdtab.h) is timed, wall and thread CPU, as a call of that
 * companion. With several such descriptors in one set, the first one's
 * stage is charged. Waits on nothing staged go straight through, after a
 * look at each descriptor of the set.
 *
 * Async-signal-safe, no allocation, no lock; errno is left alone. */
#ifndef PL_PRELOAD_WAITS_H
#define PL_PRELOAD_WAITS_H

#include <poll.h>
#include <stdint.h>
#include <sys/select.h>

/* The wait stage (1 + its index; 0: none) a wait on these would be for. */
unsigned pl__waits_in_pollfds(const struct pollfd *fds, nfds_t n);
unsigned pl__waits_in_fdsets(int nfds, const fd_set *r, const fd_set *w, const fd_set *e);

/* Around the real wait: begin, the call, then end with its result. */
struct pl_wait_clock {
	uint64_t wall0, cpu0;
};
void pl__wait_begin(struct pl_wait_clock *c);
void pl__wait_end(unsigned wait_stage, const struct pl_wait_clock *c, int ret, int err);

#endif
