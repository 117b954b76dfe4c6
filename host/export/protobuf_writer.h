/* A streaming writer for the protobuf wire format, as much of it as the
 * Perfetto trace needs: varint, 64-bit and length-delimited fields, and
 * nested messages. A message is built in memory (one TracePacket at a time) and
 * then flushed to a stream, so memory stays at one packet's size however
 * long the trace is.
 *
 * Nested messages: pl__pb_begin opens one, pl__pb_end closes it and puts
 * its length in front (the body moves by the length's few bytes), so every
 * varint is canonical. Errors are sticky (failed) and reported by
 * pl__pb_flush, which keeps callers free of checks after every field. */
#ifndef PL_HOST_PROTOBUF_WRITER_H
#define PL_HOST_PROTOBUF_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PL_PB_DEPTH 8

struct pl_pb {
	uint8_t *buf;
	size_t n, cap;
	size_t open[PL_PB_DEPTH]; /* where each open message's body starts */
	unsigned depth;
	bool failed;
};

void pl__pb_init(struct pl_pb *pb);
void pl__pb_free(struct pl_pb *pb);
/* wire type 0: uint64, uint32, int32 >= 0, bool, enum */
void pl__pb_varint_field(struct pl_pb *pb, uint32_t field, uint64_t value);
/* wire type 1: fixed64, and double (its IEEE 754 bits) */
void pl__pb_fixed64_field(struct pl_pb *pb, uint32_t field, uint64_t value);
void pl__pb_double_field(struct pl_pb *pb, uint32_t field, double value);
/* wire type 2 */
void pl__pb_string_field(struct pl_pb *pb, uint32_t field, const char *s);
void pl__pb_begin(struct pl_pb *pb, uint32_t field);
void pl__pb_end(struct pl_pb *pb);
/* Write what was built (all messages closed) and start over. 0, -ENOMEM
 * (an allocation failed while building), -EINVAL (a message left open or
 * closed twice) or -EIO. */
int pl__pb_flush(struct pl_pb *pb, FILE *out);
/* Start over without writing what was built. */
void pl__pb_discard(struct pl_pb *pb);

#endif
