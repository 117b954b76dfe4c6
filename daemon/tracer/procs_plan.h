/* When each process is read next, and when a tick reads them all (the
 * invariants are in docs/tracer.md, "Which processes a tick reads"). */
#ifndef PL_DAEMON_TRACER_PROCS_PLAN_H
#define PL_DAEMON_TRACER_PROCS_PLAN_H

#include "procs.h"

/* Sleeping processes are read in turns of this many ticks, by pid. */
#define PL_PLAN_SLICES 10
/* Lately in D or dirtying pages: read every tick for this many. */
#define PL_PLAN_HOT_TICKS 10

/* The first tick from from on that is pid's slice's turn. */
uint64_t pl__plan_slice_turn(int pid, uint64_t from);
/* Entry i was read at tick: set when it must be read next. */
void pl__plan_next_read(struct pl_tprocs *tp, size_t i, uint64_t tick);
/* Read entry i at tick whatever its plan. */
void pl__plan_read_at(struct pl_tprocs *tp, size_t i, uint64_t tick);
/* p was read at tick: in D or writing, it is hot for PL_PLAN_HOT_TICKS. */
void pl__plan_mark_hot(struct pl_tproc *p, uint64_t tick);

/* What the first pass of a tick found among the processes it read. */
struct pl_plan_found {
	int64_t dstate;          /* in D now */
	int64_t flickers;        /* not in D, but lately, and ran since the last reading */
	uint64_t dirtied_bytes;  /* write_bytes since their last reading */
};
/* After the first pass: must the sleeping processes be read too? */
bool pl__plan_full_sweep(struct pl_tprocs *tp, uint64_t tick, const struct pl_tprocs_hint *h,
			 const struct pl_plan_found *found);

/* The dirty balance: add a tick (bytes vmstat counts dirtied, and those
 * the processes read wrote: found); true when over its slack. */
bool pl__dirty_balance_add(int64_t *balance, int64_t dirtied, int64_t found);
/* Whether the balance says to read every process this tick. last_excess:
 * the last tick's excess when it was over its slack, else 0 (kept by the
 * caller). */
bool pl__dirty_sweep_due(int64_t *balance, int64_t *last_excess, int64_t dirtied, int64_t found);

/* The blocked count: the tick's procs_blocked (>= 0) against found_d, the D
 * states the first pass found, and flickers (above). True: read them all;
 * then call pl__blocked_rule_swept. */
bool pl__blocked_rule_sweep(struct pl_blocked_rule *r, uint64_t tick, int64_t procs_blocked,
			    int64_t found_d, int64_t flickers);
void pl__blocked_rule_swept(struct pl_blocked_rule *r, uint64_t tick, int64_t procs_blocked,
			    int64_t found_d);

#endif
