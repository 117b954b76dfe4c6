/* What export uses of DIR/telemetry/TYPE.jsonl, one JSON line at a time
 * (pl__json_walk): a line that is not valid JSON, or lacks what makes it
 * useful (a stall without its time or victim), is skipped and counted.
 *
 *   link_diag          the totals of the last line, and where frames
 *                      held, replaced and lost went up; bytes and backlog
 *                      of every line as counter points
 *   perflink-profile   per process, the stages of its last report
 *   stall              every event: victim, mechanism, start and length,
 *                      its first bully
 *   resources          clk_tck from the header; the processes of the last
 *                      sample (CPU ticks, VmRSS), with their CPU ticks and
 *                      time at the first sample that had them; of every
 *                      sample, each process's CPU ticks and VmRSS and the
 *                      system's MemAvailable, Dirty and Writeback as counter
 *                      points */
#include "proc_parse.h"
#include "recording.h"
#include "json_reader.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ITEMS 4096 /* stages or processes in one line */

struct line_state {
	struct pl_recording *r;
	enum pl_recording_file f;
	int err;
	char type[16];
	int64_t pid;
	bool have_pid, have_mono, have_window, have_mono_ns;
	uint64_t mono_ns;
	char comm[PL_REC_NAME], mechanism[PL_REC_NAME];
	double mono_s, window_ms;
	struct pl_recorded_link link;
	uint64_t clk_tck;
	int64_t bully_pid;
	char bully_comm[PL_REC_NAME];
	double bully_wbytes_kb;
	bool have_backlog;
	double backlog_kb;
	/* perflink-profile's dropped_calls, site_overflow_calls,
	 * daemon_dropped_reports; UINT64_MAX: absent */
	uint64_t lost[3];
	/* meminfo_kb's MemAvailable, Dirty, Writeback; UINT64_MAX: absent */
	uint64_t mem_kb[3];
	/* the line's array items, indexed as in the line */
	struct pl_recorded_stage *stages;
	size_t n_stages, cap_stages;
	struct pl_recorded_process *procs;
	size_t n_procs, cap_procs;
};

static bool i64_of(const char *s, int64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	return errno == 0 && end != s && *end == '\0';
}

static bool double_of(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return errno == 0 && end != s && *end == '\0' && isfinite(*v);
}

/* the item at index, grown and zeroed up to it; NULL on ENOMEM (noted) */
static void *item_at(struct line_state *s, void **v, size_t *n, size_t *cap, size_t elem,
		     size_t index)
{
	void *item = pl__recording_item_at(v, n, cap, elem, index);

	if (!item)
		s->err = -ENOMEM;
	return item;
}

static void link_field(struct line_state *s, const char *path, const char *value)
{
	static const struct {
		const char *path;
		size_t offset;
	} fields[] = {
		{ "totals.frames_sent", offsetof(struct pl_recorded_link, frames_sent) },
		{ "totals.frames_held", offsetof(struct pl_recorded_link, frames_held) },
		{ "totals.frames_replaced", offsetof(struct pl_recorded_link, frames_replaced) },
		{ "totals.frames_lost", offsetof(struct pl_recorded_link, frames_lost) },
		{ "totals.messages_dropped", offsetof(struct pl_recorded_link, messages_dropped) },
		{ "totals.bytes", offsetof(struct pl_recorded_link, bytes) },
	};
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strcmp(path, fields[i].path) == 0 &&
		    pl__parse_u64_all(value,
					    (uint64_t *)((char *)&s->link + fields[i].offset)))
			s->link.have = true;
}

static void stage_field(struct line_state *s, size_t index, const char *field, const char *value)
{
	struct pl_recorded_stage *st = item_at(s, (void **)&s->stages, &s->n_stages,
					       &s->cap_stages, sizeof(*st), index);

	if (!st)
		return;
	if (strcmp(field, "name") == 0)
		pl__recording_copy_name(st->stage, value);
	else if (strcmp(field, "calls") == 0)
		pl__parse_u64_all(value, &st->calls);
	else if (strcmp(field, "wall_total_ns") == 0)
		pl__parse_u64_all(value, &st->wall_total_ns);
	else if (strcmp(field, "cpu_total_ns") == 0)
		pl__parse_u64_all(value, &st->cpu_total_ns);
}

