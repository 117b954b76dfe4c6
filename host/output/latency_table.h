/* Every frame the host received, for frames.csv and the latency summary:
 * what the header said (frame id, sequence, bytes, device send time), when
 * the host had it (host clock, with the clock offset known at that moment),
 * and the round trip the device measured (device send to the host's reply
 * arriving on the device), which comes later in frame_latency telemetry.
 *
 * A growing array with a hash index by frame id (the newest frame with an
 * id wins, so ids restarting after a reconnect do not confuse it). It holds
 * at most max_frames frames (about 80 bytes each with the index); beyond
 * that frames are counted, not kept, so memory is bounded.
 *
 * Two coarse histograms (about 3 % resolution) give running percentiles for
 * the progress line without sorting the table every second. */
#ifndef PL_HOST_LATENCY_TABLE_H
#define PL_HOST_LATENCY_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PL_FRAME_HAVE_OFFSET 1u /* offset_ns was known when the frame arrived */
#define PL_FRAME_HAVE_RTT 2u    /* the device reported the round trip */

struct pl_frame_rec {
	uint64_t frame_id, sequence;
	uint64_t device_send_ns; /* device clock, from the header */
	uint64_t host_recv_ns;   /* host clock */
	int64_t offset_ns;       /* device = host + offset, if PL_FRAME_HAVE_OFFSET */
	uint64_t round_trip_ns;  /* if PL_FRAME_HAVE_RTT */
	uint32_t bytes;
	uint32_t flags;
};

#define PL_LAT_HIST_BUCKETS 2048

struct pl_latency_table {
	struct pl_frame_rec *rec;
	size_t n, cap, max_frames;
	uint32_t *index; /* slot: record index + 1, 0 empty */
	size_t index_cap;
	uint64_t not_kept;     /* frames beyond max_frames */
	uint64_t rtt_known;    /* frames with a round trip */
	uint64_t rtt_unmatched; /* round trips for frames not in the table */
	uint64_t rtt_invalid;  /* reply before send */
	uint64_t hist_rtt[PL_LAT_HIST_BUCKETS], hist_rtt_n;
	uint64_t hist_one_way[PL_LAT_HIST_BUCKETS], hist_one_way_n;
};

int pl__latency_table_init(struct pl_latency_table *t, size_t max_frames);
void pl__latency_table_free(struct pl_latency_table *t);
/* A frame arrived. have_offset/offset_ns: the clock offset known now.
 * 0, -ENOSPC (table full; counted in not_kept) or -ENOMEM. */
int pl__latency_table_add(struct pl_latency_table *t, uint64_t frame_id, uint64_t sequence,
			  uint32_t bytes, uint64_t device_send_ns, uint64_t host_recv_ns,
			  bool have_offset, int64_t offset_ns);
/* The device's round trip for frame_id (both times on the device's clock).
 * 0, -ENOENT (no such frame; counted) or -EINVAL (reply before send;
 * counted). */
int pl__latency_table_set_round_trip(struct pl_latency_table *t, uint64_t frame_id,
				     uint64_t send_ns, uint64_t reply_ns);
/* One-way latency of a frame (device send to host receive, on the device
 * clock): with the offset known when it arrived, else with fallback (the
 * final estimate) if have_fallback. false when unknown. */
bool pl__frame_one_way_ns(const struct pl_frame_rec *r, bool have_fallback, int64_t fallback_ns,
			  int64_t *one_way_ns);
/* frames.csv: a header line and one line per frame, empty cells where
 * unknown. 0 or -EIO. */
int pl__latency_table_write_csv(const struct pl_latency_table *t, FILE *out, bool have_fallback,
				int64_t fallback_ns);
/* Approximate running percentile (p in [0, 1]) in ns from the histograms;
 * false when they are empty. */
bool pl__latency_table_quick(const struct pl_latency_table *t, bool round_trip, double p,
			     double *ns);

#endif
