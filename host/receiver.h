/* What perflink-host does with the bytes that arrive: checks every message
 * (the wire stream: header check, length, checksum, padding; here: sequence),
 * answers frames (echo, SHA-256 digest, an ack, the application's reply or
 * nothing), answers pings, hands frames, pongs and telemetry to the
 * program's hooks, and counts everything for the summary.
 * Transport-agnostic: USB and TCP feed it the same way. */
#ifndef PL_HOST_RECEIVER_H
#define PL_HOST_RECEIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wire.h"

/* PL_REPLY_APP: the reply hook writes the reply (libperflink-host). */
enum pl_reply_mode { PL_REPLY_NONE, PL_REPLY_ECHO, PL_REPLY_DIGEST, PL_REPLY_ACK, PL_REPLY_APP };

/* How the receiver sends a whole padded message back. */
typedef int (*pl__receiver_send_fn)(void *ctx, const void *msg, size_t len);

/* What the program wants to see of checked messages, beside the replies
 * the receiver makes itself (each may be NULL). now_ns: host clock when the
 * message was taken out of the stream. */
struct pl_receiver_hooks {
	void (*frame)(void *ctx, const struct pl_wire_header *h, uint64_t now_ns);
	/* the device's HELLO payload (docs/wire.md), as it came */
	void (*hello)(void *ctx, const uint8_t *payload, size_t len);
	void (*pong)(void *ctx, const struct pl_wire_header *h, const uint8_t *payload,
		     uint64_t now_ns);
	void (*telemetry)(void *ctx, const uint8_t *payload, size_t len);
	/* PL_REPLY_APP: write the reply to frame h (payload) into out, at
	 * most cap bytes, and return its length; 0 sends nothing, more than
	 * cap is counted in reply_failures and sends nothing. */
	size_t (*reply)(void *ctx, const struct pl_wire_header *h, const uint8_t *payload,
			uint8_t *out, size_t cap);
};

struct pl_receiver {
	struct pl_wire_stream in;
	enum pl_reply_mode reply;
	pl__receiver_send_fn send;
	void *send_ctx;
	unsigned pad;
	uint64_t out_sequence;
	bool have_sequence;
	uint64_t next_sequence;
	const struct pl_receiver_hooks *hooks;
	void *hooks_ctx;
	FILE *telemetry_out;  /* every telemetry payload, as JSON lines */
	uint64_t telemetry_bytes;
	uint8_t *out_buf;
	size_t out_cap;
	/* counters */
	uint64_t frames, frame_bytes, telemetry, hellos, pings, pongs, pings_sent, other;
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
/* Send a PING stamped with the host's CLOCK_MONOTONIC, for the clock
 * offset. 0 or the send function's error. */
/* The host's HELLO (docs/wire.md): what it is. */
int pl__receiver_send_hello(struct pl_receiver *r, const char *program);
int pl__receiver_send_ping(struct pl_receiver *r);
void pl__receiver_feed(struct pl_receiver *r, const uint8_t *data, size_t len);
uint64_t pl__receiver_malformed(const struct pl_receiver *r);
void pl__receiver_free(struct pl_receiver *r);

#endif
