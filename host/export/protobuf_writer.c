/* See protobuf_writer.h. */
#include "protobuf_writer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define WIRE_VARINT 0u
#define WIRE_I64 1u
#define WIRE_LEN 2u
#define VARINT_MAX 10

void pl__pb_init(struct pl_pb *pb)
{
	memset(pb, 0, sizeof(*pb));
}

void pl__pb_free(struct pl_pb *pb)
{
	free(pb->buf);
	memset(pb, 0, sizeof(*pb));
}

static bool reserve(struct pl_pb *pb, size_t more)
{
	size_t cap;
	uint8_t *p;

	if (pb->failed)
		return false;
	if (pb->cap - pb->n >= more)
		return true;
	cap = pb->cap ? pb->cap : 256;
	while (cap - pb->n < more) {
		if (cap > SIZE_MAX / 2) {
			pb->failed = true;
			return false;
		}
		cap *= 2;
	}
	p = realloc(pb->buf, cap);
	if (!p) {
		pb->failed = true;
		return false;
	}
	pb->buf = p;
	pb->cap = cap;
	return true;
}

static size_t encode_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

static void put_varint(struct pl_pb *pb, uint64_t v)
{
	if (reserve(pb, VARINT_MAX))
		pb->n += encode_varint(pb->buf + pb->n, v);
}

static void put_tag(struct pl_pb *pb, uint32_t field, unsigned wire_type)
{
	put_varint(pb, (uint64_t)field << 3 | wire_type);
}

void pl__pb_varint_field(struct pl_pb *pb, uint32_t field, uint64_t value)
{
	put_tag(pb, field, WIRE_VARINT);
	put_varint(pb, value);
}

/* little-endian on the wire, whatever the machine's order */
void pl__pb_fixed64_field(struct pl_pb *pb, uint32_t field, uint64_t value)
{
	unsigned i;

	put_tag(pb, field, WIRE_I64);
	if (!reserve(pb, 8))
		return;
	for (i = 0; i < 8; i++)
		pb->buf[pb->n++] = (uint8_t)(value >> (8 * i));
}

void pl__pb_double_field(struct pl_pb *pb, uint32_t field, double value)
{
	uint64_t bits;

	memcpy(&bits, &value, sizeof(bits));
	pl__pb_fixed64_field(pb, field, bits);
}

void pl__pb_string_field(struct pl_pb *pb, uint32_t field, const char *s)
{
	size_t len = strlen(s);

	put_tag(pb, field, WIRE_LEN);
	put_varint(pb, len);
	if (reserve(pb, len)) {
		memcpy(pb->buf + pb->n, s, len);
		pb->n += len;
	}
}

void pl__pb_begin(struct pl_pb *pb, uint32_t field)
{
	put_tag(pb, field, WIRE_LEN);
	if (pb->depth >= PL_PB_DEPTH) {
		pb->failed = true;
		return;
	}
	pb->open[pb->depth++] = pb->n;
}

void pl__pb_end(struct pl_pb *pb)
{
	uint8_t len_bytes[VARINT_MAX];
	size_t start, body, k;

	if (pb->depth == 0) {
		pb->failed = true;
		return;
	}
	start = pb->open[--pb->depth];
	body = pb->n - start;
	k = encode_varint(len_bytes, body);
	if (!reserve(pb, k))
		return;
	memmove(pb->buf + start + k, pb->buf + start, body);
	memcpy(pb->buf + start, len_bytes, k);
	pb->n += k;
}

int pl__pb_flush(struct pl_pb *pb, FILE *out)
{
	int err = 0;

	if (pb->failed)
		err = pb->depth >= PL_PB_DEPTH ? -EINVAL : -ENOMEM;
	else if (pb->depth)
		err = -EINVAL;
	else if (pb->n && fwrite(pb->buf, 1, pb->n, out) != pb->n)
		err = -EIO;
	pl__pb_discard(pb);
	return err;
}

void pl__pb_discard(struct pl_pb *pb)
{
	pb->n = 0;
	pb->depth = 0;
	pb->failed = false;
}
