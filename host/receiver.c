/* See receiver.h. */
#include "receiver.h"
#include "pl_config.h"
#include "clock.h"
#include "integrity_payload.h"
#include "json_writer.h"
#include "log.h"

#include <errno.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

int pl__receiver_init(struct pl_receiver *r, enum pl_reply_mode reply, uint32_t max_payload,
		      pl__receiver_send_fn send, void *send_ctx)
{
	int err;

	memset(r, 0, sizeof(*r));
	r->reply = reply;
	r->send = send;
	r->send_ctx = send_ctx;
	r->pad = 512;
	if ((err = pl__wire_stream_init(&r->in, 1024, max_payload)) < 0)
		return err;
	r->out_cap = pl__wire_message_size(max_payload, 1024);
	r->out_buf = malloc(r->out_cap);
	return r->out_buf ? 0 : -ENOMEM;
}

void pl__receiver_reset(struct pl_receiver *r, unsigned pad)
{
	pl__wire_stream_reset(&r->in, pad);
	r->pad = pad;
	r->have_sequence = false;
	r->out_sequence = 0;
}

/* Send the message whose payload (len bytes) is already in place after the
 * header in out_buf. */
static int send_built(struct pl_receiver *r, enum pl_wire_type type, uint64_t frame_id, size_t len)
{
	struct pl_wire_header h = {
		.type = (uint8_t)type,
		.payload_len = (uint32_t)len,
		.sequence = r->out_sequence,
		.send_time_ns = pl__mono_ns(),
		.frame_id = frame_id,
	};
	size_t total = pl__wire_message_size((uint32_t)len, r->pad);
	int err;

	if (len > PL_WIRE_MAX_PAYLOAD || total > r->out_cap) {
		r->reply_failures++;
		return -EMSGSIZE;
	}
	pl__wire_encode_header(r->out_buf, &h, r->out_buf + PL_WIRE_HEADER_SIZE);
	memset(r->out_buf + PL_WIRE_HEADER_SIZE + len, 0, total - PL_WIRE_HEADER_SIZE - len);
	if ((err = r->send(r->send_ctx, r->out_buf, total)) < 0) {
		if (type != PL_MSG_PING) /* a lost ping is only a missing sample */
			r->reply_failures++;
		return err;
	}
	r->out_sequence++;
	if (type == PL_MSG_REPLY)
		r->replies_sent++;
	return 0;
}

/* The largest payload that fits out_buf whole with its padding. */
static size_t payload_room(const struct pl_receiver *r)
{
	size_t room = r->out_cap;

	if (r->pad > 1)
		room -= room % r->pad;
	room = room > PL_WIRE_HEADER_SIZE ? room - PL_WIRE_HEADER_SIZE : 0;
	return room < PL_WIRE_MAX_PAYLOAD ? room : PL_WIRE_MAX_PAYLOAD;
}

static int send_message(struct pl_receiver *r, enum pl_wire_type type, uint64_t frame_id,
			const void *payload, size_t len)
{
	if (len > payload_room(r)) {
		r->reply_failures++;
		return -EMSGSIZE;
	}
	if (len)
		memcpy(r->out_buf + PL_WIRE_HEADER_SIZE, payload, len);
	return send_built(r, type, frame_id, len);
}

/* The application writes its reply straight into the message buffer. */
static void app_reply(struct pl_receiver *r, const struct pl_wire_header *h,
		      const uint8_t *payload)
{
	size_t room = payload_room(r), len;

	if (!r->hooks || !r->hooks->reply)
		return;
	len = r->hooks->reply(r->hooks_ctx, h, payload, r->out_buf + PL_WIRE_HEADER_SIZE, room);
	if (len == 0)
		return;
	if (len > room) {
		r->reply_failures++;
		return;
	}
	send_built(r, PL_MSG_REPLY, h->frame_id, len);
}

int pl__receiver_send_hello(struct pl_receiver *r, const char *program)
{
	struct pl_json j;
	const char *text;
	int err = -ENOMEM;

	pl__json_init(&j);
	pl__json_begin_object(&j, NULL);
	pl__json_str(&j, "type", "hello");
	pl__json_u64(&j, "wire_version", 1);
	pl__json_str(&j, "program", program);
	pl__json_str(&j, "version", PL_VERSION);
	pl__json_end_object(&j);
	if ((text = pl__json_finish(&j)))
		err = send_message(r, PL_MSG_HELLO, 0, text, strlen(text) - 1); /* no newline */
	pl__json_free(&j);
	return err;
}

int pl__receiver_send_ping(struct pl_receiver *r)
{
	int err = send_message(r, PL_MSG_PING, 0, NULL, 0);

	if (err == 0)
		r->pings_sent++;
	return err;
}

/* `perflink stream` ends with {"event":"stream_end","frames":N,
 * "unconfirmed":U}: N frames really went out (newer frames replace held
 * ones), and U of them were in flight when the link went down, so they may
 * or may not have arrived. */
