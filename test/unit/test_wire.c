/* The wire format: round trips, every rejection reason, and the stream
 * receiver's resynchronisation on damaged, split and hostile input. */
#include "wire.h"
#include "tap.h"

#include <stdlib.h>

static size_t build(uint8_t *out, uint8_t type, uint64_t seq, const void *payload,
		    uint32_t len, uint32_t pad)
{
	struct pl_wire_header h = { .type = type, .payload_len = len, .sequence = seq,
				    .send_time_ns = 1000 + seq, .frame_id = seq * 10 };
	size_t total = pl__wire_message_size(len, pad);

	memset(out, 0, total);
	pl__wire_encode_header(out, &h, payload);
	memcpy(out + PL_WIRE_HEADER_SIZE, payload, len);
	return total;
}

static void test_roundtrip(void)
{
	uint8_t msg[1024];
	struct pl_wire_header h;
	size_t n = build(msg, PL_MSG_FRAME, 7, "hello", 5, 512);

	TAP_EQ_U64(n, 512, "48 + 5 bytes pad to one 512-byte packet");
	TAP_EQ_U64(pl__wire_message_size(464, 512), 512, "exactly one packet");
	TAP_EQ_U64(pl__wire_message_size(465, 512), 1024, "one byte over pads to two");
	TAP_OK(msg[0] == 'P' && msg[1] == 'L' && msg[2] == 'N' && msg[3] == 'K',
	       "magic reads PLNK on the wire");
	TAP_OK(pl__wire_decode_header(msg, &h) == PL_WIRE_OK, "header decodes");
	TAP_OK(h.type == PL_MSG_FRAME && h.sequence == 7 && h.frame_id == 70 &&
		       h.send_time_ns == 1007 && h.payload_len == 5,
	       "fields survive");
	TAP_OK(pl__wire_check_body(&h, msg, n, 512) == PL_WIRE_OK, "body checks");

	msg[PL_WIRE_HEADER_SIZE + 1] ^= 1;
	TAP_OK(pl__wire_check_body(&h, msg, n, 512) == PL_WIRE_BAD_CHECKSUM, "flipped payload bit");
	msg[PL_WIRE_HEADER_SIZE + 1] ^= 1;
	msg[300] = 1;
	TAP_OK(pl__wire_check_body(&h, msg, n, 512) == PL_WIRE_BAD_PADDING, "non-zero padding");
	msg[300] = 0;
	TAP_OK(pl__wire_check_body(&h, msg, 100, 512) == PL_WIRE_BAD_LENGTH, "short message");
	msg[20] ^= 0x80;
	TAP_OK(pl__wire_decode_header(msg, &h) == PL_WIRE_BAD_HEADER_CHECK, "flipped sequence bit");
	msg[20] ^= 0x80;
	msg[0] = 'X';
	TAP_OK(pl__wire_decode_header(msg, &h) == PL_WIRE_BAD_MAGIC, "bad magic");

	/* flags: the integrity bit is known, any other is rejected even with
	 * its header check right */
	{
		struct pl_wire_header f = { .type = PL_MSG_FRAME, .flags = PL_WIRE_FLAG_INTEGRITY };

		pl__wire_encode_header(msg, &f, NULL);
		TAP_OK(pl__wire_decode_header(msg, &h) == PL_WIRE_OK && h.flags == 1,
		       "the integrity flag is accepted");
		f.flags = 0x0100;
		pl__wire_encode_header(msg, &f, NULL);
		TAP_OK(pl__wire_decode_header(msg, &h) == PL_WIRE_BAD_FLAGS,
		       "a flag bit version 1 does not define is rejected: %s",
		       pl__wire_error_name(PL_WIRE_BAD_FLAGS));
	}
}

/* Feed a byte stream in pieces of the given size and collect sequences. */
static int drain(struct pl_wire_stream *s, const uint8_t *data, size_t len, size_t piece,
		 uint64_t *seqs, int max)
{
	struct pl_wire_header h;
	const uint8_t *payload;
	size_t off = 0;
	int got = 0;

	while (off < len) {
		size_t want = len - off < piece ? len - off : piece;
		size_t took = pl__wire_stream_feed(s, data + off, want);

		off += took;
		while (pl__wire_stream_next(s, &h, &payload) == 1) {
			if (got < max)
				seqs[got] = h.sequence;
			got++;
		}
	}
	return got;
}

