/* See stall_detect.h.
 *
 * The rules.
 *
 * Episode. A watched process opens an episode in the first tick where it is
 * sampled in D state or its block-I/O delay in the tick exceeds blkio_ms.
 * The episode stays open while either holds and closes in the first tick
 * where neither does; that closing tick still counts, because the kernel
 * adds a block-I/O wait to the delay total when the task wakes up, which is
 * the tick it leaves D. An episode is reported when it closes if it
 * qualified: some tick's delay exceeded blkio_ms, or consecutive D samples
 * spanned at least dstate_ms (two samples at 10 Hz span 100 ms; D samples
 * alone cannot tell one long D from back-to-back short ones). One that is
 * still open after PL_STALL_RING - 4 ticks is reported as ongoing and goes
 * on with a new window.
 *
 * D time. Consecutive D samples are one wait only if the task did not run
 * between them (its schedstat did not change) and no block-I/O wait of its
 * ended (its delay total did not grow): dstate_longest_ms is the longest
 * span of such samples, a lower bound of the longest single wait. A fsync
 * loop sampled in D four times in a row, in four short fsyncs, has 0 there
 * and 300 in dstate_sum_ms, the spans of the runs of D samples added up.
 * dstate_ms, the longest span of one run of D samples, is kept as it was
 * for readers of older events files. Without schedstat only the delay
 * total tells two waits apart.
 *
 * Window. From the earliest the stall can have begun to the closing tick:
 * a delay of B ms that ended in a tick began at least B ms before it, a D
 * run began after the sample before its first D sample.
 *
 * Mechanism, from the system counters summed over the window (every rule
 * that matches is listed; the first in this order is "mechanism"):
 *   compaction       compact_stall rose: an allocation waited for direct
 *                    compaction.
 *   direct_reclaim   allocstall* rose: an allocation reclaimed memory itself.
 *   dirty_writeback  Dirty+Writeback reached the background writeback
 *                    threshold (vm.dirty_background_bytes, or
 *                    dirty_background_ratio of MemAvailable) at some tick,
 *                    so the flusher is writing and writers get throttled;
 *                    or at least 8 MB were under writeback (more than a
 *                    small fsync of the victim's own) while the disks were
 *                    busy at least half the window.
 *   disk_saturation  none of the above, and the disks were busy at least 80%
 *                    of the window: the queue itself is the bottleneck (for
 *                    example direct I/O, which never shows up as dirty
 *                    pages).
 *   unknown          nothing above matched.
 * Bully: the processes other than the victim with the most write_bytes
 * (bytes sent to the block layer on their behalf) over the bully window,
 * then the most wchar (bytes passed to write()), at most three. The bully
 * window is the stall window widened to at least 5 s (PL_STALL_BULLY_MS):
 * write_bytes is counted when pages are dirtied, and a writeback stall
 * comes seconds after the dirtying. A process that was itself blocked in
 * the stall window (sampled in D, or a block-I/O wait of its ended) waited
 * on the same mechanism the window's counters point to, and if it wrote no
 * more than the victim it is another victim, not a bully: when dd is the
 * victim of its own fdatasync, the fsync loop stuck behind it is not named.
 * A blocked process that wrote more stays a candidate: dd in its own
 * fdatasync is still the bully of the fsync loop. */
#include "stall_detect.h"

#include <math.h>
#include <string.h>

