/* See stall_detect.h. The rules (an episode and what raises it, D time,
 * the window, the mechanism and the bully) are written out once, in
 * docs/tracer.md, "The events file": this is them in code, in that order. */
#include "stall_detect.h"

#include <math.h>
#include <string.h>

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
		v->wchan_kinds = 0;
		v->wchan[0] = '\0';
		v->raised = 0;
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
	/* One wait, not a run of short ones back to back (a fsync loop's);
	 * a tenth of a tick of slack: samples 99.7 ms apart are 100 ms of D. */
	if (blk_trig)
		v->raised |= PL_RAISED_BLKIO;
	if (in_d && c_ms >= cfg->dstate_ms - cfg->interval_ms / 10)
		v->raised |= PL_RAISED_DSTATE;
	else if (in_d && !cfg->dstate_one_wait &&
		 d_ms * 1000.0 >= cfg->dstate_ms - cfg->interval_ms / 10)
		v->raised |= PL_RAISED_DSTATE_RUN;
	if (v->raised)
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
	v->wchan_kinds = 0;
	v->wchan[0] = '\0';
	v->dstate_sum_ms = 0;
	v->qualified = false;
	v->raised = 0;
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

/* One tick's dirty pages against the kernel's thresholds, and what was
 * written back. */
static void window_dirty(struct pl_stall_window *out, const struct pl_stall_sys *s)
{
	uint64_t dw = s->nr_dirty_kb + s->nr_writeback_kb;

	if (s->nr_dirty_kb >= out->nr_dirty_kb_max && (s->bg_thresh_kb || !out->dirty_bg_thresh_kb)) {
		out->nr_dirty_kb_max = s->nr_dirty_kb;
		out->dirty_bg_thresh_kb = s->bg_thresh_kb;
		out->dirty_thresh_kb = s->thresh_kb;
		out->thresh_estimated = s->thresh_estimated;
	}
	if (dw > out->nr_dirty_writeback_kb_max)
		out->nr_dirty_writeback_kb_max = dw;
	if (s->bg_thresh_kb && s->nr_dirty_kb >= s->bg_thresh_kb)
		out->over_bg_ticks++;
	if (s->bg_thresh_kb && s->thresh_kb && dw >= (s->bg_thresh_kb + s->thresh_kb) / 2)
		out->over_freerun_ticks++;
	if (s->written_kb >= 0) {
		out->have_written = true;
		out->written_kb += (uint64_t)s->written_kb;
	}
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
		out->scan_direct += s->d_scan_direct;
		out->scan_cgroup += s->d_scan_cgroup;
		if (s->have_disk) {
			out->have_disk = true;
			out->disk_busy_ms += s->disk_busy_ms;
			out->disk_write_kb += s->disk_write_kb;
		}
		window_dirty(out, s);
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


/* The kinds whose name tells most: an I/O wait's, a page's */
#define NAME_KINDS (PL_WCHAN_IO_KINDS | (1u << PL_WCHAN_READ) | (1u << PL_WCHAN_PAGE))

void pl__stall_victim_wchan(struct pl_stall_victim *v, const char *wchan)
{
	char name[PL_WCHAN_MAX];
	size_t len = strcspn(wchan, "\n");
	enum pl_wchan_kind k;

	if (len >= sizeof(name))
		len = sizeof(name) - 1;
	memcpy(name, wchan, len);
	name[len] = '\0';
	k = pl__wchan_kind(name);
	v->wchan_kinds |= 1u << k;
	if (k == PL_WCHAN_UNKNOWN)
		return;
	if (!v->wchan[0] || ((1u << k) & NAME_KINDS && !((1u << pl__wchan_kind(v->wchan)) & NAME_KINDS)))
		memcpy(v->wchan, name, len + 1);
}

/* At least this much written back in the window is more than a small
 * fsync of the victim's own. */
#define WRITEBACK_KB 8192

/* Every D sample whose wchan told something was a page being read in:
 * no write of anyone's held it up (pl__stall_page_kinds settled the
 * page waits). */
static bool read_wait(const struct pl_stall_wait *v)
{
	unsigned telling = v->wchan_kinds & ~((1u << PL_WCHAN_UNKNOWN) | (1u << PL_WCHAN_OTHER));

	return telling == (1u << PL_WCHAN_READ);
}

/* The victim's wait was an I/O one, as far as its accounts tell. */
static bool waited_on_io(const struct pl_stall_window *w, const struct pl_stall_wait *v)
{
	if (v->wchan_kinds & PL_WCHAN_IO_KINDS)
		return true;
	if (v->have_blkio)
		return v->blkio_ms > 0;
	return w->have_psi_io ? w->psi_io_full_ms > 0 : true;
}

static bool dirty_writeback(const struct pl_stall_window *w, const struct pl_stall_wait *v)
{
	uint64_t own_kb = v->wbytes / 1024;

	if (read_wait(v))
		return false;
	if (w->over_bg_ticks || w->over_freerun_ticks || (v->wchan_kinds & (1u << PL_WCHAN_THROTTLE)))
		return true;
	if (w->have_written && w->written_kb >= WRITEBACK_KB + own_kb && waited_on_io(w, v))
		return true;
	return w->writeback_kb_max >= WRITEBACK_KB && w->have_disk && w->span_ms > 0 &&
	       w->disk_busy_ms >= 0.5 * w->span_ms;
}

/* It slept outside I/O, memory and locks, and no block-I/O wait of its
 * ended. */
static bool not_io(const struct pl_stall_wait *v)
{
	unsigned telling = v->wchan_kinds & ~(1u << PL_WCHAN_UNKNOWN);

	return telling == (1u << PL_WCHAN_OTHER) && !(v->have_blkio && v->blkio_ms > 0);
}

/* PSI memory "some" grew by at least this share of the window. */
#define PSI_MEM_SHARE 0.05

unsigned pl__stall_classify(const struct pl_stall_window *w, const struct pl_stall_wait *v)
{
	unsigned m = 0;

	if (w->compact_stall > 0)
		m |= PL_MECH_COMPACTION;
	if (w->allocstall > 0 || w->scan_direct > 0)
		m |= PL_MECH_DIRECT_RECLAIM;
	if (w->scan_cgroup > 0 || v->memcg_hits > 0)
		m |= PL_MECH_CGROUP_RECLAIM;
	if (!(m & PL_MECH_MEMORY) && w->have_psi_mem && w->span_ms > 0 &&
	    w->psi_mem_some_ms >= PSI_MEM_SHARE * w->span_ms)
		m |= PL_MECH_MEMORY_PRESSURE;
	if (dirty_writeback(w, v))
		m |= PL_MECH_DIRTY_WRITEBACK;
	if (!(m & ~PL_MECH_MEMORY_PRESSURE) && w->have_disk && w->span_ms > 0 &&
	    w->disk_busy_ms >= 0.8 * w->span_ms)
		m |= PL_MECH_DISK_SATURATION;
	if (read_wait(v))
		m |= PL_MECH_PAGE_READ;
	if (not_io(v))
		m |= PL_MECH_NOT_IO;
	return m;
}

double pl__stall_dirty_window_ms(const struct pl_stall_window *w, long expire_cs,
				 long writeback_cs)
{
	uint64_t pending = w->nr_dirty_writeback_kb_max > w->dirty_writeback_kb_max
				   ? w->nr_dirty_writeback_kb_max : w->dirty_writeback_kb_max;
	double ms = (expire_cs >= 0 ? (double)expire_cs : 3000.0) * 10.0 +
		    (writeback_cs >= 0 ? (double)writeback_cs : 500.0) * 10.0;

	if (w->have_written && w->written_kb > 0 && w->span_ms > 0)
		ms += (double)pending * w->span_ms / (double)w->written_kb;
	return ms;
}

/* In the order the first one is "mechanism": the rules on the system
 * counters, then the victim's own wait, which is named only when none of
 * them matched (a wait on a lock shows as the lock's caller, which may be
 * held across another task's I/O or compaction). */
static const struct {
	unsigned bit;
	const char *name;
} mech_order[] = {
	{ PL_MECH_COMPACTION, "compaction" },
	{ PL_MECH_DIRECT_RECLAIM, "direct_reclaim" },
	{ PL_MECH_CGROUP_RECLAIM, "cgroup_reclaim" },
	{ PL_MECH_DIRTY_WRITEBACK, "dirty_writeback" },
	{ PL_MECH_DISK_SATURATION, "disk_saturation" },
	{ PL_MECH_MEMORY_PRESSURE, "memory_pressure" },
	{ PL_MECH_PAGE_READ, "page_read" },
	{ PL_MECH_NOT_IO, "not_io" },
};
#define N_MECHS (sizeof(mech_order) / sizeof(mech_order[0]))

const char *pl__stall_mechanism_name(unsigned mechs)
{
	for (size_t i = 0; i < N_MECHS; i++) {
		if (mechs & mech_order[i].bit)
			return mech_order[i].name;
	}
	return "unknown";
}

bool pl__stall_fellow_victim(bool blocked, uint64_t wbytes, uint64_t wchar,
			     uint64_t victim_wbytes, uint64_t victim_wchar)
{
	return blocked && (wbytes < victim_wbytes ||
			   (wbytes == victim_wbytes && wchar <= victim_wchar));
}

enum pl_bully_rank pl__stall_bully_rank(unsigned mechs, const struct pl_stall_wait *v)
{
	unsigned first = 0;

	for (size_t i = 0; i < N_MECHS && !first; i++)
		first = mechs & mech_order[i].bit;
	if (first & PL_MECH_MEMORY)
		return PL_BULLY_MEMORY;
	if (first & PL_MECH_DIRTY_WRITEBACK)
		return PL_BULLY_WRITES;
	if (first & (PL_MECH_DISK_SATURATION | PL_MECH_PAGE_READ))
		return PL_BULLY_DISK;
	if (first)
		return PL_BULLY_NONE; /* not_io */
	/* unknown: writers, if it waited on I/O at all */
	if ((v->wchan_kinds & PL_WCHAN_IO_KINDS) || (v->have_blkio && v->blkio_ms > 0))
		return PL_BULLY_WRITES;
	return PL_BULLY_NONE;
}

const char *pl__stall_bully_rank_name(enum pl_bully_rank r)
{
	static const char *const names[] = { NULL, "write_bytes", "disk_bytes", "rss_growth" };

	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : NULL;
}

bool pl__stall_own_comm(const char *comm)
{
	return strncmp(comm, "perflink", 8) == 0;
}

/* The candidate's keys for rank r, the first deciding; false: nothing to
 * rank it by. */
static bool rank_keys(enum pl_bully_rank r, const struct pl_stall_bully *c, uint64_t *k1,
		      uint64_t *k2)
{
	switch (r) {
	case PL_BULLY_WRITES:
		*k1 = c->wbytes;
		*k2 = c->wchar;
		return c->wbytes || c->wchar;
	case PL_BULLY_DISK:
		*k1 = c->rbytes + c->wbytes;
		*k2 = c->rbytes;
		return *k1 > 0;
	case PL_BULLY_MEMORY:
		*k1 = c->rss_kb > 0 ? (uint64_t)c->rss_kb : 0;
		*k2 = 0;
		return c->rss_kb > 0;
	default:
		return false;
	}
}

void pl__stall_bully_offer_by(struct pl_stall_bully *top, size_t *n, enum pl_bully_rank r,
			      const struct pl_stall_bully *c)
{
	uint64_t k1, k2, t1, t2;
	size_t i, pos;

	if (!rank_keys(r, c, &k1, &k2))
		return;
	for (pos = 0; pos < *n; pos++) {
		rank_keys(r, &top[pos], &t1, &t2);
		if (k1 > t1 || (k1 == t1 && k2 > t2))
			break;
	}
	if (pos >= PL_STALL_BULLIES)
		return;
	i = *n < PL_STALL_BULLIES ? *n : PL_STALL_BULLIES - 1;
	for (; i > pos; i--)
		top[i] = top[i - 1];
	top[pos] = *c;
	top[pos].comm[sizeof(top[pos].comm) - 1] = '\0';
	if (*n < PL_STALL_BULLIES)
		(*n)++;
}

void pl__stall_bully_offer(struct pl_stall_bully *top, size_t *n, int pid, const char *comm,
			   uint64_t wbytes, uint64_t wchar, bool exited)
{
	struct pl_stall_bully c;

	memset(&c, 0, sizeof(c));
	c.pid = pid;
	strncpy(c.comm, comm, sizeof(c.comm) - 1);
	c.wbytes = wbytes;
	c.wchar = wchar;
	c.exited = exited;
	pl__stall_bully_offer_by(top, n, PL_BULLY_WRITES, &c);
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

/* The evidence the writeback rules use, added after the older fields. */
static void dirty_json(struct pl_json *j, const struct pl_stall_window *w)
{
	if (!w->dirty_bg_thresh_kb)
		pl__json_null(j, "dirty_thresh_source");
	else
		pl__json_str(j, "dirty_thresh_source", w->thresh_estimated ? "sysctl" : "vmstat");
	pl__json_u64(j, "nr_dirty_kB_max", w->nr_dirty_kb_max);
	pl__json_u64(j, "nr_dirty_writeback_kB_max", w->nr_dirty_writeback_kb_max);
	pl__json_u64(j, "over_bg_thresh_ticks", w->over_bg_ticks);
	pl__json_u64(j, "over_freerun_ticks", w->over_freerun_ticks);
	if (w->have_written) {
		pl__json_u64(j, "written_kB", w->written_kb);
		pl__json_double(j, "written_MB_per_s",
				w->span_ms > 0 ? (double)w->written_kb / 1024.0 / (w->span_ms / 1e3) : 0,
				1);
	} else {
		pl__json_null(j, "written_kB");
		pl__json_null(j, "written_MB_per_s");
	}
}

static void wait_json(struct pl_json *j, const struct pl_stall_event *e)
{
	pl__json_begin_object(j, "wait");
	if (e->wchan && e->wchan[0])
		pl__json_str(j, "wchan", e->wchan);
	else
		pl__json_null(j, "wchan");
	pl__json_begin_array(j, "wchan_kinds");
	for (unsigned k = 0; k < PL_WCHAN_KINDS; k++) {
		if (e->wait.wchan_kinds & (1u << k))
			pl__json_str(j, NULL, pl__wchan_kind_name((enum pl_wchan_kind)k));
	}
	pl__json_end_array(j);
	if (e->wait.have_memcg)
		pl__json_u64(j, "memcg_limit_hits", e->wait.memcg_hits);
	else
		pl__json_null(j, "memcg_limit_hits");
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
	pl__json_begin_array(j, "raised_by");
	if (e->raised & PL_RAISED_BLKIO)
		pl__json_str(j, NULL, "blkio");
	if (e->raised & PL_RAISED_DSTATE)
		pl__json_str(j, NULL, "dstate");
	if (e->raised & PL_RAISED_DSTATE_RUN)
		pl__json_str(j, NULL, "dstate_run");
	pl__json_end_array(j);
	pl__json_double(j, "blkio_ms", e->blkio_ms, 0);
	pl__json_double(j, "dstate_ms", e->dstate_ms, 0);
	pl__json_double(j, "dstate_longest_ms", e->dstate_longest_ms, 0);
	pl__json_double(j, "dstate_sum_ms", e->dstate_sum_ms, 0);
	pl__json_double(j, "window_ms", e->window_ms, 0);
	pl__json_double(j, "bully_window_ms", e->bully_window_ms, 0);
	pl__json_bool(j, "bully_by_dirty_pages", e->bully_by_dirty);
	if (pl__stall_bully_rank_name(e->bully_rank))
		pl__json_str(j, "bully_rank", pl__stall_bully_rank_name(e->bully_rank));
	else
		pl__json_null(j, "bully_rank");
	pl__json_begin_array(j, "bully");
	for (i = 0; i < e->nbully; i++) {
		pl__json_begin_object(j, NULL);
		pl__json_i64(j, "pid", e->bully[i].pid);
		pl__json_str(j, "comm", e->bully[i].comm);
		pl__json_double(j, "d_wbytes_kB", (double)e->bully[i].wbytes / 1024.0, 1);
		pl__json_double(j, "d_wchar_kB", (double)e->bully[i].wchar / 1024.0, 1);
		pl__json_bool(j, "exited", e->bully[i].exited);
		if (e->bully_rank == PL_BULLY_DISK || e->bully_rank == PL_BULLY_MEMORY) {
			pl__json_double(j, "d_read_kB", (double)e->bully[i].rbytes / 1024.0, 1);
			pl__json_i64(j, "d_rss_kB", e->bully[i].rss_kb);
		}
		pl__json_end_object(j);
	}
	pl__json_end_array(j);
	pl__json_str(j, "mechanism", pl__stall_mechanism_name(e->mechs));
	pl__json_begin_array(j, "mechanisms");
	for (i = 0; i < N_MECHS; i++) {
		if (e->mechs & mech_order[i].bit)
			pl__json_str(j, NULL, mech_order[i].name);
	}
	pl__json_end_array(j);
	wait_json(j, e);
	pl__json_begin_object(j, "counters");
	pl__json_i64(j, "compact_stall", w->compact_stall);
	pl__json_i64(j, "allocstall", w->allocstall);
	pl__json_i64(j, "pgscan_direct", w->scan_direct);
	pl__json_i64(j, "pgscan_cgroup", w->scan_cgroup);
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
	dirty_json(j, w);
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
