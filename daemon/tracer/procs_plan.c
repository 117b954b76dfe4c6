/* See procs_plan.h; the rules in words are in docs/tracer.md. */
#include "procs_plan.h"
#include "procs_reap.h"

#define DIRTY_FLOOR_BYTES ((int64_t)1 << 20)
/* Pages dirtied by no process read (a writer that exited since its last
 * reading, a kernel thread's metadata): up to this much, over ticks, is
 * left to the slices, which put a sleeper's writes into the tick it is
 * read. */
#define DIRTY_SLACK_BYTES ((int64_t)64 << 10)

uint64_t pl__plan_slice_turn(int pid, uint64_t from)
{
	const unsigned slices = PL_PLAN_SLICES;

	return from + ((unsigned)pid % slices + slices - from % slices) % slices;
}

/* Read at the next tick: a process watched, not asleep at its last reading,
 * hot, or with reaped children's writes to take off its io. Any other is
 * read at its slice's turn and, until then, taken as it was: its state,
 * block-I/O delay and write history (which reads 0 for the ticks since).
 * The tracer itself is taken as asleep: it is running whenever it reads
 * itself. */
void pl__plan_next_read(struct pl_tprocs *tp, size_t i, uint64_t tick)
{
	const struct pl_tproc *p = &tp->v[i];
	struct pl_tproc_due *d = &tp->due[i];
	uint64_t next = tick + 1;

	d->by_slice = !(p->label >= 0 || (!pl__state_sleeping(p->state) && p->pid != tp->self_pid) ||
			next < p->hot_until || pl__reap_pending(p, next));
	d->tick = d->by_slice ? pl__plan_slice_turn(p->pid, next) : next;
}

void pl__plan_read_at(struct pl_tprocs *tp, size_t i, uint64_t tick)
{
	tp->due[i].tick = tick;
	tp->due[i].by_slice = false;
}

/* One seen in D may be again at once (an fsync loop, jbd2); a writer's
 * history must be whole for the bully. */
void pl__plan_mark_hot(struct pl_tproc *p, uint64_t tick)
{
	if (p->state == 'D' || p->gap_wbytes > 0)
		p->hot_until = tick + PL_PLAN_HOT_TICKS;
}

/* The balance is off by what the writers read wrote between the vmstat read
 * and theirs, so its slack grows by a 32nd of what the tick dirtied. Below
 * 0 it goes by direct I/O (counted in write_bytes, no page dirtied) and by
 * a skew the other way, given back the next tick; the floor keeps direct
 * I/O from hiding another writer for more than a tick. */
bool pl__dirty_balance_add(int64_t *balance, int64_t dirtied, int64_t found)
{
	int64_t floor = DIRTY_FLOOR_BYTES + dirtied / 4, b = *balance + dirtied - found;

	*balance = b < -floor ? -floor : b;
	return *balance > DIRTY_SLACK_BYTES + dirtied / 32;
}

/* A writer no process read dirties pages every tick, about as many from one
 * tick to the next. So besides a balance over its slack, the tick's own
 * excess must be over the slack at this tick and the one before, and not
 * fallen to under a quarter since; or at once when both the balance and
 * the excess are over the larger of a MB and a quarter of the tick's
 * dirtied bytes. A skew carried from one tick to the next, or a journal's
 * trickle, then reads no one. */
bool pl__dirty_sweep_due(int64_t *balance, int64_t *last_excess, int64_t dirtied, int64_t found)
{
	int64_t excess = dirtied - found;
	int64_t slack = DIRTY_SLACK_BYTES + dirtied / 32;
	int64_t at_once = DIRTY_SLACK_BYTES + (dirtied / 4 > DIRTY_FLOOR_BYTES ? dirtied / 4
										: DIRTY_FLOOR_BYTES);
	bool over = pl__dirty_balance_add(balance, dirtied, found);
	bool tick_over = excess > slack;
	bool again = *last_excess > 0 && excess > *last_excess / 4;
	bool due = over && tick_over && (again || (*balance > at_once && excess > at_once));

	*last_excess = tick_over ? excess : 0;
	return due;
}

/* /proc/stat's procs_blocked is read a little before the first pass reads
 * its processes. More blocked tasks than the pass found in D is most often
 * a task read this tick that left a short wait in between, or a thread
 * whose leader is not in D. So when the excess may be explained (flickers,
 * or what the last sweep, a tick ago, could not find either), the sweep
 * waits a tick, never two in a row: a wait of two ticks or more is still
 * read. An excess nothing explains reads them all at once. */
bool pl__blocked_rule_sweep(struct pl_blocked_rule *r, uint64_t tick, int64_t procs_blocked,
			    int64_t found_d, int64_t flickers)
{
	int64_t excess = procs_blocked - found_d, explained = flickers;

	if (excess <= 0)
		return false;
	if (r->swept_tick && r->swept_tick + 1 == tick)
		explained += r->unfound;
	if (excess > explained || (r->deferred_tick && r->deferred_tick + 1 == tick))
		return true;
	r->deferred_tick = tick;
	return false;
}

void pl__blocked_rule_swept(struct pl_blocked_rule *r, uint64_t tick, int64_t procs_blocked,
			    int64_t found_d)
{
	r->swept_tick = tick;
	r->unfound = procs_blocked > found_d ? procs_blocked - found_d : 0;
}

/* Only when a task may have blocked or written (the hint), and the first
 * pass does not account for it: the kernel counts more tasks in an I/O wait
 * than it found in D, or (naming the bully) more pages dirtied than the
 * processes it read wrote. A count that is not known says yes. */
bool pl__plan_full_sweep(struct pl_tprocs *tp, uint64_t tick, const struct pl_tprocs_hint *h,
			 const struct pl_plan_found *found)
{
	bool writes_unexplained = true;

	if (h->dirtied_bytes >= 0)
		writes_unexplained = pl__dirty_sweep_due(&tp->dirty_balance, &tp->dirty_excess,
							 h->dirtied_bytes, (int64_t)found->dirtied_bytes);
	if (!h->maybe_blocked)
		return false;
	if (tp->cfg.track_writers && writes_unexplained) {
		tp->dirty_sweeps++;
		return true;
	}
	if (h->procs_blocked < 0)
		return true;
	/* put off a tick, a 200 ms wait must still span two ticks */
	if (!(tp->cfg.interval_ms > 0 && tp->cfg.interval_ms <= 100))
		return h->procs_blocked > found->dstate;
	return pl__blocked_rule_sweep(&tp->blocked_rule, tick, h->procs_blocked, found->dstate,
				      found->flickers);
}
