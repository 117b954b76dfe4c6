/* The tracer's events file: a first "config" line saying what this run can
 * see (delay accounting, PSI), then one "stall" line per stall of a watched
 * process, with its bully and mechanism (rules in stall_detect.c), and one
 * "implausible_blkio" line per process whose delay total jumped by more
 * than it can have waited. Each stall
 * also goes to the log, rate-limited, and to cfg->on_event. */
#include "tracer_priv.h"
#include "whole_write.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "pl_config.h"

static char *derive_path(const char *out)
{
	size_t len = strlen(out);
	size_t stem = len >= 4 && strcmp(out + len - 4, ".csv") == 0 ? len - 4 : len;
	char *p = malloc(stem + sizeof(".events.jsonl"));

	if (!p)
		return NULL;
	memcpy(p, out, stem);
	memcpy(p + stem, ".events.jsonl", sizeof(".events.jsonl"));
	return p;
}

int pl__tevents_open(struct pl_tracer *t, bool *created)
{
	int fd;

	t->events_path = t->cfg.events_path ? strdup(t->cfg.events_path)
					    : derive_path(t->cfg.out_path);
	if (!t->events_path)
		return -ENOMEM;
	fd = pl__tracer_open_output(t->events_path, created);
	if (fd < 0) {
		pl__log_warnc(-fd, "cannot write %s", t->events_path);
		return fd;
	}
	t->events_fd = fd;
	return 0;
}

void pl__tevents_close(struct pl_tracer *t)
{
	if (t->events_fd >= 0)
		close(t->events_fd);
	t->events_fd = -1;
	free(t->events_path);
	t->events_path = NULL;
}

static int put_line(struct pl_tracer *t, const char *line)
{
	int err;

	if (!line)
		return -ENOMEM;
	if ((err = pl__write_record(t->events_fd, line, strlen(line))) < 0) {
		pl__log_warnc(-err, "cannot write %s", t->events_path);
		return err;
	}
	return 0;
}

int pl__tevents_config(struct pl_tracer *t, double wall, double mono,
		       const struct pl_tsys_sample *first)
{
	struct pl_json *j = &t->json;
	size_t i;

	pl__json_reset(j);
	pl__json_begin_object(j, NULL);
	pl__json_str(j, "type", "config");
	pl__json_double(j, "wall", wall, 3);
	pl__json_double(j, "mono", mono, 3);
	pl__json_str(j, "version", PL_VERSION);
	pl__json_str(j, "proc_root", t->cfg.proc_root);
	pl__json_bool(j, "replay", t->seq);
	pl__json_double(j, "hz", t->cfg.hz, 3);
	pl__json_begin_array(j, "names");
	for (i = 0; i < t->nwatch; i++)
		pl__json_str(j, NULL, t->watch[i]);
	pl__json_end_array(j);
	pl__json_begin_array(j, "disks");
	for (i = 0; i < t->sys.ndisks; i++)
		pl__json_str(j, NULL, t->sys.disks[i]);
	pl__json_end_array(j);
	pl__json_str(j, "task_delayacct", pl__tracer_delayacct_name(t->delayacct));
	pl__json_bool(j, "blkio_delays", t->delayacct != PL_DELAYACCT_OFF);
	if (t->delayacct == PL_DELAYACCT_OFF)
		pl__json_str(j, "delayacct_note",
			     "kernel.task_delayacct is off: d_blkio_ms reads 0, only D state "
			     "is seen");
	else if (t->delayacct == PL_DELAYACCT_ABSENT)
		pl__json_str(j, "delayacct_note",
			     "no kernel.task_delayacct (before 5.14): on if the kernel has "
			     "CONFIG_TASK_DELAY_ACCT");
	pl__json_bool(j, "psi_io", first->have_psi_io);
	pl__json_bool(j, "psi_memory", first->have_psi_mem);
	pl__json_i64(j, "clk_tck", t->clk_tck);
	pl__json_double(j, "stall_blkio_ms", t->cfg.blkio_stall_ms, 1);
	pl__json_double(j, "stall_dstate_ms", t->cfg.dstate_stall_ms, 1);
	pl__json_bool(j, "track_writers", t->cfg.track_writers);
	pl__json_bool(j, "stat_every_tick", t->cfg.stat_every_tick);
	pl__json_end_object(j);
	pl__log_info("tracer: writing %s (events %s) at %g Hz, %zu names, task_delayacct %s, "
		     "PSI io %s memory %s%s",
		     t->cfg.out_path, t->events_path, t->cfg.hz, t->nwatch,
		     pl__tracer_delayacct_name(t->delayacct), first->have_psi_io ? "yes" : "no",
		     first->have_psi_mem ? "yes" : "no", t->seq ? " (replay)" : "");
	return put_line(t, pl__json_finish(j));
}

