/* See session.h. */
#include "session.h"
#include "clock.h"
#include "log.h"

#include <errno.h>
#include <string.h>

#define PING_INTERVAL_NS 1000000000ull
#define TCP_RETRY_MS 500
/* the largest message and then some: replies wait here when the device
 * does not read; beyond it they are dropped */
#define TCP_OUT_LIMIT_BYTES (32u << 20)

static int link_send(void *ctx, const void *msg, size_t len)
{
	struct pl_host_session *s = ctx;

	return pl__host_transport_send(s->link, msg, len);
}

static void on_connected(void *ctx, unsigned packet_size)
{
	struct pl_host_session *s = ctx;

	pl__receiver_reset(&s->rx, packet_size);
	s->connected = true;
	/* the session's first message from this side: what the host is */
	pl__receiver_send_hello(&s->rx, program_invocation_short_name);
	s->last_ping_ns = 0; /* a first offset sample at once */
	if (s->log_changes)
		pl__log_info("connected: %u-byte packets", packet_size);
}

static void on_disconnected(void *ctx)
{
	struct pl_host_session *s = ctx;

	s->connected = false;
	if (s->log_changes)
		pl__log_info("device gone; waiting for it to come back");
}

static void on_data(void *ctx, const uint8_t *data, size_t len)
{
	struct pl_host_session *s = ctx;

	if (s->hooks->raw)
		s->hooks->raw(s->ctx, len);
	else
		pl__receiver_feed(&s->rx, data, len);
}

static void on_frame(void *ctx, const struct pl_wire_header *h, uint64_t now_ns)
{
	struct pl_host_session *s = ctx;

	if (s->hooks->frame)
		s->hooks->frame(s->ctx, h, now_ns);
}

static size_t on_reply(void *ctx, const struct pl_wire_header *h, const uint8_t *payload,
		       uint8_t *out, size_t cap)
{
	struct pl_host_session *s = ctx;

	return s->hooks->reply ? s->hooks->reply(s->ctx, h, payload, out, cap) : 0;
}

static void on_pong(void *ctx, const struct pl_wire_header *h, const uint8_t *payload,
		    uint64_t now_ns)
{
	struct pl_host_session *s = ctx;

	if (pl__clock_offset_add_pong(&s->clock, h, payload, now_ns) < 0)
		s->bad_pongs++;
}

static void on_telemetry(void *ctx, const uint8_t *payload, size_t len)
{
	struct pl_host_session *s = ctx;

	pl__device_telemetry_feed(&s->dt, (const char *)payload, len);
}

/* A malformed HELLO is counted in summary.json's device.hellos_malformed,
 * and changes nothing else: neither end needs the other's HELLO. */
static void on_hello(void *ctx, const uint8_t *payload, size_t len)
{
	struct pl_host_session *s = ctx;

	pl__device_hello_take(&s->device, payload, len);
}

/* pongs, HELLOs and telemetry are the session's; frames and replies the
 * front end's */
static const struct pl_receiver_hooks rx_hooks = {
	.frame = on_frame,
	.hello = on_hello,
	.pong = on_pong,
	.telemetry = on_telemetry,
	.reply = on_reply,
};

int pl__host_session_init(struct pl_host_session *s, enum pl_reply_mode reply,
			  const struct pl_host_session_hooks *hooks, void *ctx)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->hooks = hooks;
	s->ctx = ctx;
	if ((err = pl__receiver_init(&s->rx, reply, PL_WIRE_MAX_PAYLOAD, link_send, s)) < 0)
		return err;
	s->rx.hooks = &rx_hooks;
	s->rx.hooks_ctx = s;
	pl__device_telemetry_init(&s->dt, NULL, NULL);
	pl__device_hello_init(&s->device);
	pl__clock_offset_init(&s->clock);
	return 0;
}

int pl__host_session_open(struct pl_host_session *s, const struct pl_host_session_open_config *cfg)
{
	static const struct pl_host_transport_handlers th = {
		.connected = on_connected,
		.disconnected = on_disconnected,
		.data = on_data,
	};
	const struct pl_host_transport_config tc = {
		.tcp = cfg->tcp,
		.tcp_key_file = cfg->tcp_key_file,
		.tcp_tls_ca_file = cfg->tcp_tls_ca_file,
		.tcp_tls_fingerprint = cfg->tcp_tls_fingerprint,
		.usb = cfg->usb,
		.tcp_retry_ms = TCP_RETRY_MS,
		.tcp_out_limit_bytes = TCP_OUT_LIMIT_BYTES,
	};

	pl__device_telemetry_init(&s->dt, cfg->table, cfg->files);
	s->dt.line_hook = s->hooks->line;
	s->dt.line_ctx = s->ctx;
	s->log_changes = cfg->log_changes && !cfg->tcp;
	return pl__host_transport_open(&s->link, &tc, &th, s);
}

int pl__host_session_step(struct pl_host_session *s, int timeout_ms)
{
	uint64_t now;
	int err;

	if ((err = pl__host_transport_poll(s->link, timeout_ms)) < 0)
		return err;
	now = pl__mono_ns();
	if (s->connected && !s->hooks->raw && now - s->last_ping_ns >= PING_INTERVAL_NS) {
		pl__receiver_send_ping(&s->rx);
		s->last_ping_ns = now;
	}
	return 0;
}

void pl__host_session_free(struct pl_host_session *s)
{
	pl__host_transport_close(s->link);
	s->link = NULL;
	pl__device_telemetry_free(&s->dt);
	pl__receiver_free(&s->rx);
}
