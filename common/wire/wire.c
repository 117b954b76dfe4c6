/* See wire.h and docs/wire.md. */
#include "wire.h"
#include "payload_hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

_Static_assert(PL_WIRE_HEADER_SIZE == 48, "the header is 48 bytes on the wire");

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const uint8_t *p) { return get16(p) | (uint32_t)get16(p + 2) << 16; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

/* Offsets in the header (docs/wire.md has the table). */
enum {
	OFF_MAGIC = 0,
	OFF_VERSION = 4,
	OFF_TYPE = 5,
	OFF_FLAGS = 6,
	OFF_PAYLOAD_LEN = 8,
	OFF_HEADER_CHECK = 12,
	OFF_SEQUENCE = 16,
	OFF_PAYLOAD_XXH3 = 24,
	OFF_SEND_TIME = 32,
	OFF_FRAME_ID = 40,
};

static uint32_t header_check(const uint8_t in[PL_WIRE_HEADER_SIZE])
{
	uint8_t tmp[PL_WIRE_HEADER_SIZE];

	memcpy(tmp, in, sizeof(tmp));
	put32(tmp + OFF_HEADER_CHECK, 0);
	return (uint32_t)XXH3_64bits(tmp, sizeof(tmp));
}

const char *pl__wire_error_name(enum pl_wire_error e)
{
	static const char *const names[] = {
		"ok", "bad_magic", "bad_version", "bad_header_check",
		"bad_type", "bad_length", "bad_checksum", "bad_padding", "bad_flags",
	};

	_Static_assert(sizeof(names) / sizeof(names[0]) == PL_WIRE_ERROR_COUNT,
		       "a name for each reason");

	return (unsigned)e < PL_WIRE_ERROR_COUNT ? names[e] : "unknown";
}

size_t pl__wire_message_size(uint32_t payload_len, uint32_t pad)
{
	size_t n = PL_WIRE_HEADER_SIZE + (size_t)payload_len;

	if (pad > 1)
		n = (n + pad - 1) / pad * pad;
	return n;
}

uint64_t pl__wire_payload_hash(const void *payload, size_t len)
{
	return pl__payload_hash(payload, len);
}

void pl__wire_encode_header(uint8_t out[PL_WIRE_HEADER_SIZE], struct pl_wire_header *hdr,
			    const void *payload)
{
	hdr->payload_xxh3 = pl__payload_hash(payload, hdr->payload_len);
	pl__wire_encode_header_hashed(out, hdr);
}

void pl__wire_encode_header_hashed(uint8_t out[PL_WIRE_HEADER_SIZE], struct pl_wire_header *hdr)
{
	hdr->version = PL_WIRE_VERSION;
	put32(out + OFF_MAGIC, PL_WIRE_MAGIC);
	out[OFF_VERSION] = hdr->version;
	out[OFF_TYPE] = hdr->type;
	put16(out + OFF_FLAGS, hdr->flags);
	put32(out + OFF_PAYLOAD_LEN, hdr->payload_len);
	put32(out + OFF_HEADER_CHECK, 0);
	put64(out + OFF_SEQUENCE, hdr->sequence);
	put64(out + OFF_PAYLOAD_XXH3, hdr->payload_xxh3);
	put64(out + OFF_SEND_TIME, hdr->send_time_ns);
	put64(out + OFF_FRAME_ID, hdr->frame_id);
	put32(out + OFF_HEADER_CHECK, header_check(out));
}

enum pl_wire_error pl__wire_decode_header(const uint8_t in[PL_WIRE_HEADER_SIZE],
					  struct pl_wire_header *hdr)
{
	if (get32(in + OFF_MAGIC) != PL_WIRE_MAGIC)
		return PL_WIRE_BAD_MAGIC;
	if (get32(in + OFF_HEADER_CHECK) != header_check(in))
		return PL_WIRE_BAD_HEADER_CHECK;
	if (in[OFF_VERSION] != PL_WIRE_VERSION)
		return PL_WIRE_BAD_VERSION;
	if (in[OFF_TYPE] == 0 || in[OFF_TYPE] > PL_WIRE_TYPE_MAX)
		return PL_WIRE_BAD_TYPE;
	hdr->version = in[OFF_VERSION];
	hdr->type = in[OFF_TYPE];
	hdr->flags = get16(in + OFF_FLAGS);
	hdr->payload_len = get32(in + OFF_PAYLOAD_LEN);
	hdr->sequence = get64(in + OFF_SEQUENCE);
	hdr->payload_xxh3 = get64(in + OFF_PAYLOAD_XXH3);
	hdr->send_time_ns = get64(in + OFF_SEND_TIME);
	hdr->frame_id = get64(in + OFF_FRAME_ID);
	if (hdr->payload_len > PL_WIRE_MAX_PAYLOAD)
		return PL_WIRE_BAD_LENGTH;
	if (hdr->flags & ~PL_WIRE_FLAGS_KNOWN)
		return PL_WIRE_BAD_FLAGS;
	return PL_WIRE_OK;
}

enum pl_wire_error pl__wire_check_body(const struct pl_wire_header *hdr, const uint8_t *msg,
				       size_t len, uint32_t pad)
{
	size_t total = pl__wire_message_size(hdr->payload_len, pad);
	size_t i;

	if (len < total)
		return PL_WIRE_BAD_LENGTH;
	if (pl__payload_hash(msg + PL_WIRE_HEADER_SIZE, hdr->payload_len) != hdr->payload_xxh3)
		return PL_WIRE_BAD_CHECKSUM;
	for (i = PL_WIRE_HEADER_SIZE + hdr->payload_len; i < total; i++) {
		if (msg[i] != 0)
			return PL_WIRE_BAD_PADDING;
	}
	return PL_WIRE_OK;
}

int pl__wire_stream_init(struct pl_wire_stream *s, uint32_t pad, uint32_t max_payload)
{
	memset(s, 0, sizeof(*s));
	if (pad > 1 && (pad & (pad - 1)) != 0)
		return -EINVAL;
	if (max_payload > PL_WIRE_MAX_PAYLOAD)
		max_payload = PL_WIRE_MAX_PAYLOAD;
	s->pad = pad;
	s->max_payload = max_payload;
	s->cap = pl__wire_message_size(max_payload, pad);
	s->buf = malloc(s->cap);
	return s->buf ? 0 : -ENOMEM;
}

void pl__wire_stream_free(struct pl_wire_stream *s)
{
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

void pl__wire_stream_reset(struct pl_wire_stream *s, uint32_t pad)
{
	s->start = 0;
	s->len = 0;
	s->pending_consume = 0;
	s->pad = pad;
}

size_t pl__wire_stream_feed(struct pl_wire_stream *s, const void *data, size_t len)
{
	size_t room = s->cap - s->start - s->len;

	if (len > room && s->start) {
		/* make the room at the end: the waiting bytes to the front */
		memmove(s->buf, s->buf + s->start, s->len);
		s->examined_bytes += s->len;
		s->start = 0;
		room = s->cap - s->len;
	}
	if (len > room)
		len = room;
	memcpy(s->buf + s->start + s->len, data, len);
	s->len += len;
	return len;
}

static void consume(struct pl_wire_stream *s, size_t n)
{
	s->start += n;
	s->len -= n;
	if (s->len == 0)
		s->start = 0;
}

/* Drop bytes up to the next possible magic after the first byte. */
static void resync(struct pl_wire_stream *s)
{
	static const uint8_t magic[4] = { 'P', 'L', 'N', 'K' };
	const uint8_t *p = s->buf + s->start;
	size_t i;

	for (i = 1; i + 4 <= s->len; i++) {
		if (memcmp(p + i, magic, 4) == 0)
			break;
	}
	/* keep a tail that may be the start of a magic split across feeds */
	if (i + 4 > s->len)
		i = s->len > 3 ? s->len - 3 : (s->len ? 1 : 0);
	s->skipped_bytes += i;
	consume(s, i);
}

int pl__wire_stream_next(struct pl_wire_stream *s, struct pl_wire_header *hdr,
			 const uint8_t **payload)
{
	if (s->pending_consume) {
		consume(s, s->pending_consume);
		s->pending_consume = 0;
	}
	while (s->len >= PL_WIRE_HEADER_SIZE) {
		const uint8_t *msg = s->buf + s->start;
		enum pl_wire_error e = pl__wire_decode_header(msg, hdr);
		size_t total;

		if (e == PL_WIRE_OK && hdr->payload_len > s->max_payload)
			e = PL_WIRE_BAD_LENGTH;
		if (e != PL_WIRE_OK) {
			/* a stray byte that is not a magic is skipped silently
			 * as part of resynchronisation, counted in bytes */
			if (e != PL_WIRE_BAD_MAGIC)
				s->errors[e]++;
			resync(s);
			continue;
		}
		total = pl__wire_message_size(hdr->payload_len, s->pad);
		if (s->len < total)
			return 0;
		s->examined_bytes += total;
		e = pl__wire_check_body(hdr, msg, total, s->pad);
		if (e != PL_WIRE_OK) {
			/* The header checked, so its length is the sender's: skip
			 * the message whole. Looking for a magic inside it would
			 * let a hostile body of headers that check, each claiming
			 * the longest payload, make every byte be hashed again
			 * for each header before it. */
			s->errors[e]++;
			s->skipped_bytes += total;
			consume(s, total);
			continue;
		}
		/* Hand out the message in place; it is consumed on the next
		 * call, which is why the pointer is valid only until then. */
		s->messages++;
		*payload = msg + PL_WIRE_HEADER_SIZE;
		s->pending_consume = total;
		return 1;
	}
	return 0;
}

size_t pl__wire_stream_wanted(const struct pl_wire_stream *s)
{
	struct pl_wire_header hdr;
	size_t total;

	if (s->pending_consume || s->len < PL_WIRE_HEADER_SIZE ||
	    pl__wire_decode_header(s->buf + s->start, &hdr) != PL_WIRE_OK ||
	    hdr.payload_len > s->max_payload)
		return 0;
	total = pl__wire_message_size(hdr.payload_len, s->pad);
	return total > s->len ? total - s->len : 0;
}