/* Offer one candidate's writes, reads and RSS growth over [from, now],
 * ranked by e->bully_rank, unless it is another victim of the stall,
 * blocked in [stall_from, now], that moved no more than the victim. */
static void offer(struct pl_stall_event *e, const struct pl_writes *w, int pid, const char *comm,
		  bool exited, uint64_t from, uint64_t stall_from, uint64_t now)
{
	struct pl_stall_bully c;
	bool blocked;

	if (pl__stall_own_comm(comm))
		return;
	memset(&c, 0, sizeof(c));
	c.pid = pid;
	snprintf(c.comm, sizeof(c.comm), "%s", comm);
	c.exited = exited;
	pl__writes_sum_long(w, from, now, &c.wbytes, &c.wchar);
	pl__writes_sum_mem(w, from, now, &c.rbytes, &c.rss_kb);
	blocked = pl__writes_blocked(w, stall_from, now);
	if (e->bully_rank == PL_BULLY_WRITES &&
	    pl__stall_fellow_victim(blocked, c.wbytes, c.wchar, e->victim_wbytes,
				    e->victim_wchar))
		return;
	/* the disk's: one that moved less than the victim itself is not
	 * what it queued behind */
	if (e->bully_rank == PL_BULLY_DISK &&
	    c.rbytes + c.wbytes < e->victim_rbytes + e->victim_wbytes)
		return;
	pl__stall_bully_offer_by(e->bully, &e->nbully, e->bully_rank, &c);
}

/* from: the bully window's first tick; stall_from: the stall window's. */
static void find_bullies(struct pl_tracer *t, const struct pl_tproc *victim, uint64_t from,
			 uint64_t stall_from, struct pl_stall_event *e)
{
	const struct pl_tprocs *tp = &t->procs;
	size_t i;

	int64_t rss;

	pl__writes_sum_long(&victim->writes, from, t->tick, &e->victim_wbytes, &e->victim_wchar);
	pl__writes_sum_mem(&victim->writes, from, t->tick, &e->victim_rbytes, &rss);
	if (e->bully_rank == PL_BULLY_NONE)
		return;
	for (i = 0; i < tp->n; i++) {
		const struct pl_tproc *q = &tp->v[i];

		if (q != victim && q->pid != tp->self_pid)
			offer(e, &q->writes, q->pid, q->comm, false, from, stall_from, t->tick);
	}
	for (i = 0; i < PL_WRITES_GONE; i++) {
		if (tp->gone.e[i].used)
			offer(e, &tp->gone.e[i].w, tp->gone.e[i].pid, tp->gone.e[i].comm, true,
			      from, stall_from, t->tick);
	}
}

/* The ticks back from now to where what every process wrote (the exited
 * ones kept too) adds up to the dirty and writeback memory the window saw
 * at most: the oldest of those pages was dirtied no later than that. */
static uint64_t dirty_reach_ticks(const struct pl_tracer *t, const struct pl_stall_window *w)
{
	const struct pl_tprocs *tp = &t->procs;
	uint64_t totals[PL_WRITES_SPANS] = { 0 };
	uint64_t pending_kb = w->nr_dirty_writeback_kb_max > w->dirty_writeback_kb_max
				      ? w->nr_dirty_writeback_kb_max : w->dirty_writeback_kb_max;
	size_t i;

	for (i = 0; i < tp->n; i++)
		pl__writes_add_spans(&tp->v[i].writes, t->tick, totals);
	for (i = 0; i < PL_WRITES_GONE; i++) {
		if (tp->gone.e[i].used)
			pl__writes_add_spans(&tp->gone.e[i].w, t->tick, totals);
	}
	return t->tick - pl__writes_reach(totals, t->tick, pending_kb * 1024) + 1;
}

