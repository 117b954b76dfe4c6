/* The host's latency table and summary: round trips matched to frames by
 * id, one-way latency through the clock offset, nearest-rank percentiles
 * on known data, frames.csv cells, bounded memory, and 1M frames. */
#include "json_find.h"
#include "latency_table.h"
#include "summary.h"
#include "tap.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define MS 1000000ull

/* The value at path in a JSON document, as text ("" when absent). */
static const char *json_at(const char *doc, const char *path)
{
	static struct json_found f;

	f = json_find(doc, path);
	return f.hits == 1 ? f.value : "";
}

static int near(double a, double b)
{
	return fabs(a - b) < 1e-6;
}

int main(void)
{
	struct pl_latency_table t;
	struct pl_latency_summary ls;
	struct pl_json j;
	int64_t one_way, sorted[4] = { 10, 20, 30, 40 };
	char *csv = NULL;
	size_t csv_len = 0;
	FILE *f;
	uint64_t i;
	double q;
	int ok;

	TAP_OK(pl__percentile_sorted(sorted, 4, 0.5) == 20, "nearest rank: p50 of 4 is the 2nd");
	TAP_OK(pl__percentile_sorted(sorted, 4, 0.99) == 40, "p99 of 4 is the 4th");
	TAP_OK(pl__percentile_sorted(sorted, 4, 0) == 10, "p0 is the smallest");

	/* 1000 frames; the device reports round trips of 1..1000 ms, in an
	 * order unlike the frames' */
	TAP_OK(pl__latency_table_init(&t, 100000) == 0, "table");
	for (i = 0; i < 1000; i++)
		pl__latency_table_add(&t, 5000 + i, i, 1024, 1000 * MS + i * MS, 0, false, 0);
	for (i = 0; i < 1000; i++) {
		uint64_t k = (i * 7919) % 1000; /* a permutation */

		if (pl__latency_table_set_round_trip(&t, 5000 + k, 77 * MS, 77 * MS + (k + 1) * MS) != 0)
			break;
	}
	TAP_EQ_U64(i, 1000, "every round trip found its frame");
	TAP_EQ_U64(t.rtt_known, 1000, "counted");
	TAP_OK(pl__latency_summarize(&t, false, 0, &ls) == 0, "summarised");
	TAP_EQ_STR(ls.source, "device_round_trip", "the device's round trip is the source");
	TAP_OK(near(ls.p50_ms, 500) && near(ls.p99_ms, 990) && near(ls.p999_ms, 999) &&
		       near(ls.max_ms, 1000),
	       "p50 %.3f p99 %.3f p99.9 %.3f max %.3f of 1..1000 ms", ls.p50_ms, ls.p99_ms,
	       ls.p999_ms, ls.max_ms);
	TAP_OK(isnan(ls.one_way_p50_ms) && ls.one_way_n == 0, "no one-way latency without an offset");
	TAP_OK(pl__latency_table_quick(&t, true, 0.5, &q) && fabs(q / 1e6 - 500) < 500 * 0.04,
	       "the progress line's quick p50 is close (%.3f ms)", q / 1e6);
	TAP_OK(pl__latency_table_quick(&t, true, 0.99, &q) && fabs(q / 1e6 - 990) < 990 * 0.04,
	       "and its p99 (%.3f ms)", q / 1e6);

	/* hostile reports */
	TAP_OK(pl__latency_table_set_round_trip(&t, 42, 0, MS) == -ENOENT, "unknown frame: -ENOENT");
	TAP_OK(pl__latency_table_set_round_trip(&t, 5000, 2 * MS, MS) == -EINVAL,
	       "reply before send: -EINVAL");
	TAP_EQ_U64(t.rtt_unmatched + t.rtt_invalid, 2, "both counted");
	pl__latency_table_free(&t);

	/* one-way: device send at 10 ms on the device clock; the host had it
	 * at 3 ms host time, and the device clock is 9 ms ahead: 2 ms */
	pl__latency_table_init(&t, 1000);
	pl__latency_table_add(&t, 1, 0, 100, 10 * MS, 3 * MS, true, 9 * (int64_t)MS);
	pl__latency_table_add(&t, 2, 1, 100, 11 * MS, 4 * MS + MS / 2, false, 0);
	pl__latency_table_add(&t, 3, 2, 100, 12 * MS, 5 * MS, true, 9 * (int64_t)MS);
	TAP_OK(pl__frame_one_way_ns(&t.rec[0], false, 0, &one_way) && one_way == (int64_t)(2 * MS),
	       "one way with the offset known on arrival");
	TAP_OK(!pl__frame_one_way_ns(&t.rec[1], false, 0, &one_way),
	       "unknown without an offset on arrival or later");
	TAP_OK(pl__frame_one_way_ns(&t.rec[1], true, 7 * (int64_t)MS, &one_way) &&
		       one_way == (int64_t)(MS / 2),
	       "the final estimate serves frames that came before the first pong");
	TAP_OK(pl__latency_summarize(&t, true, 7 * (int64_t)MS, &ls) == 0 &&
		       strcmp(ls.source, "one_way") == 0 && ls.n == 3,
	       "without round trips the source is one way (%s)", ls.source);
	TAP_OK(near(ls.max_ms, 2) && near(ls.p50_ms, 2) && near(ls.one_way_p50_ms, 2),
	       "its percentiles (p50 %.3f, max %.3f)", ls.p50_ms, ls.max_ms);
	pl__latency_table_set_round_trip(&t, 3, 5 * MS, 8 * MS);

	f = open_memstream(&csv, &csv_len);
	ok = f && pl__latency_table_write_csv(&t, f, false, 0) == 0;
	if (f)
		fclose(f);
	TAP_OK(ok, "frames.csv written");
	TAP_EQ_STR(csv,
		   "frame_id,sequence,bytes,device_send_ns,host_recv_device_ns,one_way_ms,round_trip_ms\n"
		   "1,0,100,10000000,12000000,2.000000,\n"
		   "2,1,100,11000000,,,\n"
		   "3,2,100,12000000,14000000,2.000000,3.000000\n",
		   "empty cells where unknown");
	free(csv);

	/* the summary as JSON, read back */
	{
		struct pl_device_telemetry dt;
		uint64_t errors[PL_WIRE_ERROR_COUNT] = { 0 };
		struct pl_run_summary s = {
			.table = &t, .telemetry = &dt, .transport = "tcp", .frames = 3, .bytes = 300,
			.wire_errors = errors, .seconds = 2, .first_frame_ns = 3 * MS,
			.last_frame_ns = 5 * MS, .have_offset = true, .offset_ns = 9 * (int64_t)MS,
			.offset_rtt_ns = 12345, .offset_samples = 4,
		};
		const char *doc;
		static const char diag[] =
			"{\"type\":\"link_diag\",\"last_send\":{\"bytes\":4096,\"wait_us\":1.5},"
			"\"totals\":{\"frames_held\":7,\"frames_sent\":90}}\nnot json\n";

		errors[PL_WIRE_BAD_CHECKSUM] = 2;
		pl__device_telemetry_init(&dt, &t, NULL);
		pl__device_telemetry_feed(&dt, diag, strlen(diag));
		pl__json_init(&j);
		ok = pl__summary_json(&s, &j) == 0;
		doc = pl__json_finish(&j);
		TAP_OK(ok && doc, "summary.json built");
		doc = doc ? doc : "";
		TAP_EQ_STR(json_at(doc, "latency_source"), "device_round_trip",
			   "round trip where the device reported one");
		TAP_EQ_STR(json_at(doc, "max_ms"), "3.000", "max_ms");
		TAP_EQ_STR(json_at(doc, "one_way_p99_ms"), "2.500",
			   "one_way_p99_ms (frame 2 through the final offset)");
		TAP_EQ_STR(json_at(doc, "held_frames"), "7", "held_frames from link_diag totals");
		TAP_EQ_STR(json_at(doc, "device_send.last_send.wait_us"), "1.500",
			   "the device's last_send copied");
		TAP_EQ_STR(json_at(doc, "device_send.totals.frames_sent"), "90", "and its totals");
		TAP_EQ_STR(json_at(doc, "clock_offset_ns"), "9000000", "clock_offset_ns");
		TAP_EQ_STR(json_at(doc, "clock_offset_rtt_ns"), "12345", "and its rtt");
		TAP_EQ_STR(json_at(doc, "malformed.wire.bad_checksum"), "2", "wire errors by reason");
		TAP_EQ_STR(json_at(doc, "malformed.telemetry.bad_json"), "1",
			   "telemetry errors by reason");
		TAP_EQ_STR(json_at(doc, "mbps"), "0.150", "MB/s over the frames' span (300 B in 2 ms)");
		pl__json_free(&j);
		pl__device_telemetry_free(&dt);
	}
	pl__latency_table_free(&t);

	/* bounded: frames beyond max_frames are counted, not kept */
	pl__latency_table_init(&t, 1000);
	for (i = 0; i < 1500; i++)
		pl__latency_table_add(&t, i, i, 1, i, i, false, 0);
	TAP_EQ_U64(t.n, 1000, "the table stops at max_frames");
	TAP_EQ_U64(t.not_kept, 500, "and counts the rest");
	TAP_OK(t.cap <= 1000, "without allocating beyond it");
	pl__latency_table_free(&t);

	/* a reconnect restarts frame ids: the newest frame with an id wins */
	pl__latency_table_init(&t, 1000);
	pl__latency_table_add(&t, 0, 0, 1, 0, 0, false, 0);
	pl__latency_table_add(&t, 0, 0, 1, 0, 0, false, 0);
	pl__latency_table_set_round_trip(&t, 0, 0, MS);
	TAP_OK(!(t.rec[0].flags & PL_FRAME_HAVE_RTT) && (t.rec[1].flags & PL_FRAME_HAVE_RTT),
	       "a repeated frame id: the round trip goes to the newest");
	pl__latency_table_free(&t);

	/* a million frames */
	pl__latency_table_init(&t, 2000000);
	for (i = 0; i < 1000000; i++)
		if (pl__latency_table_add(&t, i * 3, i, 1, i, i, true, 0) < 0)
			break;
	TAP_EQ_U64(i, 1000000, "1M frames kept");
	for (i = 0; i < 1000000; i++)
		if (pl__latency_table_set_round_trip(&t, i * 3, 0, i + 1) < 0)
			break;
	TAP_EQ_U64(t.rtt_known, 1000000, "and each found by id");
	TAP_OK(pl__latency_summarize(&t, true, 0, &ls) == 0 && near(ls.max_ms, 1e6 / 1e6),
	       "summarised (max %.6f ms)", ls.max_ms);
	pl__latency_table_free(&t);
	return tap_done();
}
