/* What perflink-host does with the bytes that arrive: checks every message
 * (the wire stream: header check, length, checksum, padding; here: sequence),
 * answers frames (echo, SHA-256 digest, or nothing), answers pings, writes
 * frames.csv, and counts everything for the summary. Transport-agnostic:
 * USB and TCP feed it the same way. */
#ifndef PL_HOST_RECEIVER_H
#define PL_HOST_RECEIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wire.h"

enum pl_reply_mode { PL_REPLY_NONE, PL_REPLY_ECHO, PL_REPLY_DIGEST, PL_REPLY_ACK };

/* How the receiver sends a whole padded message back. */
typedef int (*pl__receiver_send_fn)(void *ctx, const void *msg, size_t len);

struct pl_receiver {
	struct pl_wire_stream in;
	enum pl_reply_mode reply;
	pl__receiver_send_fn send;
	void *send_ctx;
	unsigned pad;
	uint64_t out_sequence;
	bool have_sequence;
	uint64_t next_sequence;
	FILE *frames_csv;
	FILE *telemetry_out;  /* every telemetry payload, as JSON lines */
	uint64_t telemetry_bytes;
	uint8_t *out_buf;
	size_t out_cap;
	/* counters */
	uint64_t frames, frame_bytes, telemetry, pings, other;
	uint64_t sequence_gaps, lost_messages, replies_sent, reply_failures;
	/* the device's end-of-stream telemetry: how many frames it sent */
	uint64_t integrity_frames, integrity_bad_frames, integrity_bad_bytes;
	bool stream_ended;
	uint64_t stream_end_frames, stream_end_unconfirmed;
};

int pl__receiver_init(struct pl_receiver *r, enum pl_reply_mode reply, uint32_t max_payload,
		      pl__receiver_send_fn send, void *send_ctx);
/* A new connection: sequences start again, padding is the packet size. */
void pl__receiver_reset(struct pl_receiver *r, unsigned pad);
void pl__receiver_feed(struct pl_receiver *r, const uint8_t *data, size_t len);
uint64_t pl__receiver_malformed(const struct pl_receiver *r);
void pl__receiver_free(struct pl_receiver *r);

#endif
