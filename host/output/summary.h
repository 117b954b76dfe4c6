/* The end of a run: latency percentiles from the latency table, and
 * summary.json (written atomically). Percentiles are nearest-rank: p50 of
 * n values is the ceil(0.5 n)-th smallest, max the largest.
 *
 * Which latency: the round trip the device measured (its send to the host's
 * reply arriving on it; one clock, no offset needed) where the device
 * reported it; else the one-way latency (device send to host receive,
 * converted with the clock offset); "latency_source" says which. */
#ifndef PL_HOST_SUMMARY_H
#define PL_HOST_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device_hello.h"
#include "device_telemetry.h"
#include "json_writer.h"
#include "latency_table.h"
#include "wire.h"

struct pl_latency_summary {
	const char *source; /* "device_round_trip", "one_way" or "none" */
	size_t n;           /* frames behind p50..max */
	double p50_ms, p99_ms, p999_ms, max_ms;
	size_t one_way_n;
	double one_way_p50_ms, one_way_p99_ms;
};

/* Nearest-rank percentile of n sorted values (p in [0, 1]). */
int64_t pl__percentile_sorted(const int64_t *sorted, size_t n, double p);
/* 0 or -ENOMEM. Unknown values are NaN. */
int pl__latency_summarize(const struct pl_latency_table *t, bool have_offset, int64_t offset_ns,
			  struct pl_latency_summary *out);

struct pl_run_summary {
	const struct pl_latency_table *table;
	const struct pl_device_telemetry *telemetry;
	const struct pl_device_hello *device; /* NULL: none kept */
	const char *transport; /* "usb" or "tcp" */
	uint64_t connects;
	uint64_t frames, bytes, sequence_gaps, lost_messages;
	uint64_t replies, reply_failures, reply_drops;
	const uint64_t *wire_errors; /* PL_WIRE_ERROR_COUNT counters */
	uint64_t pings_sent, pongs, bad_pongs;
	double seconds;                     /* the whole run */
	uint64_t first_frame_ns, last_frame_ns; /* host clock; 0: none */
	bool have_offset;
	int64_t offset_ns;
	uint64_t offset_rtt_ns, offset_samples;
};

/* Append the summary object to j (not finished: no newline). 0 or -ENOMEM. */
int pl__summary_json(const struct pl_run_summary *s, struct pl_json *j);
/* Write it to path atomically. 0 or -errno. */
int pl__summary_write(const struct pl_run_summary *s, const char *path);

#endif
