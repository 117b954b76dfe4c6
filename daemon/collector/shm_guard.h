/* Reading memory that a peer may cut short under us. A producer's shared
 * memory is a sealed memfd where the kernel has one: then it cannot shrink.
 * Before 3.17 it is an unlinked file that the producer can ftruncate, and a
 * read or write of a page past the new end raises SIGBUS, which would kill
 * perflinkd. Code that touches such memory runs inside pl__shm_guard_run:
 * a SIGBUS whose address falls in the guarded range ends the run early
 * with -EFAULT instead. A fault anywhere else is left to the disposition
 * SIGBUS had before (the process dies as it would have).
 *
 * One guarded run at a time, on the thread that faults (SIGBUS from a
 * memory access is delivered to the thread that made it); the code inside
 * must hold no lock and leave nothing half done that outlives the run:
 * the caller throws away what the run was working on. */
#ifndef PL_DAEMON_SHM_GUARD_H
#define PL_DAEMON_SHM_GUARD_H

#include <stddef.h>

/* The SIGBUS handler, installed once (later calls do nothing). 0 or -errno. */
int pl__shm_guard_install(void);
/* fn(ctx) with [base, base + len) guarded: fn's result (0 or more), or
 * -EFAULT when a SIGBUS in that range cut it short. */
int pl__shm_guard_run(const void *base, size_t len, int (*fn)(void *ctx), void *ctx);

#endif
