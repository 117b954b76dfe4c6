/* Finding the processes started since the last tick. */
#ifndef PL_DAEMON_TRACER_PROCS_FIND_H
#define PL_DAEMON_TRACER_PROCS_FIND_H

#include "procs.h"

/* Add the processes started since the last tick: the pids handed out
 * since (last_pid: loadavg's), looked up or listed at their position, or a
 * scan of the whole directory. 0 or -errno. */
int pl__find_new_pids(struct pl_tprocs *tp, uint64_t tick, uint64_t last_pid);
/* Read the parents of the processes added this tick that may be waiting
 * for them in vfork. */
void pl__find_read_new_parents(struct pl_tprocs *tp, uint64_t tick);

#endif
