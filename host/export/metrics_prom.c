/* See metrics_prom.h. */
#include "metrics_prom.h"
#include "summary.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const double quantiles[] = { 0.5, 0.9, 0.99, 0.999 };

void pl__prom_label_value(FILE *out, const char *value)
{
	const char *p;

	fputc('"', out);
	for (p = value; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", out);
		else if (*p == '"')
			fputs("\\\"", out);
		else if (*p == '\n')
			fputs("\\n", out);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void single(FILE *out, const char *name, const char *type, const char *help,
		   uint64_t value)
{
	family(out, name, type, help);
	fprintf(out, "%s %" PRIu64 "\n", name, value);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* a summary of the frames' latencies; round_trip: the device's round
 * trip, else device send to host receive */
static int latency_summary(FILE *out, const struct pl_recording *r, bool round_trip,
			   const char *name, const char *help)
{
	int64_t *v;
	double sum_s = 0;
	size_t i, n = 0, q;

	if (!r->n_frames)
		return 0;
	v = malloc(r->n_frames * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < r->n_frames; i++) {
		const struct pl_recorded_frame *f = &r->frames[i];

		if (round_trip && f->have_round_trip)
			v[n++] = (int64_t)f->round_trip_ns;
		else if (!round_trip && f->have_recv && f->host_recv_device_ns >= f->device_send_ns)
			v[n++] = (int64_t)(f->host_recv_device_ns - f->device_send_ns);
	}
	if (n) {
		qsort(v, n, sizeof(*v), cmp_i64);
		family(out, name, "summary", help);
		for (q = 0; q < sizeof(quantiles) / sizeof(quantiles[0]); q++)
			fprintf(out, "%s{quantile=\"%g\"} %.9f\n", name, quantiles[q],
				(double)pl__percentile_sorted(v, n, quantiles[q]) / 1e9);
		for (i = 0; i < n; i++)
			sum_s += (double)v[i] / 1e9;
		fprintf(out, "%s_sum %.9f\n%s_count %zu\n", name, sum_s, name, n);
	}
	free(v);
	return 0;
}

static void frames(FILE *out, const struct pl_recording *r)
{
	uint64_t bytes = 0;
	size_t i;

	for (i = 0; i < r->n_frames; i++)
		bytes += r->frames[i].bytes;
	single(out, "perflink_frames_total", "counter", "Frames the host received (frames.csv).",
	       r->n_frames);
	single(out, "perflink_frame_bytes_total", "counter",
	       "Payload bytes of the frames the host received.", bytes);
}

static void link_totals(FILE *out, const struct pl_recorded_link *l)
{
	if (!l->have)
		return;
	single(out, "perflink_device_frames_sent_total", "counter",
	       "Frames the device sent (last link_diag).", l->frames_sent);
	single(out, "perflink_device_frames_held_total", "counter",
	       "Frames the device held back while the link was busy.", l->frames_held);
	single(out, "perflink_device_frames_replaced_total", "counter",
	       "Held frames replaced by a newer one, never sent.", l->frames_replaced);
	single(out, "perflink_device_frames_lost_total", "counter",
	       "Held frames whose send failed while the host was there.", l->frames_lost);
	single(out, "perflink_device_messages_dropped_total", "counter",
	       "Messages the device dropped.", l->messages_dropped);
	single(out, "perflink_device_link_bytes_total", "counter",
	       "Bytes the device sent on the link.", l->bytes);
}

static void stage_labels(FILE *out, const char *name, const struct pl_recorded_stage *st)
{
	fprintf(out, "%s{pid=\"%" PRId64 "\",comm=", name, st->pid);
	pl__prom_label_value(out, st->comm);
	fputs(",stage=", out);
	pl__prom_label_value(out, st->stage);
	fputs("} ", out);
}

static void stages(FILE *out, const struct pl_recording *r)
{
	size_t i;

	if (!r->n_stages)
		return;
	family(out, "perflink_stage_calls_total", "counter",
	       "Calls of each stage (last perflink-profile report of each process).");
	for (i = 0; i < r->n_stages; i++) {
		stage_labels(out, "perflink_stage_calls_total", &r->stages[i]);
		fprintf(out, "%" PRIu64 "\n", r->stages[i].calls);
	}
	family(out, "perflink_stage_wall_seconds_total", "counter",
	       "Wall time spent in each stage.");
	for (i = 0; i < r->n_stages; i++) {
		stage_labels(out, "perflink_stage_wall_seconds_total", &r->stages[i]);
		fprintf(out, "%.9f\n", (double)r->stages[i].wall_total_ns / 1e9);
	}
	family(out, "perflink_stage_cpu_seconds_total", "counter",
	       "Thread CPU time spent in each stage.");
	for (i = 0; i < r->n_stages; i++) {
		stage_labels(out, "perflink_stage_cpu_seconds_total", &r->stages[i]);
		fprintf(out, "%.9f\n", (double)r->stages[i].cpu_total_ns / 1e9);
	}
}

/* stall events and their seconds by mechanism, in order of first sight */
static int stalls(FILE *out, const struct pl_recording *r)
{
	const char **mech;
	uint64_t *count, *ns;
	size_t i, j, n = 0;

	if (!r->n_stalls)
		return 0;
	mech = calloc(r->n_stalls, sizeof(*mech));
	count = calloc(r->n_stalls, sizeof(*count));
	ns = calloc(r->n_stalls, sizeof(*ns));
	if (!mech || !count || !ns) {
		free(mech);
		free(count);
		free(ns);
		return -ENOMEM;
	}
	for (i = 0; i < r->n_stalls; i++) {
		for (j = 0; j < n && strcmp(mech[j], r->stalls[i].mechanism) != 0; j++)
			;
		if (j == n)
			mech[n++] = r->stalls[i].mechanism;
		count[j]++;
		ns[j] += r->stalls[i].duration_ns;
	}
	family(out, "perflink_stall_events_total", "counter",
	       "I/O stall events of watched processes, by kernel mechanism.");
	for (j = 0; j < n; j++) {
		fputs("perflink_stall_events_total{mechanism=", out);
		pl__prom_label_value(out, mech[j]);
		fprintf(out, "} %" PRIu64 "\n", count[j]);
	}
	family(out, "perflink_stall_seconds_total", "counter",
	       "Length of the stall events' windows, by kernel mechanism.");
	for (j = 0; j < n; j++) {
		fputs("perflink_stall_seconds_total{mechanism=", out);
		pl__prom_label_value(out, mech[j]);
		fprintf(out, "} %.9f\n", (double)ns[j] / 1e9);
	}
	free(mech);
	free(count);
	free(ns);
	return 0;
}

static void process_labels(FILE *out, const char *name, const struct pl_recorded_process *p)
{
	fprintf(out, "%s{pid=\"%" PRId64 "\",comm=", name, p->pid);
	pl__prom_label_value(out, p->comm);
	fputs("} ", out);
}

static void processes(FILE *out, const struct pl_recording *r)
{
	size_t i;
	bool any_cpu = false, any_rss = false;

	for (i = 0; i < r->n_procs; i++) {
		any_cpu |= r->procs[i].have_cpu && r->clk_tck;
		any_rss |= r->procs[i].have_resident;
	}
	if (any_cpu) {
		family(out, "perflink_process_cpu_seconds_total", "counter",
		       "CPU time of each sampled device process (last resource sample).");
		for (i = 0; i < r->n_procs; i++) {
			if (!r->procs[i].have_cpu)
				continue;
			process_labels(out, "perflink_process_cpu_seconds_total", &r->procs[i]);
			fprintf(out, "%.3f\n", (double)r->procs[i].cpu_ticks / (double)r->clk_tck);
		}
	}
	if (any_rss) {
		family(out, "perflink_process_resident_memory_bytes", "gauge",
		       "Resident memory (VmRSS) of each sampled device process.");
		for (i = 0; i < r->n_procs; i++) {
			if (!r->procs[i].have_resident)
				continue;
			process_labels(out, "perflink_process_resident_memory_bytes", &r->procs[i]);
			fprintf(out, "%" PRIu64 "\n", r->procs[i].resident_bytes);
		}
	}
}

static void skipped(FILE *out, const struct pl_recording *r)
{
	int f;

	family(out, "perflink_export_skipped_lines_total", "counter",
	       "Lines of the recording that did not parse and were left out.");
	for (f = 0; f < PL_REC_FILE_COUNT; f++) {
		if (!r->present[f])
			continue;
		fputs("perflink_export_skipped_lines_total{file=", out);
		pl__prom_label_value(out, pl__recording_file_name((enum pl_recording_file)f));
		fprintf(out, "} %" PRIu64 "\n", r->bad_lines[f]);
	}
	/* lines of the folded stacks inside render_window lines that parsed */
	if (r->present[PL_REC_RENDER_WINDOW])
		fprintf(out, "perflink_export_skipped_lines_total{file=\"%s:folded\"} %" PRIu64 "\n",
			pl__recording_file_name(PL_REC_RENDER_WINDOW), r->bad_stack_lines);
}

int pl__metrics_prom_write(FILE *out, const void *recording)
{
	const struct pl_recording *r = recording;
	int err;

	frames(out, r);
	if ((err = latency_summary(out, r, true, "perflink_frame_round_trip_seconds",
				   "Device send to the host's reply arriving on the device.")) < 0 ||
	    (err = latency_summary(out, r, false, "perflink_frame_one_way_seconds",
				   "Device send to host receive, on the device's clock.")) < 0)
		return err;
	link_totals(out, &r->link);
	stages(out, r);
	if ((err = stalls(out, r)) < 0)
		return err;
	processes(out, r);
	skipped(out, r);
	return ferror(out) ? -EIO : 0;
}
