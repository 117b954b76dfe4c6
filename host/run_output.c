/* See run_output.h. */
#include "run_output.h"
#include "atomic_file.h"
#include "clock.h"
#include "export.h"
#include "log.h"
#include "summary.h"
#include "transport.h"

#include <math.h>
#include <stdio.h>

struct csv_job {
	const struct pl_host *h;
	bool have_offset;
	int64_t offset;
};

static int fill_csv(FILE *f, const void *ctx)
{
	const struct csv_job *job = ctx;

	return pl__latency_table_write_csv(&job->h->table, f, job->have_offset, job->offset);
}

static int write_csv(const struct pl_host *h, const char *path, bool have_offset, int64_t offset)
{
	const struct csv_job job = { h, have_offset, offset };
	int err;

	if ((err = pl__atomic_file_write(path, fill_csv, &job)) < 0) {
		pl__log_warnc(err, "%s", path);
		return 1;
	}
	return 0;
}

static void print_summary(const struct pl_host *h, const struct pl_run_summary *s)
{
	const struct pl_receiver *rx = &h->session.rx;
	struct pl_latency_summary ls;

	printf("frames %llu  bytes %llu  malformed %llu  sequence_gaps %llu  replies %llu  "
	       "reply_failures %llu  telemetry %llu  connects %llu  seconds %.1f\n",
	       (unsigned long long)rx->frames, (unsigned long long)rx->frame_bytes,
	       (unsigned long long)pl__receiver_malformed(rx),
	       (unsigned long long)rx->sequence_gaps, (unsigned long long)rx->replies_sent,
	       (unsigned long long)rx->reply_failures, (unsigned long long)rx->telemetry,
	       (unsigned long long)s->connects, s->seconds);
	if (s->have_offset)
		printf("clock offset %lld ns (device - host; best ping round trip %.3f ms, %llu "
		       "samples)\n",
		       (long long)s->offset_ns, (double)s->offset_rtt_ns / 1e6,
		       (unsigned long long)s->offset_samples);
	if (pl__latency_summarize(&h->table, s->have_offset, s->offset_ns, &ls) == 0 && ls.n)
		printf("latency (%s, %zu frames): p50 %.3f ms  p99 %.3f ms  p99.9 %.3f ms  max %.3f "
		       "ms\n",
		       ls.source, ls.n, ls.p50_ms, ls.p99_ms, ls.p999_ms, ls.max_ms);
	if (rx->integrity_frames)
		printf("integrity: frames %llu, frames with wrong bytes %llu, wrong bytes %llu\n",
		       (unsigned long long)rx->integrity_frames,
		       (unsigned long long)rx->integrity_bad_frames,
		       (unsigned long long)rx->integrity_bad_bytes);
	fflush(stdout);
}

int pl__host_report(struct pl_host *h, const struct pl_host_options *opt)
{
	const struct pl_receiver *rx = &h->session.rx;
	struct pl_run_summary s = {
		.table = &h->table,
		.telemetry = &h->session.dt,
		.device = &h->session.device,
		.transport = pl__host_transport_name(h->session.link),
		.frames = rx->frames,
		.bytes = rx->frame_bytes,
		.sequence_gaps = rx->sequence_gaps,
		.lost_messages = rx->lost_messages,
		.replies = rx->replies_sent,
		.reply_failures = rx->reply_failures,
		.wire_errors = rx->in.errors,
		.pings_sent = rx->pings_sent,
		.pongs = rx->pongs,
		.bad_pongs = h->session.bad_pongs,
		.seconds = (double)(h->end_ns - h->start_ns) / 1e9,
		.first_frame_ns = h->first_frame_ns,
		.last_frame_ns = h->last_frame_ns,
		.offset_samples = h->session.clock.samples,
	};
	int status = 0, err;

	{
		struct pl_host_transport_stats ts;

		pl__host_transport_get_stats(h->session.link, &ts);
		s.connects = ts.connects;
		s.reply_drops = ts.dropped_messages;
	}
	s.have_offset = pl__clock_offset_best(&h->session.clock, &s.offset_ns, &s.offset_rtt_ns);
	print_summary(h, &s);

	if (opt->out) {
		const struct pl_export_options eo = {
			.trace_max_bytes = (uint64_t)(opt->trace_max_mb * 1e6),
			.symbols = { opt->sysroot, opt->debug_dir },
		};
		char path[4096];

		snprintf(path, sizeof(path), "%s/frames.csv", opt->out);
		status |= write_csv(h, path, s.have_offset, s.offset_ns);
		snprintf(path, sizeof(path), "%s/summary.json", opt->out);
		if ((err = pl__summary_write(&s, path)) < 0) {
			pl__log_warnc(err, "%s", path);
			status = 1;
		}
		/* the same as `perflink-host export DIR` afterwards */
		if (pl__export_dir(opt->out, &eo) < 0)
			status = 1;
	}
	if (opt->frames_csv)
		status |= write_csv(h, opt->frames_csv, s.have_offset, s.offset_ns);

	if (pl__receiver_malformed(rx) || rx->sequence_gaps || rx->integrity_bad_frames)
		status = 1;
	if (opt->frames > 0 && rx->frames < (uint64_t)opt->frames && !rx->stream_ended)
		status = 1;
	if (rx->stream_ended && (rx->frames > rx->stream_end_frames ||
				 rx->frames + rx->stream_end_unconfirmed < rx->stream_end_frames)) {
		pl__log_warnx("the device sent %llu frames (%llu unconfirmed), %llu arrived",
			      (unsigned long long)rx->stream_end_frames,
			      (unsigned long long)rx->stream_end_unconfirmed,
			      (unsigned long long)rx->frames);
		status = 1;
	}
	return status;
}

int pl__host_report_drain(const struct pl_host *h)
{
	double s = (double)(h->last_byte_ns - h->first_byte_ns) / 1e9;
	double cpu = (double)(h->last_byte_cpu_ns - h->first_byte_cpu_ns) / 1e9;

	/* cpu_pct: this process's CPU between the first and the last byte */
	printf("drained %llu bytes in %.3f s: MB/s %.1f host_cpu_pct %.1f\n",
	       (unsigned long long)h->drained_bytes, s,
	       s > 0 ? (double)h->drained_bytes / 1e6 / s : 0.0, s > 0 ? 100.0 * cpu / s : 0.0);
	return h->drained_bytes ? 0 : 1;
}
