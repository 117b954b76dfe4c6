/* The round trip of each frame, measured on the device: the link notes when
 * a frame went out, and when the host's REPLY to it came back. The pairs are
 * sent to the host in batches as telemetry lines
 *   {"type":"frame_latency","frames":[[frame_id,send_ns,reply_ns],...],"dropped":N}
 * (both times the device's CLOCK_MONOTONIC), so perflink-host can write the
 * true round trip next to what it measured itself (docs/wire.md, "Latency").
 *
 * Bounded: the last PL_LATENCY_FRAMES frames of the connection are
 * remembered. A reply to a frame not among them (never sent, or sent
 * longer ago) or a second reply to one is not a round trip: the link drops
 * it (docs/wire.md, "Replies"). Not thread-safe. */
#ifndef PL_DAEMON_LINK_LATENCY_H
#define PL_DAEMON_LINK_LATENCY_H

#include <stdbool.h>
#include <stdint.h>

#include "json_writer.h"

#define PL_LATENCY_FRAMES 4096
#define PL_LATENCY_BATCH 256

struct pl_latency_sent {
	uint64_t frame_id, send_ns;
	bool answered;
};

struct pl_latency {
	struct pl_latency_sent sent[PL_LATENCY_FRAMES];
	unsigned next;  /* where the next sent frame goes */
	unsigned count; /* how many of sent[] are valid */
	uint64_t batch[PL_LATENCY_BATCH][3];
	unsigned batch_len;
	uint64_t replies, unmatched, repeated, dropped;
	uint64_t last_rtt_ns, max_rtt_ns;
};

void pl__latency_reset(struct pl_latency *lt);
void pl__latency_sent(struct pl_latency *lt, uint64_t frame_id, uint64_t send_ns);
enum pl_latency_match {
	PL_LATENCY_MATCHED,  /* a frame sent and not answered yet: *rtt_ns set */
	PL_LATENCY_REPEATED, /* that frame was answered already (counted in repeated) */
	PL_LATENCY_UNKNOWN,  /* no such frame among those remembered (unmatched) */
};

/* A reply to frame_id arrived at reply_ns. */
enum pl_latency_match pl__latency_reply(struct pl_latency *lt, uint64_t frame_id,
					uint64_t reply_ns, uint64_t *rtt_ns);
bool pl__latency_batch_full(const struct pl_latency *lt);
/* Write the batch as one frame_latency object into j (which the caller
 * began and finishes) and empty it. false when there was nothing. */
bool pl__latency_take_batch(struct pl_latency *lt, struct pl_json *j);
/* The batch could not be sent: count its entries as dropped. */
void pl__latency_batch_lost(struct pl_latency *lt, unsigned entries);

#endif