/* The bully window in ticks: at least PL_STALL_BULLY_MS and the stall
 * window, at most the tick ring; for a writeback stall, the dirty window:
 * the longer of pl__stall_dirty_window_ms and dirty_reach_ticks, at most
 * the spans kept. */
static uint64_t bully_ticks(const struct pl_tracer *t, struct pl_stall_event *e, uint64_t wt)
{
	uint64_t bt = (uint64_t)(PL_STALL_BULLY_MS / t->scfg.interval_ms + 0.5), most = PL_STALL_RING;

	e->bully_by_dirty = strcmp(pl__stall_mechanism_name(e->mechs), "dirty_writeback") == 0;
	if (e->bully_by_dirty) {
		double ms = pl__stall_dirty_window_ms(&e->win, t->sys.dirty_expire_cs,
						      t->sys.dirty_writeback_cs);
		double n = ceil(ms / t->scfg.interval_ms);
		uint64_t reach = dirty_reach_ticks(t, &e->win);

		most = (uint64_t)PL_WRITES_SPANS * PL_WRITES_SPAN_TICKS;
		if (n > (double)bt)
			bt = n < (double)most ? (uint64_t)n : most;
		if (reach > bt)
			bt = reach;
	}
	if (bt < wt)
		bt = wt;
	if (bt > most)
		bt = most;
	return bt > t->tick ? t->tick : bt;
}

/* Where the victim sleeps, read at each of its D samples while an episode
 * is open: its /proc/PID/wchan under this tick's root, through an fd kept
 * while it lives. Absent or unreadable (no symbols, another user's task):
 * nothing is noted. */
static void note_wchan(struct pl_tracer *t, struct pl_tproc *p)
{
	const char *name = pl__tproc_wchan_now(&t->procs, p);

	if (name)
		pl__stall_victim_wchan(&p->victim, name);
}

/* The victim's memory cgroup limit hits now (opened at its first
 * episode); false when it has none to read. */
static bool memcg_hits(struct pl_tracer *t, struct pl_tproc *p, uint64_t *hits)
{
	if (!p->memcg.tried)
		pl__memcg_open(&p->memcg, t->procs.rootfd, t->live, p->pid);
	return pl__memcg_read(&p->memcg, hits) == 0;
}

static int emit(struct pl_tracer *t, struct pl_tproc *p, enum pl_stall_verdict verdict,
		double wall, double mono)
{
	struct pl_stall_event e;
	uint64_t wt, from, bt, own_wchar;
	const char *line;
	int err;

	memset(&e, 0, sizeof(e));
	wt = pl__stall_window_ticks(&p->victim, &t->scfg, t->tick, mono);
	from = t->tick - wt + 1;
	pl__stall_window(&t->hist, from, t->tick, t->scfg.interval_ms, &e.win);
	e.wait.have_blkio = t->delayacct != PL_DELAYACCT_OFF && !t->procs.cfg.no_blkio;
	e.wait.blkio_ms = p->victim.blkio_ms;
	pl__writes_sum(&p->writes, from, t->tick, &e.wait.wbytes, &own_wchar);
	e.wait.wchan_kinds = pl__stall_page_kinds(p->victim.wchan_kinds,
						  e.wait.wbytes > 0 || own_wchar > 0);
	e.wchan = p->victim.wchan;
	if (p->memcg_have0 && memcg_hits(t, p, &e.wait.memcg_hits)) {
		e.wait.have_memcg = true;
		e.wait.memcg_hits -= e.wait.memcg_hits >= p->memcg_hits0 ? p->memcg_hits0
									   : e.wait.memcg_hits;
		p->memcg_hits0 += e.wait.memcg_hits; /* an ongoing one goes on from here */
	}
	e.mechs = pl__stall_classify(&e.win, &e.wait);
	e.bully_rank = pl__stall_bully_rank(e.mechs, &e.wait);
	e.raised = p->victim.raised;
	bt = bully_ticks(t, &e, wt);
	find_bullies(t, p, t->tick - bt + 1, from, &e);
	e.bully_window_ms = (double)bt * t->scfg.interval_ms;
	e.wall = wall;
	e.mono = mono;
	e.pid = p->pid;
	e.comm = p->comm;
	e.label = t->watch[p->label];
	e.ongoing = verdict == PL_STALL_EMIT_ONGOING;
	e.blkio_ms = p->victim.blkio_ms;
	e.dstate_ms = p->victim.dstate_ms;
	e.dstate_longest_ms = p->victim.dstate_longest_ms;
	e.dstate_sum_ms = p->victim.dstate_sum_ms;
	e.window_ms = e.win.span_ms;
	e.sampler_ms = (double)(pl__thread_cpu_ns() - t->tick_cpu0_ns) / 1e6;
	e.sampler_ms_p99 = pl__qhist_quantile(&t->sampler, 0.99);
	line = pl__stall_event_json(&t->json, &e);
	if ((err = put_line(t, line)) < 0)
		return err;
	t->events++;
	if (t->cfg.on_event)
		t->cfg.on_event(t->cfg.on_event_ctx, line);
	pl__log_warnx_limited(&t->event_rl,
			      "stall: %s[%d] blocked %.0f ms (D %.0f ms in all, %.0f ms at most in "
			      "one wait) in %.0f ms; bully %s[%d] %.0f kB; mechanism %s",
			      p->comm, p->pid, e.blkio_ms, e.dstate_sum_ms, e.dstate_longest_ms,
			      e.window_ms,
			      e.nbully ? e.bully[0].comm : "-", e.nbully ? e.bully[0].pid : 0,
			      e.nbully ? (double)e.bully[0].wbytes / 1024.0 : 0.0,
			      pl__stall_mechanism_name(e.mechs));
	return 0;
}

