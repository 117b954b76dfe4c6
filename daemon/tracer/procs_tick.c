/* A tick of the process table. It reads the processes due (procs_plan.h):
 * the watched, those running or in D at their last reading, the hot ones,
 * and a slice of the sleepers; then the parents of those found gone, and
 * the processes started since the last tick. When the system counters say
 * a task may have blocked or written and what was read does not account
 * for it, it reads every sleeper as well. --stat-every-tick, and a
 * recorded tree, read every process every tick. */
#include "procs.h"
#include "procs_find.h"
#include "procs_plan.h"
#include "procs_read.h"

/* Reads p as part of a pass, adding what it found; false when p is gone. */
static bool read_counted(struct pl_tprocs *tp, struct pl_tproc *p, uint64_t tick,
			 struct pl_plan_found *found)
{
	if (!pl__tproc_reread(tp, p, tick))
		return false;
	found->dstate += p->stat_now && p->state == 'D';
	found->flickers += p->stat_now && p->state != 'D' && p->woke_now && p->d_tick &&
			   tick < p->d_tick + PL_PLAN_HOT_TICKS;
	found->dirtied_bytes += p->gap_wbytes > 0 ? (uint64_t)p->gap_wbytes : 0;
	return true;
}

/* A pass over the table, reading those due this tick (all: every one not
 * read yet this tick). */
static void sweep(struct pl_tprocs *tp, uint64_t tick, bool all, struct pl_plan_found *found)
{
	for (size_t i = 0; i < tp->n;) {
		struct pl_tproc_due *d = &tp->due[i];

		if (!all && d->by_slice && d->tick < tick)
			d->tick = pl__plan_slice_turn(d->pid, tick);
		if ((!all && d->tick > tick) || tp->v[i].seen_tick == tick)
			i++;
		else if (read_counted(tp, &tp->v[i], tick, found))
			i++;
		else
			pl__tprocs_drop(tp, i, tick);
	}
}

/* The parents of the processes found gone, read now (asleep in wait(2)
 * they would wait for their slice): the reap put what the child wrote
 * after its last reading into the parent's io, which the tick's dirty
 * balance must weigh. */
static void read_reap_parents(struct pl_tprocs *tp, uint64_t tick, struct pl_plan_found *found)
{
	if (tp->n_reap_parents == 0 || pl__tprocs_rehash(tp) < 0)
		return;
	for (size_t k = 0; k < tp->n_reap_parents; k++) {
		long at = pl__tprocs_lookup(tp, tp->reap_parents[k]);

		if (at < 0 || tp->v[at].seen_tick == tick)
			continue;
		if (!read_counted(tp, &tp->v[at], tick, found)) {
			pl__tprocs_drop(tp, (size_t)at, tick); /* its parent: next tick */
			if (pl__tprocs_rehash(tp) < 0)
				break;
		}
	}
	tp->n_reap_parents = 0;
}

int pl__tprocs_tick(struct pl_tprocs *tp, uint64_t tick, uint64_t last_pid,
		    const struct pl_tprocs_hint *hint)
{
	struct pl_plan_found found = { 0, 0, 0 };
	bool all = tp->cfg.stat_every_tick || !tp->kept;
	int err;

	tp->tick = tick;
	tp->n_new_children = 0;
	tp->n_touched = 0;
	tp->n_reap_parents = 0;
	tp->tail_bytes = 0;
	tp->birth_bytes = 0;
	sweep(tp, tick, all, &found);
	read_reap_parents(tp, tick, &found);
	/* before the weighing: what a process started since the last tick
	 * wrote is found (procs_reap.h) */
	if ((err = pl__find_new_pids(tp, tick, last_pid)) < 0)
		return err;
	found.dirtied_bytes += tp->tail_bytes + tp->birth_bytes;
	if (all) {
		tp->full_sweeps++;
	} else if (pl__plan_full_sweep(tp, tick, hint, &found)) {
		sweep(tp, tick, true, &found);
		tp->full_sweeps++;
		if (hint->procs_blocked >= 0)
			pl__blocked_rule_swept(&tp->blocked_rule, tick, hint->procs_blocked,
					       found.dstate);
		tp->dirty_balance = 0; /* every process has been read */
		tp->dirty_excess = 0;
	}
	/* a recorded tree's scan drops, and its hash is stale */
	if (tp->kept)
		pl__find_read_new_parents(tp, tick);
	tp->n_new_children = 0;
	pl__tprocs_shrink(tp);
	pl__tprocs_touched_sort(tp);
	return 0;
}
