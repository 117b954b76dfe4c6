/* The perflink wire format (device <-> host), version 1. docs/wire.md is the
 * specification a third party writes a host from; this header is its C form.
 *
 * Every message is a 48-byte little-endian header, the payload, and zero
 * padding up to a multiple of the endpoint's packet size, so that a message
 * never ends in a short packet by accident. The header carries its own check
 * so that a receiver that lost its place can find the next real header and
 * never trusts a length it has not verified. */
#ifndef PL_COMMON_WIRE_H
#define PL_COMMON_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PL_WIRE_MAGIC 0x4b4e4c50u /* "PLNK" as little-endian bytes */
#define PL_WIRE_VERSION 1
#define PL_WIRE_HEADER_SIZE 48
/* Largest payload either side accepts; a header claiming more is malformed. */
#define PL_WIRE_MAX_PAYLOAD (16u << 20)

enum pl_wire_type {
	PL_MSG_HELLO = 1,     /* capabilities, JSON payload */
	PL_MSG_FRAME = 2,     /* an application frame (latency-critical) */
	PL_MSG_REPLY = 3,     /* the host's reply to a frame (frame_id matches) */
	PL_MSG_TELEMETRY = 4, /* JSON lines: profile reports, stall events, ... */
	PL_MSG_PING = 5,      /* clock offset: payload is empty, send_time_ns set */
	PL_MSG_PONG = 6,      /* answer to PING: payload = 2 x u64 (ping send, pong receive) */
	PL_MSG_COMMAND = 7,   /* a host command, JSON payload */
};
#define PL_WIRE_TYPE_MAX PL_MSG_COMMAND

/* flags */
#define PL_WIRE_FLAG_INTEGRITY 0x0001u /* frame of the integrity diagnostic */
#define PL_WIRE_FLAGS_KNOWN PL_WIRE_FLAG_INTEGRITY /* the others must be 0 */

/* The header as the program sees it (host byte order). */
struct pl_wire_header {
	uint8_t version;
	uint8_t type;
	uint16_t flags;
	uint32_t payload_len;
	uint64_t sequence;
	uint64_t payload_xxh3; /* XXH3-64 of the payload bytes (seed 0) */
	uint64_t send_time_ns; /* sender's CLOCK_MONOTONIC */
	uint64_t frame_id;
};

/* Why a message was rejected; counted by receivers. */
enum pl_wire_error {
	PL_WIRE_OK = 0,
	PL_WIRE_BAD_MAGIC,
	PL_WIRE_BAD_VERSION,
	PL_WIRE_BAD_HEADER_CHECK,
	PL_WIRE_BAD_TYPE,
	PL_WIRE_BAD_LENGTH,
	PL_WIRE_BAD_CHECKSUM,
	PL_WIRE_BAD_PADDING,
	PL_WIRE_BAD_FLAGS, /* a flag bit this version does not define */
	PL_WIRE_ERROR_COUNT
};
const char *pl__wire_error_name(enum pl_wire_error e);

/* Bytes on the wire for a payload of len, padded to pad (a power of two or
 * 0/1 for no padding). */
size_t pl__wire_message_size(uint32_t payload_len, uint32_t pad);

/* Fill the 48 header bytes for hdr, computing the payload checksum from
 * payload (payload_len bytes). */
void pl__wire_encode_header(uint8_t out[PL_WIRE_HEADER_SIZE], struct pl_wire_header *hdr,
			    const void *payload);
/* The payload checksum alone, for a sender that computes it ahead of time
 * (where the frame is made, off the link's critical path)... */
uint64_t pl__wire_payload_hash(const void *payload, size_t len);
/* ...and the header with hdr->payload_xxh3 as given. */
void pl__wire_encode_header_hashed(uint8_t out[PL_WIRE_HEADER_SIZE], struct pl_wire_header *hdr);

/* Check and decode 48 header bytes. Does not look at the payload. */
enum pl_wire_error pl__wire_decode_header(const uint8_t in[PL_WIRE_HEADER_SIZE],
					  struct pl_wire_header *hdr);

/* Check a whole message (header already decoded): payload checksum and that
 * the padding after it is zero. msg points at the header; len is what was
 * received for this message (at least pl__wire_message_size). */
enum pl_wire_error pl__wire_check_body(const struct pl_wire_header *hdr, const uint8_t *msg,
				       size_t len, uint32_t pad);

/* A stream receiver: bytes in any pieces go in, whole checked messages come
 * out. Malformed input is counted and skipped by resynchronising on the next
 * header that checks; the claimed length of a header is believed only after
 * its header check passed, and never beyond the receiver's max_payload, so
 * a hostile peer cannot make it allocate or wait for an absurd length. A
 * message whose header checks but whose body does not is skipped whole.
 * The buffer is allocated once, at init.
 *
 * Linear in its input whatever the input: the bytes waiting are
 * buf[start, start + len), consumed by moving start, and moved to the front
 * only when a feed needs the room (each byte at most once per message it
 * waited in); each byte is hashed as a body at most once. examined_bytes
 * counts what was moved and hashed, so a test can hold it to that. */
struct pl_wire_stream {
	uint8_t *buf;
	size_t cap, start, len;
	uint32_t pad;
	uint32_t max_payload;
	uint64_t errors[PL_WIRE_ERROR_COUNT];
	uint64_t skipped_bytes;
	uint64_t messages;
	uint64_t examined_bytes; /* moved inside the buffer or hashed as a body */
	size_t pending_consume; /* the message handed out last, dropped on the next call */
};

int pl__wire_stream_init(struct pl_wire_stream *s, uint32_t pad, uint32_t max_payload);
void pl__wire_stream_free(struct pl_wire_stream *s);
/* A new session on the same buffer (the peer reconnected): whatever was
 * buffered is dropped, messages are padded to pad from now on; the counters
 * of malformed input carry on. */
void pl__wire_stream_reset(struct pl_wire_stream *s, uint32_t pad);
/* Append up to len bytes; returns how many were taken (less than len when the
 * buffer is full: call pl__wire_stream_next until it returns 0, then feed the
 * rest). */
size_t pl__wire_stream_feed(struct pl_wire_stream *s, const void *data, size_t len);
/* The next whole message: 1 with *hdr and *payload (valid until the next
 * call), 0 when more bytes are needed. Malformed bytes are skipped inside. */
int pl__wire_stream_next(struct pl_wire_stream *s, struct pl_wire_header *hdr,
			 const uint8_t **payload);
/* After pl__wire_stream_next returned 0: how many more bytes complete the
 * message whose header is buffered and checks; 0 when no such header is
 * there (nothing buffered, less than a header, or bytes that are no
 * message). A reader sizes its next reads by it (daemon/link/
 * link_aio_rx.h). */
size_t pl__wire_stream_wanted(const struct pl_wire_stream *s);

#endif
