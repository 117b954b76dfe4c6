/* See procs_reap.h. */
#include "procs_reap.h"
#include "procs_plan.h"

#define REAP_TICKS 3 /* a reaped child shows in its parent's io within this */

static uint64_t take(uint64_t *credit, int64_t *gap)
{
	uint64_t t = *gap > 0 ? (uint64_t)*gap : 0;

	if (t > *credit)
		t = *credit;
	*credit -= t;
	*gap -= (int64_t)t;
	return t;
}

/* The exited writer pid among the recent ones kept, or NULL. */
static struct pl_writes *gone_writer(struct pl_tprocs *tp, int pid)
{
	for (size_t i = 0; i < PL_WRITES_GONE; i++) {
		if (tp->gone.e[i].used && tp->gone.e[i].pid == pid)
			return &tp->gone.e[i].w;
	}
	return NULL;
}

/* What a child was last read to have written is known, and taken off the
 * parent's jump. What it wrote after that reading and before it exited (up
 * to a tick of a dd writing at memory speed) is in the jump too: that rest
 * goes to the last child reaped, while it is kept among the recent writers
 * that exited, and is no one's otherwise; never the parent's, which would
 * make a shell the bully of its dd.
 * On a live /proc, a reading after the children were found gone has the
 * whole jump: a child's kept fd fails only once it is released, and a
 * parent adds a child's io before it releases it. So that reading settles
 * the parent. */
void pl__reap_settle(struct pl_tprocs *tp, struct pl_tproc *p, uint64_t tick, bool read_since)
{
	struct pl_writes *child;

	if (!p->reap_wbytes && !p->reap_wchar && !p->reap_pid)
		return;
	if (tick > p->reap_tick + REAP_TICKS) {
		p->reap_wbytes = p->reap_wchar = p->reap_rbytes = 0;
		p->reap_pid = 0;
		return;
	}
	if (p->io_tick != tick)
		return;
	take(&p->reap_wbytes, &p->gap_wbytes);
	take(&p->reap_wchar, &p->gap_wchar);
	take(&p->reap_rbytes, &p->gap_rbytes);
	if (p->reap_pid && p->gap_wbytes > 0 && p->reap_wbytes == 0) {
		if ((child = gone_writer(tp, p->reap_pid)) != NULL && child->last_tick < tick)
			pl__writes_put(child, tick, p->gap_wbytes,
				       p->gap_wchar > 0 ? p->gap_wchar : 0);
		tp->tail_bytes += p->gap_wbytes; /* dirtied this tick, and now found */
		p->gap_wbytes = 0;
		p->gap_wchar = p->gap_wchar > 0 ? 0 : p->gap_wchar;
		p->reap_pid = 0;
	}
	pl__tproc_put_writes(p, tick);
	if (read_since && tp->kept) {
		p->reap_wbytes = p->reap_wchar = p->reap_rbytes = 0;
		p->reap_pid = 0;
	}
}

bool pl__reap_pending(const struct pl_tproc *p, uint64_t tick)
{
	return tick <= p->reap_tick + REAP_TICKS && (p->reap_wbytes || p->reap_wchar || p->reap_pid);
}

/* The parent is read within REAP_TICKS, asleep or not: this tick before the
 * dirty balance is weighed (reap_parents), or, already read, again. */
void pl__reap_credit_parent(struct pl_tprocs *tp, const struct pl_tproc *child, uint64_t tick)
{
	if (!child->io_tick || child->ppid <= 0)
		return;
	for (size_t i = 0; i < tp->n; i++) {
		struct pl_tproc *q = &tp->v[i];

		if (tp->due[i].pid != child->ppid)
			continue;
		q->reap_wbytes += child->wbytes;
		q->reap_wchar += child->wchar;
		q->reap_rbytes += child->rbytes;
		q->reap_tick = tick;
		q->reap_pid = child->pid;
		if (q->seen_tick == tick) {
			pl__reap_settle(tp, q, tick, false);
			pl__plan_next_read(tp, i, tick);
		} else {
			pl__plan_read_at(tp, i, tick);
			if (tp->n_reap_parents < sizeof(tp->reap_parents) / sizeof(tp->reap_parents[0]))
				tp->reap_parents[tp->n_reap_parents++] = q->pid;
		}
		return;
	}
}

/* The pid range alone proves the birth; a start time over a second old
 * (pids wrapped) is not believed. Its dirtied pages count as found in the
 * tick's dirty balance (birth_bytes). */
void pl__reap_credit_birth(struct pl_tprocs *tp, struct pl_tproc *p)
{
	double per_tick_ms = 1000.0 / (double)tp->cfg.clk_tck;
	double age_ms = tp->now_ms - (double)p->starttime * per_tick_ms;

	if (!p->io_now || age_ms > 1000.0)
		return;
	p->gap_wbytes = (int64_t)p->wbytes;
	p->gap_wchar = (int64_t)p->wchar;
	p->gap_rbytes = (int64_t)p->rbytes;
	if (p->rss_kb > 0)
		p->gap_rss_kb = p->rss_kb;
	tp->birth_bytes += (uint64_t)p->gap_wbytes;
}
