/* See summary.h. */
#include "summary.h"
#include "atomic_file.h"
#include "payload_hash.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int64_t pl__percentile_sorted(const int64_t *sorted, size_t n, double p)
{
	double rank = ceil(p * (double)n);
	size_t i = rank < 1 ? 0 : (size_t)rank - 1;

	if (i >= n)
		i = n - 1;
	return sorted[i];
}

int pl__latency_summarize(const struct pl_latency_table *t, bool have_offset, int64_t offset_ns,
			  struct pl_latency_summary *out)
{
	int64_t *rtt = NULL, *one_way = NULL;
	size_t i, n_rtt = 0, n_one_way = 0;

	memset(out, 0, sizeof(*out));
	out->p50_ms = out->p99_ms = out->p999_ms = out->max_ms = NAN;
	out->one_way_p50_ms = out->one_way_p99_ms = NAN;
	out->source = "none";
	if (t->n) {
		rtt = malloc(t->n * sizeof(*rtt));
		one_way = malloc(t->n * sizeof(*one_way));
		if (!rtt || !one_way) {
			free(rtt);
			free(one_way);
			return -ENOMEM;
		}
	}
	for (i = 0; i < t->n; i++) {
		const struct pl_frame_rec *r = &t->rec[i];
		int64_t v;

		if (r->flags & PL_FRAME_HAVE_RTT)
			rtt[n_rtt++] = (int64_t)r->round_trip_ns;
		if (pl__frame_one_way_ns(r, have_offset, offset_ns, &v))
			one_way[n_one_way++] = v;
	}
	if (n_one_way) {
		qsort(one_way, n_one_way, sizeof(*one_way), cmp_i64);
		out->one_way_n = n_one_way;
		out->one_way_p50_ms = (double)pl__percentile_sorted(one_way, n_one_way, 0.50) / 1e6;
		out->one_way_p99_ms = (double)pl__percentile_sorted(one_way, n_one_way, 0.99) / 1e6;
	}
	if (n_rtt || n_one_way) {
		int64_t *v = n_rtt ? rtt : one_way;
		size_t n = n_rtt ? n_rtt : n_one_way;

		if (n_rtt)
			qsort(rtt, n_rtt, sizeof(*rtt), cmp_i64);
		out->source = n_rtt ? "device_round_trip" : "one_way";
		out->n = n;
		out->p50_ms = (double)pl__percentile_sorted(v, n, 0.50) / 1e6;
		out->p99_ms = (double)pl__percentile_sorted(v, n, 0.99) / 1e6;
		out->p999_ms = (double)pl__percentile_sorted(v, n, 0.999) / 1e6;
		out->max_ms = (double)v[n - 1] / 1e6;
	}
	free(rtt);
	free(one_way);
	return 0;
}