static void process_field(struct line_state *s, size_t index, const char *field,
			  const char *value)
{
	struct pl_recorded_process *p = item_at(s, (void **)&s->procs, &s->n_procs,
						&s->cap_procs, sizeof(*p), index);
	uint64_t v;

	if (!p)
		return;
	if (strcmp(field, "pid") == 0)
		i64_of(value, &p->pid);
	else if (strcmp(field, "comm") == 0)
		pl__recording_copy_name(p->comm, value);
	else if ((strcmp(field, "utime_ticks") == 0 || strcmp(field, "stime_ticks") == 0) &&
		 pl__parse_u64_all(value, &v)) {
		p->cpu_ticks += v;
		p->have_cpu = true;
	} else if (strcmp(field, "vm_kb.VmRSS") == 0 && pl__parse_u64_all(value, &v) &&
		   v <= UINT64_MAX / 1024) {
		p->resident_bytes = v * 1024;
		p->have_resident = true;
	}
}

static void on_scalar(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct line_state *s = ctx;
	const char *field;
	size_t index;

	(void)kind;
	if (strcmp(path, "type") == 0)
		snprintf(s->type, sizeof(s->type), "%s", value);
	else if (strcmp(path, "pid") == 0 || strcmp(path, "victim.pid") == 0)
		s->have_pid = i64_of(value, &s->pid);
	else if (strcmp(path, "comm") == 0 || strcmp(path, "victim.comm") == 0)
		pl__recording_copy_name(s->comm, value);
	else if (strcmp(path, "mechanism") == 0)
		pl__recording_copy_name(s->mechanism, value);
	else if (strcmp(path, "mono") == 0)
		s->have_mono = double_of(value, &s->mono_s) && s->mono_s >= 0 && s->mono_s < 1e10;
	else if (strcmp(path, "window_ms") == 0)
		s->have_window = double_of(value, &s->window_ms) && s->window_ms >= 0 &&
				 s->window_ms < 1e9;
	else if (strcmp(path, "mono_ns") == 0)
		s->have_mono_ns = pl__parse_u64_all(value, &s->mono_ns);
	else if (strcmp(path, "clk_tck") == 0)
		pl__parse_u64_all(value, &s->clk_tck);
	else if (s->f == PL_REC_STALL && strcmp(path, "bully.0.pid") == 0)
		i64_of(value, &s->bully_pid);
	else if (s->f == PL_REC_STALL && strcmp(path, "bully.0.comm") == 0)
		pl__recording_copy_name(s->bully_comm, value);
	else if (s->f == PL_REC_STALL && strcmp(path, "bully.0.d_wbytes_kB") == 0)
		double_of(value, &s->bully_wbytes_kb);
	else if (s->f == PL_REC_LINK_DIAG && strcmp(path, "last_send.backlog_kb") == 0)
		s->have_backlog = double_of(value, &s->backlog_kb) && s->backlog_kb >= 0 &&
				  s->backlog_kb < 1e12;
	else if (s->f == PL_REC_RESOURCES && strcmp(path, "meminfo_kb.MemAvailable") == 0)
		pl__parse_u64_all(value, &s->mem_kb[0]);
	else if (s->f == PL_REC_RESOURCES && strcmp(path, "meminfo_kb.Dirty") == 0)
		pl__parse_u64_all(value, &s->mem_kb[1]);
	else if (s->f == PL_REC_RESOURCES && strcmp(path, "meminfo_kb.Writeback") == 0)
		pl__parse_u64_all(value, &s->mem_kb[2]);
	else if (s->f == PL_REC_PROFILE && strcmp(path, "dropped_calls") == 0)
		pl__parse_u64_all(value, &s->lost[0]);
	else if (s->f == PL_REC_PROFILE && strcmp(path, "site_overflow_calls") == 0)
		pl__parse_u64_all(value, &s->lost[1]);
	else if (s->f == PL_REC_PROFILE && strcmp(path, "daemon_dropped_reports") == 0)
		pl__parse_u64_all(value, &s->lost[2]);
	else if (s->f == PL_REC_LINK_DIAG)
		link_field(s, path, value);
	else if (s->f == PL_REC_PROFILE && (field = pl__recording_item_of(path, "stages", MAX_ITEMS, &index)))
		stage_field(s, index, field, value);
	else if (s->f == PL_REC_RESOURCES && (field = pl__recording_item_of(path, "procs", MAX_ITEMS, &index)))
		process_field(s, index, field, value);
}