static uint32_t sat32(int64_t v)
{
	if (v <= 0)
		return 0;
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

void pl__writes_reset(struct pl_writes *w, uint64_t tick)
{
	memset(w, 0, sizeof(*w));
	w->first_tick = tick;
	w->last_tick = tick ? tick - 1 : 0;
}

void pl__writes_put(struct pl_writes *w, uint64_t tick, int64_t d_wbytes, int64_t d_wchar)
{
	size_t i = tick % PL_STALL_RING;

	/* Ticks skipped since the last put wrote nothing. */
	for (uint64_t t = w->last_tick + 1; t < tick && t + PL_STALL_RING > tick; t++) {
		w->wbytes[t % PL_STALL_RING] = 0;
		w->wchar[t % PL_STALL_RING] = 0;
	}
	if (tick >= w->last_tick + PL_STALL_RING)
		w->blocked = 0;
	for (uint64_t t = w->last_tick + 1; t <= tick && w->blocked; t++)
		w->blocked &= ~((uint64_t)1 << (t % PL_STALL_RING));
	w->wbytes[i] = sat32(d_wbytes);
	w->wchar[i] = sat32(d_wchar);
	w->last_tick = tick;
	if (tick >= w->first_tick + PL_STALL_RING)
		w->first_tick = tick - PL_STALL_RING + 1;
}

void pl__writes_mark_blocked(struct pl_writes *w, uint64_t tick)
{
	if (tick == w->last_tick)
		w->blocked |= (uint64_t)1 << (tick % PL_STALL_RING);
}

/* Ticks [from, to] clipped to what the ring holds: from > to when none. */
static void clip_to_ring(const struct pl_writes *w, uint64_t *from, uint64_t *to)
{
	if (*from < w->first_tick)
		*from = w->first_tick;
	if (*to > w->last_tick)
		*to = w->last_tick;
	if (*to >= *from + PL_STALL_RING)
		*from = *to - PL_STALL_RING + 1;
}

bool pl__writes_blocked(const struct pl_writes *w, uint64_t from, uint64_t to)
{
	clip_to_ring(w, &from, &to);
	for (uint64_t t = from; t <= to && t >= from; t++) {
		if (w->blocked & ((uint64_t)1 << (t % PL_STALL_RING)))
			return true;
	}
	return false;
}

void pl__writes_sum(const struct pl_writes *w, uint64_t from, uint64_t to, uint64_t *wbytes,
		    uint64_t *wchar)
{
	uint64_t t;

	*wbytes = 0;
	*wchar = 0;
	clip_to_ring(w, &from, &to);
	for (t = from; t <= to && t >= from; t++) {
		*wbytes += w->wbytes[t % PL_STALL_RING];
		*wchar += w->wchar[t % PL_STALL_RING];
	}
}

static uint64_t recent_weight(const struct pl_writes *w, uint64_t now_tick)
{
	uint64_t wb, wc;

	pl__writes_sum(w, now_tick >= PL_STALL_RING ? now_tick - PL_STALL_RING + 1 : 0, now_tick,
		       &wb, &wc);
	return wb + wc / 16;
}

void pl__writes_gone_add(struct pl_writes_gone *g, int pid, const char *comm,
			 const struct pl_writes *w, uint64_t now_tick)
{
	uint64_t mine = recent_weight(w, now_tick), least = UINT64_MAX;
	size_t i, slot = PL_WRITES_GONE;

	if (mine == 0)
		return;
	for (i = 0; i < PL_WRITES_GONE; i++) {
		uint64_t theirs;

		if (!g->e[i].used) {
			slot = i;
			break;
		}
		theirs = recent_weight(&g->e[i].w, now_tick);
		if (theirs < least) {
			least = theirs;
			slot = i;
		}
	}
	if (i == PL_WRITES_GONE && least >= mine)
		return;
	g->e[slot].used = true;
	g->e[slot].pid = pid;
	strncpy(g->e[slot].comm, comm, sizeof(g->e[slot].comm) - 1);
	g->e[slot].comm[sizeof(g->e[slot].comm) - 1] = '\0';
	g->e[slot].w = *w;
}

void pl__stall_history_put(struct pl_stall_history *h, const struct pl_stall_sys *s)
{
	h->t[s->tick % PL_STALL_RING] = *s;
	if (h->last_tick == 0 || s->tick < h->first_tick)
		h->first_tick = s->tick;
	else if (s->tick >= h->first_tick + PL_STALL_RING)
		h->first_tick = s->tick - PL_STALL_RING + 1;
	h->last_tick = s->tick;
}

/* The runs of D samples this sample extends or starts. d_step_ms: what it
 * adds to the run of D samples; c_ms: the span of the run the task stayed
 * asleep through. */
static double track_d_runs(struct pl_stall_victim *v, bool in_d, bool woke, double mono,
			   double *d_step_ms, double *c_ms)
{
	*d_step_ms = *c_ms = 0;
	if (!in_d) {
		v->d_run = v->c_run = false;
		return 0;
	}
	if (!v->d_run) {
		v->d_run = true;
		v->d_first_mono = v->d_last_mono = mono;
	}
	if (!v->c_run || woke) {
		v->c_run = true;
		v->c_first_mono = mono;
	}
	*d_step_ms = (mono - v->d_last_mono) * 1000.0;
	*c_ms = (mono - v->c_first_mono) * 1000.0;
	v->d_last_mono = mono;
	return mono - v->d_first_mono;
}

enum pl_stall_verdict pl__stall_update(struct pl_stall_victim *v, const struct pl_stall_cfg *cfg,
				       uint64_t tick, double mono, char state, double d_blk_ms,
				       bool woke)
{
	bool in_d = state == 'D';
	bool blk_trig = d_blk_ms > cfg->blkio_ms;
	double d_step_ms, c_ms;
	double d_ms = track_d_runs(v, in_d, woke, mono, &d_step_ms, &c_ms);

	if (!v->open) {
		if (!in_d && !blk_trig)
			return PL_STALL_NONE;
		v->open = true;
		v->qualified = false;
		v->start_tick = tick;
		v->start_mono = mono - cfg->interval_ms / 1000.0;
		v->blkio_ms = 0;
		v->dstate_ms = v->dstate_longest_ms = v->dstate_sum_ms = 0;
	}
	if (d_blk_ms > 0) {
		v->blkio_ms += d_blk_ms;
		if (mono - d_blk_ms / 1000.0 < v->start_mono)
			v->start_mono = mono - d_blk_ms / 1000.0;
	}
	if (in_d && d_ms * 1000.0 > v->dstate_ms)
		v->dstate_ms = d_ms * 1000.0;
	if (c_ms > v->dstate_longest_ms)
		v->dstate_longest_ms = c_ms;
	v->dstate_sum_ms += d_step_ms;
	/* A tenth of a tick of slack: samples 99.7 ms apart are 100 ms of D. */
	if (blk_trig || (in_d && d_ms * 1000.0 >= cfg->dstate_ms - cfg->interval_ms / 10))
		v->qualified = true;
	if (!in_d && !blk_trig) {
		if (v->qualified)
			return PL_STALL_EMIT;
		v->open = false;
		return PL_STALL_NONE;
	}
	if (v->qualified && tick + 1 >= v->start_tick + PL_STALL_RING - 4)
		return PL_STALL_EMIT_ONGOING;
	return PL_STALL_NONE;
}

void pl__stall_victim_rearm(struct pl_stall_victim *v, enum pl_stall_verdict verdict,
			    uint64_t tick, double mono)
{
	if (verdict != PL_STALL_EMIT_ONGOING) {
		struct pl_stall_victim runs = *v;

		memset(v, 0, sizeof(*v));
		v->d_run = runs.d_run;
		v->d_first_mono = runs.d_first_mono;
		v->d_last_mono = runs.d_last_mono;
		v->c_run = runs.c_run;
		v->c_first_mono = runs.c_first_mono;
		return;
	}
	v->start_tick = tick + 1;
	v->start_mono = mono;
	v->blkio_ms = 0;
	v->dstate_sum_ms = 0;
	v->qualified = false;
}

uint64_t pl__stall_window_ticks(const struct pl_stall_victim *v, const struct pl_stall_cfg *cfg,
				uint64_t tick, double mono)
{
	double span_ms = (mono - v->start_mono) * 1000.0;
	double n = cfg->interval_ms > 0 ? ceil(span_ms / cfg->interval_ms - 1e-6) : 1;
	uint64_t ticks;

	if (!(n >= 1))
		n = 1;
	ticks = n > PL_STALL_RING ? PL_STALL_RING : (uint64_t)n;
	if (tick - v->start_tick + 1 > ticks)
		ticks = tick - v->start_tick + 1;
	if (ticks > PL_STALL_RING)
		ticks = PL_STALL_RING;
	if (ticks > tick)
		ticks = tick;
	return ticks ? ticks : 1;
}

static double psi_delta_ms(uint64_t a, uint64_t b)
{
	return b >= a ? (double)(b - a) / 1000.0 : 0;
}

void pl__stall_window(const struct pl_stall_history *h, uint64_t from_tick, uint64_t to_tick,
		      double interval_ms, struct pl_stall_window *out)
{
	const struct pl_stall_sys *first = NULL, *last = NULL, *before = NULL;
	uint64_t t;

	memset(out, 0, sizeof(*out));
	if (h->last_tick == 0)
		return;
	if (to_tick > h->last_tick)
		to_tick = h->last_tick;
	if (from_tick < h->first_tick)
		from_tick = h->first_tick;
	out->from_tick = from_tick;
	out->to_tick = to_tick;
	out->have_psi_io = out->have_psi_mem = true;
	for (t = from_tick; t <= to_tick && t >= from_tick; t++) {
		const struct pl_stall_sys *s = &h->t[t % PL_STALL_RING];
		uint64_t dw;

		if (s->tick != t)
			continue;
		if (!first)
			first = s;
		last = s;
		out->compact_stall += s->d_compact;
		out->allocstall += s->d_alloc;
		if (s->have_disk) {
			out->have_disk = true;
			out->disk_busy_ms += s->disk_busy_ms;
			out->disk_write_kb += s->disk_write_kb;
		}
		dw = s->dirty_kb + s->writeback_kb;
		if (s->dirty_kb > out->dirty_kb_max)
			out->dirty_kb_max = s->dirty_kb;
		if (s->writeback_kb > out->writeback_kb_max)
			out->writeback_kb_max = s->writeback_kb;
		if (dw > out->dirty_writeback_kb_max)
			out->dirty_writeback_kb_max = dw;
		out->have_psi_io &= s->have_psi_io;
		out->have_psi_mem &= s->have_psi_mem;
	}
	if (!first) {
		out->have_psi_io = out->have_psi_mem = false;
		return;
	}
	if (from_tick > h->first_tick) {
		before = &h->t[(from_tick - 1) % PL_STALL_RING];
		if (before->tick != from_tick - 1)
			before = NULL;
	}
	/* The window runs from the sample before its first tick. */
	if (before)
		out->span_ms = (last->mono - before->mono) * 1000.0;
	else
		out->span_ms = (last->mono - first->mono) * 1000.0 + interval_ms;
	if (!before)
		before = first; /* PSI totals: count from the first sample */
	out->psi_io = last->psi_io;
	out->psi_mem = last->psi_mem;
	if (out->have_psi_io && before->have_psi_io) {
		out->psi_io_some_ms = psi_delta_ms(before->psi_io.some.total_us,
						   last->psi_io.some.total_us);
		out->psi_io_full_ms = psi_delta_ms(before->psi_io.full.total_us,
						   last->psi_io.full.total_us);
	}
	if (out->have_psi_mem && before->have_psi_mem) {
		out->psi_mem_some_ms = psi_delta_ms(before->psi_mem.some.total_us,
						    last->psi_mem.some.total_us);
		out->psi_mem_full_ms = psi_delta_ms(before->psi_mem.full.total_us,
						    last->psi_mem.full.total_us);
	}
}

unsigned pl__stall_classify(const struct pl_stall_window *w)
{
	unsigned m = 0;

	if (w->compact_stall > 0)
		m |= PL_MECH_COMPACTION;
	if (w->allocstall > 0)
		m |= PL_MECH_DIRECT_RECLAIM;
	if ((w->dirty_bg_thresh_kb > 0 && w->dirty_writeback_kb_max >= w->dirty_bg_thresh_kb) ||
	    (w->writeback_kb_max >= 8192 && w->have_disk && w->span_ms > 0 &&
	     w->disk_busy_ms >= 0.5 * w->span_ms))
		m |= PL_MECH_DIRTY_WRITEBACK;
	if (m == 0 && w->have_disk && w->span_ms > 0 && w->disk_busy_ms >= 0.8 * w->span_ms)
		m |= PL_MECH_DISK_SATURATION;
	return m;
}

static const char *const mech_names[] = { "compaction", "direct_reclaim", "dirty_writeback",
					  "disk_saturation" };

const char *pl__stall_mechanism_name(unsigned mechs)
{
	for (unsigned i = 0; i < 4; i++) {
		if (mechs & (1u << i))
			return mech_names[i];
	}
	return "unknown";
}

bool pl__stall_fellow_victim(bool blocked, uint64_t wbytes, uint64_t wchar,
			     uint64_t victim_wbytes, uint64_t victim_wchar)
{
	return blocked && (wbytes < victim_wbytes ||
			   (wbytes == victim_wbytes && wchar <= victim_wchar));
}

void pl__stall_bully_offer(struct pl_stall_bully *top, size_t *n, int pid, const char *comm,
			   uint64_t wbytes, uint64_t wchar, bool exited)
{
	size_t i, pos;

	if (wbytes == 0 && wchar == 0)
		return;
	for (pos = 0; pos < *n; pos++) {
		if (wbytes > top[pos].wbytes ||
		    (wbytes == top[pos].wbytes && wchar > top[pos].wchar))
			break;
	}
	if (pos >= PL_STALL_BULLIES)
		return;
	i = *n < PL_STALL_BULLIES ? *n : PL_STALL_BULLIES - 1;
	for (; i > pos; i--)
		top[i] = top[i - 1];
	top[pos].pid = pid;
	strncpy(top[pos].comm, comm, sizeof(top[pos].comm) - 1);
	top[pos].comm[sizeof(top[pos].comm) - 1] = '\0';
	top[pos].wbytes = wbytes;
	top[pos].wchar = wchar;
	top[pos].exited = exited;
	if (*n < PL_STALL_BULLIES)
		(*n)++;
}

static void psi_json(struct pl_json *j, const char *key, bool have, const struct pl_psi *p,
		     double some_ms, double full_ms)
{
	if (!have) {
		pl__json_null(j, key);
		return;
	}
	pl__json_begin_object(j, key);
	pl__json_double(j, "some_avg10", p->some.avg10, 2);
	if (p->has_full)
		pl__json_double(j, "full_avg10", p->full.avg10, 2);
	else
		pl__json_null(j, "full_avg10");
	pl__json_double(j, "some_ms", some_ms, 1);
	pl__json_double(j, "full_ms", full_ms, 1);
	pl__json_end_object(j);
}

static uint64_t stall_start_ns(const struct pl_stall_event *e)
{
	double start = e->mono - e->window_ms / 1e3;

	return start > 0 ? (uint64_t)(start * 1e9) : 0;
}

const char *pl__stall_event_json(struct pl_json *j, const struct pl_stall_event *e)
{
	const struct pl_stall_window *w = &e->win;
	size_t i;

	pl__json_reset(j);
	pl__json_begin_object(j, NULL);
	pl__json_str(j, "type", "stall");
	pl__json_double(j, "wall", e->wall, 3);
	pl__json_double(j, "mono", e->mono, 3);
	/* the stall window on the device's clock, in ns like every other
	 * perflink time (mono and window_ms stay for the Python tool's readers) */
	pl__json_u64(j, "start_mono_ns", stall_start_ns(e));
	pl__json_u64(j, "end_mono_ns", e->mono > 0 ? (uint64_t)(e->mono * 1e9) : 0);
	pl__json_begin_object(j, "victim");
	pl__json_i64(j, "pid", e->pid);
	pl__json_str(j, "comm", e->comm);
	pl__json_str(j, "label", e->label);
	pl__json_double(j, "d_wbytes_kB", (double)e->victim_wbytes / 1024.0, 1);
	pl__json_double(j, "d_wchar_kB", (double)e->victim_wchar / 1024.0, 1);
	pl__json_end_object(j);
	pl__json_bool(j, "ongoing", e->ongoing);
	pl__json_double(j, "blkio_ms", e->blkio_ms, 0);
	pl__json_double(j, "dstate_ms", e->dstate_ms, 0);
	pl__json_double(j, "dstate_longest_ms", e->dstate_longest_ms, 0);
	pl__json_double(j, "dstate_sum_ms", e->dstate_sum_ms, 0);
	pl__json_double(j, "window_ms", e->window_ms, 0);
	pl__json_double(j, "bully_window_ms", e->bully_window_ms, 0);
	pl__json_begin_array(j, "bully");
	for (i = 0; i < e->nbully; i++) {
		pl__json_begin_object(j, NULL);
		pl__json_i64(j, "pid", e->bully[i].pid);
		pl__json_str(j, "comm", e->bully[i].comm);
		pl__json_double(j, "d_wbytes_kB", (double)e->bully[i].wbytes / 1024.0, 1);
		pl__json_double(j, "d_wchar_kB", (double)e->bully[i].wchar / 1024.0, 1);
		pl__json_bool(j, "exited", e->bully[i].exited);
		pl__json_end_object(j);
	}
	pl__json_end_array(j);
	pl__json_str(j, "mechanism", pl__stall_mechanism_name(e->mechs));
	pl__json_begin_array(j, "mechanisms");
	for (i = 0; i < 4; i++) {
		if (e->mechs & (1u << i))
			pl__json_str(j, NULL, mech_names[i]);
	}
	pl__json_end_array(j);
	pl__json_begin_object(j, "counters");
	pl__json_i64(j, "compact_stall", w->compact_stall);
	pl__json_i64(j, "allocstall", w->allocstall);
	if (w->have_disk) {
		pl__json_double(j, "disk_busy_ms", w->disk_busy_ms, 0);
		pl__json_double(j, "disk_write_kB", w->disk_write_kb, 0);
	} else {
		pl__json_null(j, "disk_busy_ms");
		pl__json_null(j, "disk_write_kB");
	}
	pl__json_u64(j, "dirty_kB_max", w->dirty_kb_max);
	pl__json_u64(j, "writeback_kB_max", w->writeback_kb_max);
	if (w->dirty_bg_thresh_kb)
		pl__json_u64(j, "dirty_bg_thresh_kB", w->dirty_bg_thresh_kb);
	else
		pl__json_null(j, "dirty_bg_thresh_kB");
	if (w->dirty_thresh_kb)
		pl__json_u64(j, "dirty_thresh_kB", w->dirty_thresh_kb);
	else
		pl__json_null(j, "dirty_thresh_kB");
	pl__json_end_object(j);
	pl__json_begin_object(j, "psi");
	psi_json(j, "io", w->have_psi_io, &w->psi_io, w->psi_io_some_ms, w->psi_io_full_ms);
	psi_json(j, "memory", w->have_psi_mem, &w->psi_mem, w->psi_mem_some_ms,
		 w->psi_mem_full_ms);
	pl__json_end_object(j);
	pl__json_double(j, "sampler_ms", e->sampler_ms, 3);
	pl__json_double(j, "sampler_ms_p99", e->sampler_ms_p99, 3);
	pl__json_end_object(j);
	return pl__json_finish(j);
}
