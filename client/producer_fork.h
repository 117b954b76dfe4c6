/* What the preload library needs of the producer code beyond the public
 * API (include/perflink.h). */
#ifndef PL_CLIENT_PRODUCER_FORK_H
#define PL_CLIENT_PRODUCER_FORK_H

#include <stdbool.h>

struct pl_producer;

/* In a forked child: let go of the parent's connection (close this
 * process's descriptors, unmap) without touching locks another thread of
 * the parent may have held at the fork. p must not be used again. */
void pl__producer_abandon(struct pl_producer *p);

/* Told of the producer's socket as it is made (mine) and before it is
 * closed or forgotten: the preload library keeps its target from closing
 * it (preload/own_fds.h). NULL in libperflink. */
extern void (*pl__producer_fd_watch)(int fd, bool mine);
/* Producers opened from now on send no wakeups (PL_HELLO_POLLED): the
 * preload library's. */
extern bool pl__producer_polled;

/* Whether p's socket descriptor is still the one it connected with. A
 * target that closes every descriptor (close_range, closefrom, a close
 * loop) and opens its own gets those numbers back: the preload library
 * checks this before every use, so that it never sends into, or closes, a
 * descriptor of the target's. */
bool pl__producer_still_ours(const struct pl_producer *p);
/* Let go of p without touching its descriptor, whose number is no longer
 * ours (still_ours said no): unmap and free. p must not be used again. */
void pl__producer_forget(struct pl_producer *p);

#endif
