/* The measured path behind the hooks, taken only when profiling is on.
 *
 * For a call that a stage rule names: CLOCK_MONOTONIC and the thread's CPU
 * clock around the real call, what the argument says afterwards (byte
 * counts, the buffer type of a DQBUF), one per-thread record, and the
 * frame count. Calls no rule names go straight through. The call's result
 * and errno are the real call's, whatever happens here.
 *
 * No allocation, no lock, no stdio: async-signal-safe. */
#ifndef PL_PRELOAD_PROFILE_H
#define PL_PRELOAD_PROFILE_H

#include "real.h"

/* Set once by the constructor when PERFLINK_PROFILE=1 and the stage table
 * built; the hooks test it before anything else. */
extern int pl__profile_on;

int pl__profile_ioctl(pl_ioctl_fn real, int fd, pl_ioctl_req req, void *arg, void *site);
int pl__profile_cacheflush(void *addr, int bytes, int cache, void *site);

#endif
