/* The CSV's deltas as io_stall_tracer.py computes them.
 *
 * Python keeps, per pid, the counters (wchar, write_bytes, blkio ticks) of
 * the last sample it used, and a row's deltas count from there. It uses a
 * sample when it can read both stat and io and the process is watched, or
 * any other process in D state. So a watched process counts from the
 * previous tick, but an unwatched one that goes back to D after seconds
 * asleep counts everything since its last D sample, and its first D sample
 * ever has deltas of 0. Python forgets a pid only when its map holds more
 * than 4000 pids (dead ones included): it then keeps the pids it used in
 * that tick and drops the rest.
 *
 * One difference is kept on purpose: a reused pid is another process here
 * (procs.h keys by starttime) and starts with deltas of 0, where
 * Python would count it against the dead process's counters.
 *
 * The stall detector and the bully history keep their own per-reading
 * deltas (d_blk_ms, gap_wbytes and gap_wchar of pl_tproc). */
#include "tracer_csv.h"

#define PYTHON_PRUNE_PIDS 4000 /* len(prev_io) > 4000 in io_stall_tracer.py */

static bool python_uses(const struct pl_tproc *p)
{
	return p->stat_now && p->io_now && (p->label >= 0 || p->state == 'D');
}

/* Only the processes read this tick can be used (the others were not read:
 * Python would have read them, but not used a sample of an unwatched
 * process out of D); a csv.now of one not read is last tick's. */
void pl__tbaseline_tick(struct pl_tprocs *tp)
{
	double ms_per_tick = 1000.0 / (double)tp->cfg.clk_tck;
	uint64_t used = 0;
	size_t i;

	for (size_t k = 0; k < tp->n_touched; k++) {
		struct pl_tproc *p = &tp->v[tp->touched[k]];
		struct pl_csv_base *b = &p->csv;
		uint64_t blkio = p->has_blkio && !tp->cfg.no_blkio ? p->blkio_ticks : 0;

		b->now = python_uses(p);
		b->d_wchar = b->d_wbytes = 0;
		b->d_blk_ms = 0;
		if (!b->now)
			continue;
		used++;
		if (b->have) {
			b->d_wchar = (int64_t)(p->wchar - b->wchar);
			b->d_wbytes = (int64_t)(p->wbytes - b->wbytes);
			b->d_blk_ms = (double)(int64_t)(blkio - b->blkio_ticks) * ms_per_tick;
		} else {
			b->have = true;
			tp->csv_bases++;
		}
		b->wchar = p->wchar;
		b->wbytes = p->wbytes;
		b->blkio_ticks = blkio;
	}
	if (tp->csv_bases <= PYTHON_PRUNE_PIDS)
		return;
	for (i = 0; i < tp->n; i++) {
		if (tp->v[i].touch_tick != tp->tick || !tp->v[i].csv.now)
			tp->v[i].csv.have = false;
	}
	tp->csv_bases = used;
}