static void test_stream(void)
{
	static uint8_t wire[64 * 1024];
	uint8_t payload[3000];
	struct pl_wire_stream s;
	uint64_t seqs[16];
	size_t off = 0, bad_at;
	unsigned i;
	int got;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7);
	off += build(wire + off, PL_MSG_FRAME, 1, payload, 3000, 512);
	memcpy(wire + off, "garbage!", 8); /* stray bytes between messages */
	off += 8;
	off += build(wire + off, PL_MSG_TELEMETRY, 2, "{}", 2, 512);
	bad_at = off;
	off += build(wire + off, PL_MSG_FRAME, 3, payload, 1000, 512);
	wire[bad_at + PL_WIRE_HEADER_SIZE + 10] ^= 0xff; /* corrupt message 3's payload */
	off += build(wire + off, PL_MSG_FRAME, 4, payload, 10, 512);

	TAP_OK(pl__wire_stream_init(&s, 512, 8192) == 0, "stream init");
	got = drain(&s, wire, off, 1, seqs, 16);
	TAP_EQ_U64(got, 3, "byte-by-byte: three good messages");
	TAP_OK(seqs[0] == 1 && seqs[1] == 2 && seqs[2] == 4, "in order, the bad one skipped");
	TAP_EQ_U64(s.errors[PL_WIRE_BAD_CHECKSUM], 1, "one checksum error counted");
	TAP_OK(s.skipped_bytes >= 8, "garbage bytes counted as skipped");
	pl__wire_stream_free(&s);

	pl__wire_stream_init(&s, 512, 8192);
	got = drain(&s, wire, off, 4093, seqs, 16);
	TAP_EQ_U64(got, 3, "odd-sized pieces: same three");
	pl__wire_stream_free(&s);

	/* A valid header claiming more than the receiver allows: skipped, and
	 * the receiver never waits for the claimed bytes. */
	pl__wire_stream_init(&s, 512, 1024);
	off = build(wire, PL_MSG_FRAME, 5, payload, 3000, 512);
	off += build(wire + off, PL_MSG_FRAME, 6, payload, 100, 512);
	got = drain(&s, wire, off, 512, seqs, 16);
	TAP_OK(got == 1 && seqs[0] == 6, "oversized message skipped, next one received");
	TAP_EQ_U64(s.errors[PL_WIRE_BAD_LENGTH], 1, "bad length counted");
	pl__wire_stream_free(&s);

	TAP_OK(pl__wire_stream_init(&s, 500, 1024) < 0, "padding must be a power of two");
}

/* A peer that reconnects mid-message: the half message it left behind is
 * dropped, the next session's messages come out whole at their new padding,
 * and the counts of malformed input carry on. */
static void test_stream_reset(void)
{
	static uint8_t wire[8192];
	uint8_t payload[600] = { 0 };
	struct pl_wire_stream s;
	uint64_t seqs[4];
	size_t n;
	int got;

	pl__wire_stream_init(&s, 512, 4096);
	n = build(wire, PL_MSG_FRAME, 1, payload, sizeof(payload), 512);
	got = drain(&s, wire, n / 2, 64, seqs, 4);
	TAP_EQ_U64(got, 0, "half a message: nothing yet");
	s.errors[PL_WIRE_BAD_MAGIC] = 3;

	pl__wire_stream_reset(&s, 1024);
	n = build(wire, PL_MSG_FRAME, 2, payload, sizeof(payload), 1024);
	got = drain(&s, wire, n, 64, seqs, 4);
	TAP_OK(got == 1 && seqs[0] == 2, "after reset: the new session's message, whole");
	TAP_EQ_U64(n, 1024, "padded to the new session's packet");
	TAP_EQ_U64(s.skipped_bytes, 0, "the dropped half was not taken for garbage");
	TAP_EQ_U64(s.errors[PL_WIRE_BAD_MAGIC], 3, "error counts carry over a reset");
	pl__wire_stream_free(&s);
}

/* What a reader must still read for the message it is in (the device sizes
 * its bulk OUT reads by it, so that a message completes without a
 * zero-length packet). */