/* A block-I/O delay jump longer than the process's life (procs_read.c):
 * the CSV has it as the kernel said; this line says why it is not to be
 * believed. Once per process. */
static int implausible_blkio(struct pl_tracer *t, const struct pl_tproc *p, double wall,
			     double mono)
{
	struct pl_json *j = &t->json;
	const char *line;
	int err;

	pl__json_reset(j);
	pl__json_begin_object(j, NULL);
	pl__json_str(j, "type", "implausible_blkio");
	pl__json_double(j, "wall", wall, 3);
	pl__json_double(j, "mono", mono, 3);
	pl__json_u64(j, "mono_ns", mono > 0 ? (uint64_t)(mono * 1e9) : 0);
	pl__json_i64(j, "pid", p->pid);
	pl__json_str(j, "comm", p->comm);
	pl__json_double(j, "d_blkio_ms", p->odd_blkio.d_blk_ms, 0);
	pl__json_double(j, "age_ms", p->odd_blkio.age_ms, 0);
	pl__json_i64(j, "threads", p->num_threads);
	pl__json_str(j, "reason",
		     p->odd_blkio.d_blk_ms < 0
			     ? "the delay total went back, which the kernel's never does"
			     : "more delay than the process has lived, once per thread: "
			       "kernel.task_delayacct switched on during a wait counts it "
			       "from 0, i.e. the uptime");
	pl__json_end_object(j);
	line = pl__json_finish(j);
	if ((err = put_line(t, line)) < 0)
		return err;
	if (t->cfg.on_event)
		t->cfg.on_event(t->cfg.on_event_ctx, line);
	return 0;
}

int pl__tevents_tick(struct pl_tracer *t, double wall, double mono)
{
	struct pl_tprocs *tp = &t->procs;
	bool opened;
	int err;

	/* a watched process is read every tick, and an odd block-I/O delay is
	 * found by a read: the processes not read this tick have neither */
	for (size_t k = 0; k < tp->n_touched; k++) {
		struct pl_tproc *p = &tp->v[tp->touched[k]];
		enum pl_stall_verdict v;

		if (p->odd_blkio_now && (err = implausible_blkio(t, p, wall, mono)) < 0)
			return err;
		if (p->label < 0 || !p->stat_now)
			continue;
		opened = !p->victim.open;
		v = pl__stall_update(&p->victim, &t->scfg, t->tick, mono, p->state, p->d_blk_ms,
				     p->woke_now);
		if (opened && p->victim.open)
			p->memcg_have0 = memcg_hits(t, p, &p->memcg_hits0);
		if (p->state == 'D' && p->victim.open)
			note_wchan(t, p);
		if (v == PL_STALL_NONE)
			continue;
		if ((err = emit(t, p, v, wall, mono)) < 0)
			return err;
		pl__stall_victim_rearm(&p->victim, v, t->tick, mono);
	}
	return 0;
}