int pl__summary_json(const struct pl_run_summary *s, struct pl_json *j)
{
	struct pl_latency_summary ls;
	const struct pl_device_telemetry *dt = s->telemetry;
	double span_s;
	int err, i;

	if ((err = pl__latency_summarize(s->table, s->have_offset, s->offset_ns, &ls)) < 0)
		return err;
	/* throughput over the frames' own span: connecting and waiting for the
	 * first frame is not the link's speed */
	span_s = s->last_frame_ns > s->first_frame_ns
			 ? (double)(s->last_frame_ns - s->first_frame_ns) / 1e9
			 : s->seconds;
	pl__json_begin_object(j, NULL);
	pl__json_double(j, "p50_ms", ls.p50_ms, 3);
	pl__json_double(j, "p99_ms", ls.p99_ms, 3);
	pl__json_double(j, "p999_ms", ls.p999_ms, 3);
	pl__json_double(j, "max_ms", ls.max_ms, 3);
	pl__json_str(j, "latency_source", ls.source);
	pl__json_u64(j, "latency_frames", ls.n);
	pl__json_double(j, "one_way_p50_ms", ls.one_way_p50_ms, 3);
	pl__json_double(j, "one_way_p99_ms", ls.one_way_p99_ms, 3);
	pl__json_u64(j, "one_way_frames", ls.one_way_n);
	pl__json_u64(j, "frames", s->frames);
	if (dt && dt->have_frames_held)
		pl__json_u64(j, "held_frames", dt->frames_held);
	else
		pl__json_null(j, "held_frames");
	pl__json_u64(j, "bytes", s->bytes);
	pl__json_double(j, "mbps", span_s > 0 ? (double)s->bytes / 1e6 / span_s : NAN, 3);
	pl__json_double(j, "seconds", s->seconds, 3);
	if (s->have_offset) {
		pl__json_i64(j, "clock_offset_ns", s->offset_ns);
		pl__json_u64(j, "clock_offset_rtt_ns", s->offset_rtt_ns);
	} else {
		pl__json_null(j, "clock_offset_ns");
		pl__json_null(j, "clock_offset_rtt_ns");
	}
	pl__json_u64(j, "clock_offset_samples", s->offset_samples);
	pl__json_str(j, "transport", s->transport);
	pl__device_hello_json(s->device, j);
	{
		struct pl_payload_hash_choice hash;

		pl__payload_hash_describe(&hash);
		pl__json_str(j, "payload_hash", hash.name);
	}
	pl__json_u64(j, "connects", s->connects);
	pl__json_u64(j, "sequence_gaps", s->sequence_gaps);
	pl__json_u64(j, "lost_messages", s->lost_messages);
	pl__json_u64(j, "replies", s->replies);
	pl__json_u64(j, "reply_failures", s->reply_failures);
	pl__json_u64(j, "reply_drops", s->reply_drops);
	pl__json_u64(j, "frames_not_kept", s->table->not_kept);
	pl__json_begin_object(j, "malformed");
	pl__json_begin_object(j, "wire");
	for (i = 1; i < PL_WIRE_ERROR_COUNT; i++)
		pl__json_u64(j, pl__wire_error_name((enum pl_wire_error)i),
			     s->wire_errors ? s->wire_errors[i] : 0);
	pl__json_end_object(j);
	pl__json_begin_object(j, "telemetry");
	for (i = 0; i < PL_TM_PROBLEM_COUNT; i++)
		pl__json_u64(j, pl__telemetry_problem_name((enum pl_telemetry_problem)i),
			     dt ? dt->problems[i] : 0);
	pl__json_end_object(j);
	pl__json_u64(j, "pong", s->bad_pongs);
	pl__json_end_object(j);
	pl__json_begin_object(j, "frame_latency");
	pl__json_u64(j, "lines", dt ? dt->latency_lines : 0);
	pl__json_u64(j, "entries", dt ? dt->latency_entries : 0);
	pl__json_u64(j, "frames_with_round_trip", s->table->rtt_known);
	pl__json_u64(j, "device_dropped", dt ? dt->latency_device_dropped : 0);
	pl__json_end_object(j);
	pl__json_u64(j, "pings_sent", s->pings_sent);
	pl__json_u64(j, "pongs", s->pongs);
	if (dt)
		pl__device_telemetry_diag_json(dt, j, "device_send");
	else
		pl__json_null(j, "device_send");
	pl__json_end_object(j);
	return j->failed || j->depth ? -ENOMEM : 0;
}

int pl__summary_write(const struct pl_run_summary *s, const char *path)
{
	struct pl_atomic_file a;
	struct pl_json j;
	const char *text;
	int err;

	pl__json_init(&j);
	if ((err = pl__summary_json(s, &j)) < 0)
		goto out;
	text = pl__json_finish(&j);
	if (!text) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = pl__atomic_file_open(&a, path)) < 0)
		goto out;
	if (fputs(text, a.f) == EOF) {
		pl__atomic_file_abort(&a);
		err = -EIO;
		goto out;
	}
	err = pl__atomic_file_commit(&a);
out:
	pl__json_free(&j);
	return err;
}