static void test_stream_wanted(void)
{
	static uint8_t wire[8192];
	uint8_t payload[1500] = { 1 };
	struct pl_wire_header hdr;
	const uint8_t *p;
	struct pl_wire_stream s;
	size_t n;

	pl__wire_stream_init(&s, 512, 4096);
	TAP_EQ_U64(pl__wire_stream_wanted(&s), 0, "nothing buffered: no message begun");
	n = build(wire, PL_MSG_REPLY, 1, payload, sizeof(payload), 512);
	TAP_EQ_U64(n, 2048, "a 1500-byte reply is 4 packets");
	pl__wire_stream_feed(&s, wire, 20);
	TAP_EQ_U64(pl__wire_stream_wanted(&s), 0, "less than a header: not known yet");
	pl__wire_stream_feed(&s, wire + 20, 512 - 20);
	TAP_EQ_U64(pl__wire_stream_next(&s, &hdr, &p), 0, "one packet of it: no message yet");
	TAP_EQ_U64(pl__wire_stream_wanted(&s), 2048 - 512, "the header says: the other 3 packets");
	pl__wire_stream_feed(&s, wire + 512, 1024);
	TAP_EQ_U64(pl__wire_stream_wanted(&s), 512, "then the last packet");
	pl__wire_stream_feed(&s, wire + 1536, 512);
	TAP_EQ_U64(pl__wire_stream_next(&s, &hdr, &p), 1, "whole: the message");
	TAP_EQ_U64(pl__wire_stream_wanted(&s), 0, "handed out: nothing more wanted");
	TAP_EQ_U64(pl__wire_stream_next(&s, &hdr, &p), 0, "and nothing more to hand out");
	TAP_EQ_U64(pl__wire_stream_wanted(&s), 0, "still nothing wanted");

	/* a header that does not check, or claims too much, wants nothing:
	 * the reader goes on a packet at a time while the receiver skips */
	n = build(wire, PL_MSG_REPLY, 2, payload, sizeof(payload), 512);
	wire[40] ^= 1;
	pl__wire_stream_feed(&s, wire, 512);
	TAP_EQ_U64(pl__wire_stream_wanted(&s), 0, "a header that fails its check: nothing wanted");
	pl__wire_stream_reset(&s, 512);
	{
		static uint8_t big[PL_WIRE_HEADER_SIZE];
		struct pl_wire_header h = { .type = PL_MSG_REPLY, .payload_len = 8192 };

		pl__wire_encode_header_hashed(big, &h);
		pl__wire_stream_feed(&s, big, sizeof(big));
		TAP_EQ_U64(pl__wire_stream_wanted(&s), 0,
			   "a length beyond the receiver's limit is not believed");
	}
	pl__wire_stream_free(&s);
}

/* n bytes (a multiple of 64) of messages whose headers check and whose
 * bodies do not (their payload hash is wrong). Magic-filled: one message, its body "PLNK" over and over.
 * Nested: a header that checks every 64 bytes, each claiming a payload that
 * ends where the n bytes end, so that a receiver that looked for the next
 * header inside a bad message would hash the rest again for each. */
static size_t hostile(uint8_t *out, size_t n, bool nested)
{
	static const uint8_t magic[4] = { 'P', 'L', 'N', 'K' };
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = magic[i % 4];
	for (i = 0; i + 128 <= n; i += 64) {
		/* a payload hash that cannot match: made up, not computed, so
		 * that making the input stays linear too */
		struct pl_wire_header h = { .type = PL_MSG_FRAME, .sequence = i,
					    .payload_len = (uint32_t)(n - i - 64),
					    .payload_xxh3 = 0x9e3779b97f4a7c15ull };

		pl__wire_encode_header_hashed(out + i, &h);
		if (!nested)
			break;
	}
	return n;
}

/* The receiver's work grows with its input, never faster, however hostile
 * the input: each size is fed in 64 KiB pieces as a transport delivers it,
 * with a good message after it that must still come out. */
static void test_stream_linear(void)
{
	static uint8_t wire[(16u << 20) + 4096];
	struct pl_wire_stream s;
	uint64_t seqs[4];
	size_t n, total;

	for (int nested = 0; nested < 2; nested++) {
		double worst = 0;

		for (n = 64u << 10; n <= 16u << 20; n *= 4) {
			int got;

			pl__wire_stream_init(&s, 64, 16u << 20);
			total = hostile(wire, n, nested);
			total += build(wire + total, PL_MSG_FRAME, 9, "after", 5, 64);
			got = drain(&s, wire, total, 64u << 10, seqs, 4);
			TAP_OK(got == 1 && seqs[0] == 9,
			       "%s, %zu KiB: the message after it comes out",
			       nested ? "nested headers" : "magic-filled body", n >> 10);
			if ((double)s.examined_bytes / (double)total > worst)
				worst = (double)s.examined_bytes / (double)total;
			pl__wire_stream_free(&s);
		}
		/* moved at most once and hashed at most once: 2 bytes a byte */
		TAP_OK(worst <= 2.0, "%s: at most %.2f bytes moved or hashed per byte of input, "
		       "64 KiB to 16 MiB", nested ? "nested headers" : "magic-filled body", worst);
	}
}

int main(void)
{
	test_roundtrip();
	test_stream();
	test_stream_reset();
	test_stream_wanted();
	test_stream_linear();
	return tap_done();
}