static int take_link_diag(struct line_state *s)
{
	struct pl_recording *r = s->r;
	const struct pl_recorded_link *was = &r->link, *now = &s->link;
	struct pl_recorded_link_change *c;
	int err;

	if (!now->have)
		return 1;
	if (was->have && s->have_mono_ns && now->frames_held >= was->frames_held &&
	    now->frames_replaced >= was->frames_replaced && now->frames_lost >= was->frames_lost &&
	    (now->frames_held > was->frames_held || now->frames_replaced > was->frames_replaced ||
	     now->frames_lost > was->frames_lost)) {
		if ((err = pl__recording_grow((void **)&r->link_changes, &r->cap_link_changes,
					      r->n_link_changes, sizeof(*r->link_changes))) < 0)
			return err;
		c = &r->link_changes[r->n_link_changes++];
		c->mono_ns = s->mono_ns;
		c->held = now->frames_held - was->frames_held;
		c->replaced = now->frames_replaced - was->frames_replaced;
		c->lost = now->frames_lost - was->frames_lost;
	}
	if (s->have_mono_ns) {
		if ((err = pl__recording_point(r, PL_COUNTER_LINK_BYTES, 0, NULL, s->mono_ns,
					       (double)now->bytes)) < 0)
			return err;
		if (s->have_backlog &&
		    (err = pl__recording_point(r, PL_COUNTER_LINK_BACKLOG_BYTES, 0, NULL,
					       s->mono_ns, s->backlog_kb * 1024)) < 0)
			return err;
	}
	r->link = *now;
	return 0;
}

/* a process's new report replaces its stages */
static int take_profile(struct line_state *s)
{
	struct pl_recording *r = s->r;
	struct pl_recorded_loss *loss;
	size_t i, kept = 0;
	int err;

	if (!s->have_pid)
		return 1;
	if (!(loss = pl__recording_loss(r, s->pid, s->comm)))
		return -ENOMEM;
	loss->have_report = true;
	loss->dropped_calls = s->lost[0];
	loss->site_overflow_calls = s->lost[1];
	loss->daemon_dropped_reports = s->lost[2];
	for (i = 0; i < r->n_stages; i++)
		if (r->stages[i].pid != s->pid)
			r->stages[kept++] = r->stages[i];
	r->n_stages = kept;
	for (i = 0; i < s->n_stages; i++) {
		struct pl_recorded_stage *st = &s->stages[i];

		if (!st->stage[0])
			continue;
		if ((err = pl__recording_grow((void **)&r->stages, &r->cap_stages, r->n_stages,
					      sizeof(*r->stages))) < 0)
			return err;
		st->pid = s->pid;
		pl__recording_copy_name(st->comm, s->comm);
		r->stages[r->n_stages++] = *st;
	}
	return 0;
}

static int take_stall(struct line_state *s)
{
	struct pl_recording *r = s->r;
	struct pl_recorded_stall *e;
	double start_s;
	int err;

	if (!s->have_pid || s->pid < 0 || !s->have_mono || !s->have_window)
		return 1;
	start_s = s->mono_s - s->window_ms / 1e3;
	if (start_s < 0)
		start_s = 0;
	if ((err = pl__recording_grow((void **)&r->stalls, &r->cap_stalls, r->n_stalls,
				      sizeof(*r->stalls))) < 0)
		return err;
	e = &r->stalls[r->n_stalls++];
	memset(e, 0, sizeof(*e));
	e->pid = s->pid;
	pl__recording_copy_name(e->comm, s->comm);
	pl__recording_copy_name(e->mechanism, s->mechanism[0] ? s->mechanism : "unknown");
	/* the window ends at mono; one said to start before the clock did is cut */
	e->start_ns = (uint64_t)llround(start_s * 1e9);
	e->duration_ns = (uint64_t)llround(s->mono_s * 1e9) - e->start_ns;
	if (s->bully_pid > 0 && s->bully_pid < (1 << 22) && s->bully_pid != s->pid) {
		e->bully_pid = s->bully_pid;
		pl__recording_copy_name(e->bully_comm, s->bully_comm);
		e->bully_wbytes_kb = s->bully_wbytes_kb >= 0 && s->bully_wbytes_kb < 1e15 ?
					     s->bully_wbytes_kb : 0;
	}
	return 0;
}

