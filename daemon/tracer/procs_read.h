/* Reading one process of the table: its run time first, then stat and io
 * only where the run time says they may have changed. */
#ifndef PL_DAEMON_TRACER_PROCS_READ_H
#define PL_DAEMON_TRACER_PROCS_READ_H

#include "procs.h"

/* Can a process's run time be read from its POSIX CPU clock here? */
bool pl__tproc_cpuclock_works(void);
/* A single-threaded process's run time from its CPU clock: 0, or -ESRCH
 * when no process has that pid. */
int pl__tproc_read_cpuclock(int pid, uint64_t *run_ns);

/* Re-read a known process at tick: false when it is gone (the caller
 * drops it). Plans its next reading and puts it in the tick's list. */
bool pl__tproc_reread(struct pl_tprocs *tp, struct pl_tproc *p, uint64_t tick);

/* Add pid as a new entry at tick, read whole. born: its pid was handed out
 * since the last tick. 1 when added, 0 when it is gone, a thread or
 * unreadable, or -errno. */
int pl__tproc_add(struct pl_tprocs *tp, int pid, uint64_t tick, bool born);

#endif
