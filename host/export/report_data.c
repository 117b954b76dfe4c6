/* See report_data.h. */
#include "report_data.h"
#include "recording.h"
#include "report_html.h"
#include "summary.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const result_names[] = { "ok", "EAGAIN", "ENODATA", "EINTR", "error" };

/* The frames' latency: the device's round trip where any frame has one
 * (frames without are left out), else device send to host receive. */
struct latency {
	bool round_trip;
	size_t n;
	size_t *order; /* frames with a latency, by device send time */
};

static bool frame_latency(const struct pl_recorded_frame *f, bool round_trip, uint64_t *ns)
{
	*ns = 0;
	if (round_trip) {
		*ns = f->round_trip_ns;
		return f->have_round_trip;
	}
	if (!f->have_recv || f->host_recv_device_ns < f->device_send_ns)
		return false;
	*ns = f->host_recv_device_ns - f->device_send_ns;
	return true;
}

static const struct pl_recording *sort_r;

static int by_send(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, k = *(const size_t *)b;
	uint64_t x = sort_r->frames[i].device_send_ns, y = sort_r->frames[k].device_send_ns;

	if (x != y)
		return x < y ? -1 : 1;
	return i < k ? -1 : i > k; /* then in the file's order */
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int latency_init(struct latency *l, const struct pl_recording *r)
{
	uint64_t ns;
	size_t i;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < r->n_frames; i++)
		l->round_trip |= r->frames[i].have_round_trip;
	if (!r->n_frames)
		return 0;
	l->order = malloc(r->n_frames * sizeof(*l->order));
	if (!l->order)
		return -ENOMEM;
	for (i = 0; i < r->n_frames; i++)
		if (frame_latency(&r->frames[i], l->round_trip, &ns))
			l->order[l->n++] = i;
	sort_r = r;
	qsort(l->order, l->n, sizeof(*l->order), by_send);
	return 0;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* seconds since t0 (the first frame's send, or the first time of anything) */
static double rel_s(uint64_t ns, uint64_t t0)
{
	return ns >= t0 ? (double)(ns - t0) / 1e9 : -(double)(t0 - ns) / 1e9;
}

static uint64_t first_time(const struct pl_recording *r, const struct latency *l)
{
	uint64_t t0 = UINT64_MAX;
	size_t i;

	if (l->n)
		return r->frames[l->order[0]].device_send_ns;
	for (i = 0; i < r->n_stalls; i++)
		if (r->stalls[i].start_ns < t0)
			t0 = r->stalls[i].start_ns;
	for (i = 0; i < r->n_points; i++)
		if (r->points[i].mono_ns < t0)
			t0 = r->points[i].mono_ns;
	return t0 == UINT64_MAX ? 0 : t0;
}

static int latency_section(struct pl_json *j, const struct pl_recording *r,
			   const struct latency *l, uint64_t t0)
{
	static const struct { const char *key; double p; } q[] = {
		{ "p50_ms", 0.5 }, { "p99_ms", 0.99 }, { "p999_ms", 0.999 }, { "max_ms", 1.0 },
	};
	int64_t *v;
	uint64_t ns;
	size_t i;

	if (!l->n) {
		pl__json_null(j, "latency");
		return 0;
	}
	v = malloc(l->n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < l->n; i++) {
		frame_latency(&r->frames[l->order[i]], l->round_trip, &ns);
		v[i] = (int64_t)ns;
	}
	pl__json_begin_object(j, "latency");
	pl__json_str(j, "source", l->round_trip ? "device_round_trip" : "one_way");
	pl__json_u64(j, "frames", l->n);
	/* the series before v is sorted: device send time order */
	pl__json_begin_array(j, "t_s");
	for (i = 0; i < l->n; i++)
		pl__json_double(j, NULL, rel_s(r->frames[l->order[i]].device_send_ns, t0), 6);
	pl__json_end_array(j);
	pl__json_begin_array(j, "ms");
	for (i = 0; i < l->n; i++)
		pl__json_double(j, NULL, ms((uint64_t)v[i]), 3);
	pl__json_end_array(j);
	qsort(v, l->n, sizeof(*v), cmp_i64);
	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++)
		pl__json_double(j, q[i].key, ms((uint64_t)pl__percentile_sorted(v, l->n, q[i].p)), 3);
	pl__json_end_object(j);
	free(v);
	return 0;
}

static void stall_object(struct pl_json *j, const struct pl_recorded_stall *s, uint64_t t0)
{
	pl__json_begin_object(j, NULL);
	pl__json_i64(j, "pid", s->pid);
	pl__json_str(j, "comm", s->comm);
	pl__json_str(j, "mechanism", s->mechanism);
	pl__json_double(j, "start_s", rel_s(s->start_ns, t0), 6);
	pl__json_double(j, "ms", ms(s->duration_ns), 3);
	if (s->bully_pid) {
		pl__json_i64(j, "bully_pid", s->bully_pid);
		pl__json_str(j, "bully_comm", s->bully_comm);
		pl__json_double(j, "bully_wbytes_kb", s->bully_wbytes_kb, 0);
	}
	pl__json_end_object(j);
}

/* Each call's stage median wall time (per process and stage). */
static const struct pl_recording *calls_r;

static int by_stage_wall(const void *a, const void *b)
{
	const struct pl_recorded_call *x = &calls_r->calls[*(const size_t *)a];
	const struct pl_recorded_call *y = &calls_r->calls[*(const size_t *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->stage != y->stage)
		return x->stage < y->stage ? -1 : 1;
	return x->wall_ns < y->wall_ns ? -1 : x->wall_ns > y->wall_ns;
}

static uint64_t *stage_medians(const struct pl_recording *r)
{
	uint64_t *median;
	size_t *idx, i, start;

	median = malloc((r->n_calls ? r->n_calls : 1) * sizeof(*median));
	idx = malloc((r->n_calls ? r->n_calls : 1) * sizeof(*idx));
	if (!median || !idx) {
		free(median);
		free(idx);
		return NULL;
	}
	for (i = 0; i < r->n_calls; i++)
		idx[i] = i;
	calls_r = r;
	qsort(idx, r->n_calls, sizeof(*idx), by_stage_wall);
	for (start = 0; start < r->n_calls; ) {
		const struct pl_recorded_call *c = &r->calls[idx[start]];
		size_t end = start, k;
		uint64_t m;

		while (end < r->n_calls && r->calls[idx[end]].pid == c->pid &&
		       r->calls[idx[end]].stage == c->stage)
			end++;
		m = r->calls[idx[start + (end - start - 1) / 2]].wall_ns; /* lower median */
		for (k = start; k < end; k++)
			median[idx[k]] = m;
		start = end;
	}
	free(idx);
	return median;
}

static bool overlaps(uint64_t a0, uint64_t a_ns, uint64_t b0, uint64_t b_ns)
{
	return a0 < b0 + b_ns && b0 < a0 + a_ns;
}

static void frame_events(struct pl_json *j, const struct pl_recording *r,
			 const uint64_t *median, uint64_t send, uint64_t lat)
{
	size_t i, shown = 0, more = 0;

	pl__json_begin_array(j, "calls");
	for (i = 0; i < r->n_calls; i++) {
		const struct pl_recorded_call *c = &r->calls[i];

		if (!overlaps(c->start_ns, c->wall_ns, send, lat) ||
		    c->wall_ns <= PL_REPORT_SLOW_CALL_FACTOR * median[i])
			continue;
		if (shown == PL_REPORT_EVENTS_PER_FRAME) {
			more++;
			continue;
		}
		shown++;
		pl__json_begin_object(j, NULL);
		pl__json_i64(j, "pid", c->pid);
		pl__json_u64(j, "tid", c->tid);
		pl__json_str(j, "comm", r->names[c->comm]);
		pl__json_str(j, "stage", r->names[c->stage]);
		pl__json_double(j, "at_ms", c->start_ns >= send ? ms(c->start_ns - send)
								 : -ms(send - c->start_ns), 3);
		pl__json_double(j, "wall_ms", ms(c->wall_ns), 3);
		pl__json_double(j, "cpu_ms", ms(c->cpu_ns), 3);
		pl__json_double(j, "median_ms", ms(median[i]), 3);
		pl__json_str(j, "result", c->result < 5 ? result_names[c->result] : "?");
		pl__json_end_object(j);
	}
	pl__json_end_array(j);
	pl__json_u64(j, "calls_not_shown", more);
}

/* longest first; equal ones in the order they were sent (qsort need not
 * keep it) */
static int latency_desc(const void *a, const void *b, bool round_trip)
{
	uint64_t x = 0, y = 0;

	frame_latency(&sort_r->frames[*(const size_t *)a], round_trip, &x);
	frame_latency(&sort_r->frames[*(const size_t *)b], round_trip, &y);
	if (x != y)
		return x > y ? -1 : 1;
	return by_send(a, b);
}

static int by_round_trip_desc(const void *a, const void *b)
{
	return latency_desc(a, b, true);
}

static int by_one_way_desc(const void *a, const void *b)
{
	return latency_desc(a, b, false);
}

static int worst_frames(struct pl_json *j, const struct pl_recording *r,
			const struct latency *l, uint64_t t0)
{
	uint64_t *median, lat;
	size_t *idx, i, k, n;

	pl__json_begin_array(j, "worst");
	if (!l->n) {
		pl__json_end_array(j);
		return 0;
	}
	idx = malloc(l->n * sizeof(*idx));
	median = stage_medians(r);
	if (!idx || !median) {
		free(idx);
		free(median);
		return -ENOMEM;
	}
	memcpy(idx, l->order, l->n * sizeof(*idx));
	sort_r = r;
	qsort(idx, l->n, sizeof(*idx), l->round_trip ? by_round_trip_desc : by_one_way_desc);
	n = l->n < PL_REPORT_WORST_FRAMES ? l->n : PL_REPORT_WORST_FRAMES;
	for (i = 0; i < n; i++) {
		const struct pl_recorded_frame *f = &r->frames[idx[i]];

		frame_latency(f, l->round_trip, &lat);
		pl__json_begin_object(j, NULL);
		pl__json_u64(j, "frame_id", f->frame_id);
		pl__json_double(j, "send_s", rel_s(f->device_send_ns, t0), 6);
		pl__json_double(j, "ms", ms(lat), 3);
		pl__json_u64(j, "bytes", f->bytes);
		frame_events(j, r, median, f->device_send_ns, lat);
		pl__json_begin_array(j, "stalls");
		for (k = 0; k < r->n_stalls; k++)
			if (overlaps(r->stalls[k].start_ns, r->stalls[k].duration_ns,
				     f->device_send_ns, lat))
				stall_object(j, &r->stalls[k], t0);
		pl__json_end_array(j);
		pl__json_end_object(j);
	}
	pl__json_end_array(j);
	free(idx);
	free(median);
	return 0;
}

static void stages(struct pl_json *j, const struct pl_recording *r)
{
	size_t i;

	pl__json_begin_array(j, "stages");
	for (i = 0; i < r->n_stages; i++) {
		const struct pl_recorded_stage *s = &r->stages[i];

		pl__json_begin_object(j, NULL);
		pl__json_i64(j, "pid", s->pid);
		pl__json_str(j, "comm", s->comm);
		pl__json_str(j, "stage", s->stage);
		pl__json_u64(j, "calls", s->calls);
		pl__json_double(j, "wall_ms", ms(s->wall_total_ns), 3);
		pl__json_double(j, "cpu_ms", ms(s->cpu_total_ns), 3);
		pl__json_end_object(j);
	}
	pl__json_end_array(j);
}

/* The render sampler's stacks merged per process: equal stacks of one
 * pid over all its windows are summed (a run of many windows repeats most
 * of its stacks, and the page draws the sum anyway). Past
 * PL_REPORT_FLAME_STACKS distinct stacks a process keeps its heaviest and
 * one stack "[N other stacks]" of the rest's samples, so that a run of
 * mostly distinct deep stacks still gives a page a browser draws. */
struct stack_ref {
	int64_t pid;
	size_t stack;
	uint64_t count; /* merged: the sum over equal stacks */
};

static int by_pid_frames(const void *a, const void *b)
{
	const struct stack_ref *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(sort_r->stacks[x->stack].frames, sort_r->stacks[y->stack].frames);
}

static int by_count_desc(const void *a, const void *b)
{
	const struct stack_ref *x = a, *y = b;

	return x->count > y->count ? -1 : x->count < y->count;
}

/* one process's merged stacks, refs[0..n) */
static void flame_process(struct pl_json *j, const struct pl_recording *r,
			  struct stack_ref *refs, size_t n)
{
	const struct pl_recorded_window *first = NULL;
	uint64_t samples = 0, windows = 0, other = 0;
	char name[64];
	size_t w, i;

	for (w = 0; w < r->n_windows; w++)
		if (r->windows[w].pid == refs[0].pid) {
			first = first ? first : &r->windows[w];
			windows++;
		}
	if (n > PL_REPORT_FLAME_STACKS)
		qsort(refs, n, sizeof(*refs), by_count_desc);
	pl__json_begin_object(j, NULL);
	pl__json_i64(j, "pid", refs[0].pid);
	pl__json_str(j, "comm", first ? first->comm : "");
	pl__json_u64(j, "windows", windows);
	pl__json_begin_array(j, "stacks");
	for (i = 0; i < n; i++) {
		samples += refs[i].count;
		if (i >= PL_REPORT_FLAME_STACKS) {
			other += refs[i].count;
			continue;
		}
		pl__json_begin_array(j, NULL);
		pl__json_str(j, NULL, r->stacks[refs[i].stack].frames);
		pl__json_u64(j, NULL, refs[i].count);
		pl__json_end_array(j);
	}
	if (other) {
		snprintf(name, sizeof(name), "[%zu other stacks]", n - PL_REPORT_FLAME_STACKS);
		pl__json_begin_array(j, NULL);
		pl__json_str(j, NULL, name);
		pl__json_u64(j, NULL, other);
		pl__json_end_array(j);
	}
	pl__json_end_array(j);
	pl__json_u64(j, "samples", samples);
	pl__json_u64(j, "distinct_stacks", n);
	pl__json_end_object(j);
}

static int flame(struct pl_json *j, const struct pl_recording *r)
{
	struct stack_ref *refs;
	size_t w, s, n = 0, m = 0, i, start;

	pl__json_begin_array(j, "flame");
	refs = malloc((r->n_stacks ? r->n_stacks : 1) * sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	for (w = 0; w < r->n_windows; w++)
		for (s = r->windows[w].first_stack;
		     s < r->windows[w].first_stack + r->windows[w].n_stacks; s++)
			refs[n++] = (struct stack_ref){ r->windows[w].pid, s, r->stacks[s].count };
	sort_r = r;
	qsort(refs, n, sizeof(*refs), by_pid_frames);
	/* merge equal stacks in place: refs[0..m) */
	for (i = 0; i < n; i++) {
		if (m && refs[m - 1].pid == refs[i].pid &&
		    strcmp(r->stacks[refs[m - 1].stack].frames, r->stacks[refs[i].stack].frames) == 0)
			refs[m - 1].count += refs[i].count;
		else
			refs[m++] = refs[i];
	}
	for (start = 0; start < m; start = i) {
		for (i = start; i < m && refs[i].pid == refs[start].pid; i++)
			;
		flame_process(j, r, refs + start, i - start);
	}
	pl__json_end_array(j);
	free(refs);
	return 0;
}

/* one series of a process: [[t_s...], [value...]]; CPU % from the step
 * in ticks between two samples (needs clk_tck), RSS in MiB */
static void process_series(struct pl_json *j, const struct pl_recording *r, int64_t pid,
			   enum pl_counter_kind kind, uint64_t t0, const char *key)
{
	const struct pl_recorded_point *prev = NULL;
	int pass;
	size_t i;

	pl__json_begin_array(j, key);
	for (pass = 0; pass < 2; pass++) {
		pl__json_begin_array(j, NULL);
		prev = NULL;
		for (i = 0; i < r->n_points; i++) {
			const struct pl_recorded_point *p = &r->points[i];
			double v;

			if (p->kind != kind || p->pid != pid)
				continue;
			if (kind == PL_COUNTER_PROCESS_CPU_TICKS) {
				const struct pl_recorded_point *a = prev;

				prev = p;
				if (!a || !r->clk_tck || p->mono_ns <= a->mono_ns || p->value < a->value)
					continue;
				v = (p->value - a->value) / (double)r->clk_tck /
				    ((double)(p->mono_ns - a->mono_ns) / 1e9) * 100;
			} else {
				v = p->value / (1024.0 * 1024.0);
			}
			if (pass == 0)
				pl__json_double(j, NULL, rel_s(p->mono_ns, t0), 3);
			else
				pl__json_double(j, NULL, v, 2);
		}
		pl__json_end_array(j);
	}
	pl__json_end_array(j);
}

/* a chart per process, in the order the samples first name them */
static int resources(struct pl_json *j, const struct pl_recording *r, uint64_t t0)
{
	int64_t *seen = NULL;
	size_t i, k, n_seen = 0, cap_seen = 0;

	pl__json_begin_array(j, "processes");
	for (i = 0; i < r->n_points; i++) {
		const struct pl_recorded_point *p = &r->points[i];

		if (p->kind != PL_COUNTER_PROCESS_CPU_TICKS && p->kind != PL_COUNTER_PROCESS_RSS_BYTES)
			continue;
		for (k = 0; k < n_seen && seen[k] != p->pid; k++)
			;
		if (k < n_seen)
			continue;
		if (pl__recording_grow((void **)&seen, &cap_seen, n_seen, sizeof(*seen)) < 0) {
			free(seen);
			return -ENOMEM;
		}
		seen[n_seen++] = p->pid;
		pl__json_begin_object(j, NULL);
		pl__json_i64(j, "pid", p->pid);
		pl__json_str(j, "comm", r->names[p->comm]);
		process_series(j, r, p->pid, PL_COUNTER_PROCESS_CPU_TICKS, t0, "cpu_pct");
		process_series(j, r, p->pid, PL_COUNTER_PROCESS_RSS_BYTES, t0, "rss_mib");
		pl__json_end_object(j);
	}
	pl__json_end_array(j);
	free(seen);
	return 0;
}

static void drops(struct pl_json *j, const struct pl_recording *r)
{
	int f;

	if (r->link.have) {
		pl__json_begin_object(j, "link");
		pl__json_u64(j, "frames_sent", r->link.frames_sent);
		pl__json_u64(j, "frames_held", r->link.frames_held);
		pl__json_u64(j, "frames_replaced", r->link.frames_replaced);
		pl__json_u64(j, "frames_lost", r->link.frames_lost);
		pl__json_u64(j, "messages_dropped", r->link.messages_dropped);
		pl__json_u64(j, "bytes", r->link.bytes);
		pl__json_end_object(j);
	} else {
		pl__json_null(j, "link");
	}
	pl__json_begin_array(j, "files");
	for (f = 0; f < PL_REC_FILE_COUNT; f++) {
		pl__json_begin_object(j, NULL);
		pl__json_str(j, "file", pl__recording_file_name((enum pl_recording_file)f));
		pl__json_bool(j, "present", r->present[f]);
		pl__json_u64(j, "lines", r->lines[f]);
		pl__json_u64(j, "skipped", r->bad_lines[f]);
		pl__json_end_object(j);
	}
	pl__json_end_array(j);
	pl__json_u64(j, "skipped_stack_lines", r->bad_stack_lines);
	pl__json_begin_array(j, "losses");
	for (f = 0; (size_t)f < r->n_losses; f++) {
		const struct pl_recorded_loss *l = &r->losses[f];

		pl__json_begin_object(j, NULL);
		pl__json_i64(j, "pid", l->pid);
		pl__json_str(j, "comm", l->comm);
		if (l->have_report && l->dropped_calls != UINT64_MAX)
			pl__json_u64(j, "dropped_calls", l->dropped_calls);
		if (l->have_report && l->site_overflow_calls != UINT64_MAX)
			pl__json_u64(j, "site_overflow_calls", l->site_overflow_calls);
		if (l->have_report && l->daemon_dropped_reports != UINT64_MAX)
			pl__json_u64(j, "daemon_dropped_reports", l->daemon_dropped_reports);
		if (l->have_events)
			pl__json_u64(j, "events_dropped", l->events_dropped);
		pl__json_end_object(j);
	}
	pl__json_end_array(j);
}

int pl__report_data(struct pl_json *j, const struct pl_recording *r)
{
	struct latency l;
	uint64_t t0;
	size_t i;
	int err;

	if ((err = latency_init(&l, r)) < 0)
		return err;
	t0 = first_time(r, &l);
	pl__json_bool(j, "empty", !r->n_frames && !r->n_stages && !r->n_stalls && !r->n_calls &&
				  !r->n_windows && !r->n_points && !r->link.have);
	pl__json_u64(j, "frames", r->n_frames);
	pl__json_u64(j, "calls", r->n_calls);
	pl__json_u64(j, "slow_call_factor", PL_REPORT_SLOW_CALL_FACTOR);
	drops(j, r);
	err = latency_section(j, r, &l, t0);
	if (!err) {
		pl__json_begin_array(j, "stalls");
		for (i = 0; i < r->n_stalls; i++)
			stall_object(j, &r->stalls[i], t0);
		pl__json_end_array(j);
		err = worst_frames(j, r, &l, t0);
	}
	if (!err) {
		stages(j, r);
		err = flame(j, r);
	}
	if (!err)
		err = resources(j, r, t0);
	free(l.order);
	return err;
}