static void note_stream_end(struct pl_receiver *r, const uint8_t *payload, size_t len)
{
	static const char prefix[] = "{\"event\":\"stream_end\",\"frames\":";
	char text[96];
	char *end;
	unsigned long long n;

	if (len >= sizeof(text) || len < sizeof(prefix))
		return;
	memcpy(text, payload, len);
	text[len] = '\0';
	if (strncmp(text, prefix, sizeof(prefix) - 1) != 0)
		return;
	n = strtoull(text + sizeof(prefix) - 1, &end, 10);
	if (strncmp(end, ",\"unconfirmed\":", 15) == 0) {
		r->stream_end_unconfirmed = strtoull(end + 15, &end, 10);
	}
	if (*end != '}')
		return;
	r->stream_ended = true;
	r->stream_end_frames = n;
}

static void on_message(struct pl_receiver *r, const struct pl_wire_header *h,
		       const uint8_t *payload)
{
	uint64_t now = pl__mono_ns();

	if (r->have_sequence && h->sequence != r->next_sequence) {
		r->sequence_gaps++;
		if (h->sequence > r->next_sequence)
			r->lost_messages += h->sequence - r->next_sequence;
	}
	r->have_sequence = true;
	r->next_sequence = h->sequence + 1;

	switch (h->type) {
	case PL_MSG_FRAME:
		r->frames++;
		r->frame_bytes += h->payload_len;
		if (h->flags & PL_WIRE_FLAG_INTEGRITY) {
			/* every payload byte, against what the device generated */
			size_t bad = pl__integrity_check(payload, h->payload_len, h->frame_id, NULL);

			r->integrity_frames++;
			if (bad) {
				r->integrity_bad_frames++;
				r->integrity_bad_bytes += bad;
			}
		}
		if (r->hooks && r->hooks->frame)
			r->hooks->frame(r->hooks_ctx, h, now);
		if (r->reply == PL_REPLY_ECHO) {
			send_message(r, PL_MSG_REPLY, h->frame_id, payload, h->payload_len);
		} else if (r->reply == PL_REPLY_ACK) {
			/* a small answer, the size of a model's output: the
			 * frame id and when the host had the frame */
			uint64_t ack[2] = { h->frame_id, now };

			send_message(r, PL_MSG_REPLY, h->frame_id, ack, sizeof(ack));
		} else if (r->reply == PL_REPLY_DIGEST) {
			uint8_t digest[SHA256_DIGEST_LENGTH];

			SHA256(payload, h->payload_len, digest);
			send_message(r, PL_MSG_REPLY, h->frame_id, digest, sizeof(digest));
		} else if (r->reply == PL_REPLY_APP) {
			app_reply(r, h, payload);
		}
		break;
	case PL_MSG_HELLO:
		r->hellos++;
		if (r->hooks && r->hooks->hello)
			r->hooks->hello(r->hooks_ctx, payload, h->payload_len);
		break;
	case PL_MSG_PING: {
		uint64_t times[2] = { h->send_time_ns, now };

		r->pings++;
		send_message(r, PL_MSG_PONG, 0, times, sizeof(times));
		break;
	}
	case PL_MSG_PONG:
		r->pongs++;
		if (r->hooks && r->hooks->pong)
			r->hooks->pong(r->hooks_ctx, h, payload, now);
		break;
	case PL_MSG_TELEMETRY:
		r->telemetry++;
		r->telemetry_bytes += h->payload_len;
		note_stream_end(r, payload, h->payload_len);
		if (r->hooks && r->hooks->telemetry)
			r->hooks->telemetry(r->hooks_ctx, payload, h->payload_len);
		if (r->telemetry_out && h->payload_len > 0) {
			/* the device sends JSON lines; keep them lines even if
			 * one arrives without its newline */
			fwrite(payload, 1, h->payload_len, r->telemetry_out);
			if (payload[h->payload_len - 1] != '\n')
				fputc('\n', r->telemetry_out);
			fflush(r->telemetry_out);
		}
		break;
	default:
		r->other++;
		break;
	}
}

void pl__receiver_feed(struct pl_receiver *r, const uint8_t *data, size_t len)
{
	struct pl_wire_header h;
	const uint8_t *payload;

	while (len > 0) {
		size_t took = pl__wire_stream_feed(&r->in, data, len);

		data += took;
		len -= took;
		while (pl__wire_stream_next(&r->in, &h, &payload) == 1)
			on_message(r, &h, payload);
	}
}

uint64_t pl__receiver_malformed(const struct pl_receiver *r)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < PL_WIRE_ERROR_COUNT; i++)
		n += r->in.errors[i];
	return n;
}

void pl__receiver_free(struct pl_receiver *r)
{
	pl__wire_stream_free(&r->in);
	free(r->out_buf);
	r->out_buf = NULL;
}
