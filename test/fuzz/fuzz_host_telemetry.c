/* libFuzzer target: what perflink-host and libperflink-host do with what a
 * device sends. The input after its first byte goes
 *   - to the telemetry parser (host/output/device_telemetry.c) as one TELEMETRY
 *     payload, as the receiver hands it over;
 *   - wrapped in a well-formed TELEMETRY and a well-formed FRAME message
 *     (so that the checksum, which random bytes never pass, is not what
 *     stops the fuzzer), then as raw bytes, into the receiver
 *     (host/receiver.c) in pieces whose size the first byte chooses, with
 *     the reply mode the first byte chooses too;
 *   - wrapped in a HELLO message, whose payload the device_hello reader
 *     (host/output/device_hello.c) keeps for summary.json.
 * Checked: every message the receiver sends back passes the wire checks,
 * a telemetry type handed out is a safe file name, the link_diag summary
 * and the "device" object written from hostile input are valid JSON and
 * the kept HELLO strings printable, and the latency table never
 * knows more round trips than frames. */
#include "device_hello.h"
#include "device_telemetry.h"
#include "json_reader.h"
#include "json_writer.h"
#include "latency_table.h"
#include "receiver.h"
#include "telemetry_files.h"
#include "wire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PAYLOAD (64u * 1024)
#define PAD 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct pl_receiver rx;
static struct pl_device_telemetry dt;
static struct pl_latency_table table;
static struct pl_device_hello hello;
static uint8_t msg[PL_WIRE_HEADER_SIZE + MAX_PAYLOAD + PAD];

/* The receiver's replies, pongs and pings must be messages a device accepts. */
static int check_sent(void *ctx, const void *out, size_t len)
{
	struct pl_wire_header h;

	(void)ctx;
	if (len < PL_WIRE_HEADER_SIZE || len % PAD ||
	    pl__wire_decode_header(out, &h) != PL_WIRE_OK ||
	    pl__wire_check_body(&h, out, len, PAD) != PL_WIRE_OK ||
	    len != pl__wire_message_size(h.payload_len, PAD))
		abort();
	return 0;
}

static void on_frame(void *ctx, const struct pl_wire_header *h, uint64_t now_ns)
{
	(void)ctx;
	pl__latency_table_add(&table, h->frame_id, h->sequence, h->payload_len, h->send_time_ns,
			      now_ns, false, 0);
}

static void on_hello(void *ctx, const uint8_t *payload, size_t len)
{
	(void)ctx;
	pl__device_hello_take(&hello, payload, len);
}

static void on_telemetry(void *ctx, const uint8_t *payload, size_t len)
{
	(void)ctx;
	pl__device_telemetry_feed(&dt, (const char *)payload, len);
}

/* An application's reply: as long as the frame's first byte says, which
 * may be more than there is room for. */
static size_t on_reply(void *ctx, const struct pl_wire_header *h, const uint8_t *payload,
		       uint8_t *out, size_t cap)
{
	size_t len = h->payload_len ? (size_t)payload[0] * 300 : 0;

	(void)ctx;
	if (len <= cap)
		memset(out, 0xa5, len);
	return len;
}

static void on_line(void *ctx, const char *type, const char *line, size_t len)
{
	(void)ctx;
	(void)line;
	(void)len;
	if (type && (strlen(type) > PL_TELEMETRY_TYPE_MAX ||
		     strspn(type, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(type)))
		abort();
}

static void no_path(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	(void)ctx;
	(void)path;
	(void)kind;
	(void)value;
}

static void feed_message(uint8_t type, uint64_t frame_id, const uint8_t *payload, size_t len)
{
	struct pl_wire_header h = {
		.type = type, .payload_len = (uint32_t)len, .sequence = 0, .frame_id = frame_id,
	};
	size_t total = pl__wire_message_size((uint32_t)len, PAD);

	pl__wire_encode_header(msg, &h, payload);
	memcpy(msg + PL_WIRE_HEADER_SIZE, payload, len);
	memset(msg + PL_WIRE_HEADER_SIZE + len, 0, total - PL_WIRE_HEADER_SIZE - len);
	pl__receiver_feed(&rx, msg, total);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct pl_receiver_hooks hooks = {
		.frame = on_frame, .hello = on_hello, .telemetry = on_telemetry, .reply = on_reply,
	};
	static const enum pl_reply_mode modes[] = {
		PL_REPLY_NONE, PL_REPLY_ECHO, PL_REPLY_DIGEST, PL_REPLY_ACK, PL_REPLY_APP,
	};
	static int ready;
	struct pl_json j;
	const uint8_t *body;
	size_t len, piece, off;

	if (size < 1 || size - 1 > MAX_PAYLOAD)
		return 0;
	body = data + 1;
	len = size - 1;
	if (!ready) {
		if (pl__receiver_init(&rx, PL_REPLY_NONE, MAX_PAYLOAD, check_sent, NULL) < 0)
			abort();
		rx.hooks = &hooks;
		ready = 1;
	}
	if (pl__latency_table_init(&table, 1000) < 0)
		abort();
	/* frames 0..9 are known, so round trips for them are matched */
	for (off = 0; off < 10; off++)
		pl__latency_table_add(&table, off, off, 100, 1000, 2000, false, 0);
	pl__device_telemetry_init(&dt, &table, NULL);
	pl__device_hello_init(&hello);
	dt.line_hook = on_line;
	pl__receiver_reset(&rx, PAD);
	rx.reply = modes[data[0] % 5];

	pl__device_telemetry_feed(&dt, (const char *)body, len);
	feed_message(PL_MSG_TELEMETRY, 0, body, len);
	feed_message(PL_MSG_FRAME, data[0], body, len);
	feed_message(PL_MSG_HELLO, 0, body, len);
	piece = (size_t)(data[0] >> 3) * 37 + 1;
	for (off = 0; off < len; off += piece)
		pl__receiver_feed(&rx, body + off, len - off < piece ? len - off : piece);

	pl__json_init(&j);
	pl__json_begin_object(&j, NULL);
	pl__device_telemetry_diag_json(&dt, &j, "device_send");
	pl__device_hello_json(&hello, &j);
	pl__json_end_object(&j);
	for (const char *c = hello.program; *c; c++)
		if (*c < 0x20 || *c >= 0x7f)
			abort();
	{
		const char *text = pl__json_finish(&j);

		if (text && pl__json_walk(text, strlen(text), no_path, NULL) < 0)
			abort();
	}
	pl__json_free(&j);
	if (table.rtt_known > table.n)
		abort();
	pl__device_telemetry_free(&dt);
	pl__latency_table_free(&table);
	return 0;
}
