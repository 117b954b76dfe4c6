/* What the preload library needs of the producer code beyond the public
 * API (include/perflink.h). */
#ifndef PL_CLIENT_PRODUCER_FORK_H
#define PL_CLIENT_PRODUCER_FORK_H

struct pl_producer;

/* In a forked child: let go of the parent's connection (close this
 * process's descriptors, unmap) without touching locks another thread of
 * the parent may have held at the fork. p must not be used again. */
void pl__producer_abandon(struct pl_producer *p);

#endif
