/* Writes that the kernel moves between processes: a parent's io counts its
 * reaped children's (wait_task_zombie adds them), and a new process's
 * counters start at 0 at fork. Both are put where the bully history needs
 * them: a reaped child's writes on the child, a new process's on itself. */
#ifndef PL_DAEMON_TRACER_PROCS_REAP_H
#define PL_DAEMON_TRACER_PROCS_REAP_H

#include "procs.h"

/* child is being dropped at tick: its parent will show its writes. */
void pl__reap_credit_parent(struct pl_tprocs *tp, const struct pl_tproc *child, uint64_t tick);
/* Take the reaped children's writes off p's history at tick. read_since:
 * p's io was read after the children were found gone. */
void pl__reap_settle(struct pl_tprocs *tp, struct pl_tproc *p, uint64_t tick, bool read_since);
/* p has reaped children's writes still to take off at tick. */
bool pl__reap_pending(const struct pl_tproc *p, uint64_t tick);
/* p was born since the last tick: all its io counters hold it wrote since. */
void pl__reap_credit_birth(struct pl_tprocs *tp, struct pl_tproc *p);

#endif