static int take_resources(struct line_state *s)
{
	struct pl_recording *r = s->r;
	size_t i;
	int err;

	if (strcmp(s->type, "header") == 0) {
		if (!s->clk_tck)
			return 1;
		r->clk_tck = s->clk_tck;
		return 0;
	}
	if (strcmp(s->type, "sample") != 0)
		return 1;
	/* carry each process's first sample over from the previous line */
	for (i = 0; i < s->n_procs; i++) {
		struct pl_recorded_process *p = &s->procs[i];
		size_t k;

		p->have_mono = s->have_mono_ns && p->have_cpu;
		if (!p->have_mono)
			continue;
		p->mono_ns = s->mono_ns;
		p->first_mono_ns = s->mono_ns;
		p->first_cpu_ticks = p->cpu_ticks;
		for (k = 0; k < r->n_procs; k++)
			if (r->procs[k].pid == p->pid && r->procs[k].have_mono &&
			    r->procs[k].first_mono_ns <= s->mono_ns &&
			    r->procs[k].first_cpu_ticks <= p->cpu_ticks) {
				p->first_mono_ns = r->procs[k].first_mono_ns;
				p->first_cpu_ticks = r->procs[k].first_cpu_ticks;
				break;
			}
	}
	r->n_procs = 0;
	for (i = 0; i < s->n_procs; i++) {
		const struct pl_recorded_process *p = &s->procs[i];

		if (!p->comm[0])
			continue;
		if ((err = pl__recording_grow((void **)&r->procs, &r->cap_procs, r->n_procs,
					      sizeof(*r->procs))) < 0)
			return err;
		r->procs[r->n_procs++] = *p;
		if (!s->have_mono_ns || p->pid <= 0 || p->pid >= (1 << 22))
			continue;
		if (p->have_cpu && (err = pl__recording_point(r, PL_COUNTER_PROCESS_CPU_TICKS, p->pid,
							      p->comm, s->mono_ns,
							      (double)p->cpu_ticks)) < 0)
			return err;
		if (p->have_resident &&
		    (err = pl__recording_point(r, PL_COUNTER_PROCESS_RSS_BYTES, p->pid, p->comm,
					       s->mono_ns, (double)p->resident_bytes)) < 0)
			return err;
	}
	for (i = 0; i < 3 && s->have_mono_ns; i++) {
		if (s->mem_kb[i] == UINT64_MAX || s->mem_kb[i] > UINT64_MAX / 1024)
			continue;
		if ((err = pl__recording_point(r, (enum pl_counter_kind)(PL_COUNTER_MEM_AVAILABLE_BYTES + i),
					       0, NULL, s->mono_ns, (double)s->mem_kb[i] * 1024)) < 0)
			return err;
	}
	return 0;
}

static int telemetry_line(void *ctx, const char *text, size_t len)
{
	struct line_state *s = ctx;
	int err;

	s->err = 0;
	s->type[0] = s->comm[0] = s->mechanism[0] = '\0';
	s->have_pid = s->have_mono = s->have_window = s->have_mono_ns = false;
	s->clk_tck = 0;
	s->bully_pid = 0;
	s->bully_comm[0] = '\0';
	s->bully_wbytes_kb = 0;
	s->have_backlog = false;
	s->mem_kb[0] = s->mem_kb[1] = s->mem_kb[2] = UINT64_MAX;
	s->lost[0] = s->lost[1] = s->lost[2] = UINT64_MAX;
	s->n_stages = s->n_procs = 0;
	memset(&s->link, 0, sizeof(s->link));
	err = pl__json_walk(text, len, on_scalar, s);
	if (s->err < 0)
		return s->err;
	if (err == -ENOMEM)
		return err;
	if (err < 0)
		return 1;
	switch (s->f) {
	case PL_REC_LINK_DIAG:
		return take_link_diag(s);
	case PL_REC_PROFILE:
		return take_profile(s);
	case PL_REC_STALL:
		return take_stall(s);
	case PL_REC_RESOURCES:
		return take_resources(s);
	default:
		return 1;
	}
}

int pl__recording_take_telemetry_line(struct pl_recording *r, enum pl_recording_file f,
				      const char *text, size_t len)
{
	struct line_state s = { .r = r, .f = f };
	int took = telemetry_line(&s, text, len);

	free(s.stages);
	free(s.procs);
	r->present[f] = true;
	r->lines[f]++;
	if (took > 0)
		r->bad_lines[f]++;
	return took < 0 ? took : took > 0;
}

int pl__recording_read_telemetry(struct pl_recording *r, int dir_fd, enum pl_recording_file f)
{
	struct line_state s = { .r = r, .f = f };
	int err;

	err = pl__recording_each_line(r, dir_fd, f, telemetry_line, &s);
	free(s.stages);
	free(s.procs);
	return err;
}
