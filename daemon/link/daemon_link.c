/* See daemon_link.h. */
#include "daemon_link.h"
#include "clock.h"
#include "link.h"
#include "link_session_msgs.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pl_daemon_link {
	struct pl_link *link;
	struct pl_loop_watch *diag_timer;
	struct pl_json j;
	uint64_t telemetry_sent, telemetry_dropped, host_messages;
	uint64_t diag_sent_before; /* messages sent when the last diagnostics went */
	pl__daemon_link_reply_fn on_reply;
	pl__daemon_link_room_fn on_room;
	pl__daemon_link_lost_fn on_lost;
	/* the session's own messages: the host's HELLO and COMMANDs */
	struct pl_host_hello host_hello;
	uint64_t host_hellos, host_hellos_malformed;
	uint64_t commands, commands_unknown, commands_malformed;
	struct pl__ratelimit host_rl;
	struct pl_json cmd_json;
	void *ctx; /* of on_reply, on_room and on_lost */
};

static void send_diag(struct pl_daemon_link *dl);

/* A COMMAND's answer, in the stream behind what waits. */
static void command_result(struct pl_daemon_link *dl, const char *name, bool ok,
			   const char *error)
{
	const char *line;

	pl__json_reset(&dl->cmd_json);
	pl__json_begin_object(&dl->cmd_json, NULL);
	pl__json_str(&dl->cmd_json, "type", "command_result");
	pl__json_str(&dl->cmd_json, "command", name);
	pl__json_bool(&dl->cmd_json, "ok", ok);
	if (error)
		pl__json_str(&dl->cmd_json, "error", error);
	pl__json_u64(&dl->cmd_json, "mono_ns", pl__mono_ns());
	pl__json_end_object(&dl->cmd_json);
	if ((line = pl__json_finish(&dl->cmd_json)))
		pl__daemon_link_telemetry(dl, line);
}

static void on_host_hello(struct pl_daemon_link *dl, const uint8_t *payload, size_t len)
{
	dl->host_hellos++;
	if (pl__host_hello_parse(payload, len, &dl->host_hello) < 0) {
		dl->host_hellos_malformed++;
		pl__log_warnx_limited(&dl->host_rl, "link: a HELLO from the host that is not a "
				      "JSON object with a \"program\"");
		return;
	}
	pl__log_info_limited(&dl->host_rl, "link: the host is %s %s (wire version %llu)",
			     dl->host_hello.program, dl->host_hello.version,
			     (unsigned long long)dl->host_hello.wire_version);
}

static void on_command(struct pl_daemon_link *dl, const uint8_t *payload, size_t len)
{
	char name[64];
	enum pl_host_command c = pl__host_command_parse(payload, len, name, sizeof(name));

	dl->commands++;
	switch (c) {
	case PL_CMD_PING:
		command_result(dl, name, true, NULL);
		break;
	case PL_CMD_LINK_DIAG:
		send_diag(dl);
		command_result(dl, name, true, NULL);
		break;
	case PL_CMD_END:
		command_result(dl, name, true, NULL);
		pl__link_end_session(dl->link, "the host ended the stream (end_of_stream)");
		break;
	case PL_CMD_UNKNOWN:
		dl->commands_unknown++;
		command_result(dl, name, false, "unknown command");
		break;
	default:
		dl->commands_malformed++;
		command_result(dl, "", false, "not a JSON object with a string \"command\"");
		break;
	}
}

/* Replies go to the producer of the frame; HELLO and COMMAND are the
 * session's (link_session_msgs.h). */
static void on_message(void *ctx, const struct pl_wire_header *hdr, const uint8_t *payload)
{
	struct pl_daemon_link *dl = ctx;

	dl->host_messages++;
	if (hdr->type == PL_MSG_REPLY && dl->on_reply)
		dl->on_reply(dl->ctx, hdr->frame_id, payload, hdr->payload_len);
	else if (hdr->type == PL_MSG_HELLO)
		on_host_hello(dl, payload, hdr->payload_len);
	else if (hdr->type == PL_MSG_COMMAND)
		on_command(dl, payload, hdr->payload_len);
}

static void diag_json(struct pl_daemon_link *dl, struct pl_json *j, const struct pl_link_stats *st)
{
	pl__json_begin_object(j, "last_send");
	pl__json_u64(j, "bytes", st->last_send.bytes);
	pl__json_u64(j, "requests", st->last_send.requests);
	pl__json_double(j, "submit_us", (double)st->last_send.submit_ns / 1e3, 1);
	pl__json_double(j, "wait_us", (double)st->last_wait_ns / 1e3, 1);
	pl__json_double(j, "backlog_kb", (double)st->last_send.backlog_bytes / 1024, 1);
	pl__json_double(j, "backlog_ms", (double)st->last_send.backlog_ns / 1e6, 2);
	pl__json_end_object(j);
	pl__json_begin_object(j, "totals");
	pl__json_u64(j, "frames_sent", st->frames_sent);
	pl__json_u64(j, "frames_held", st->frames_held);
	pl__json_u64(j, "frames_replaced", st->frames_replaced);
	pl__json_u64(j, "frames_lost", st->frames_lost);
	pl__json_u64(j, "messages_sent", st->messages_sent);
	pl__json_u64(j, "messages_dropped", st->messages_dropped + dl->telemetry_dropped);
	pl__json_u64(j, "bytes", st->tx.bytes);
	pl__json_u64(j, "requests", st->usb.requests);
	pl__json_u64(j, "failed_requests", st->usb.failed_requests);
	pl__json_u64(j, "failed_submits", st->tx.failed_sends);
	pl__json_u64(j, "zero_length_requests", st->usb.zero_length_requests);
	pl__json_double(j, "max_submit_us", (double)st->tx.max_submit_ns / 1e3, 1);
	pl__json_double(j, "max_backlog_kb", (double)st->tx.max_backlog_bytes / 1024, 1);
	pl__json_double(j, "max_backlog_ms", (double)st->tx.max_backlog_ns / 1e6, 2);
	pl__json_u64(j, "rearms", st->rearms);
	pl__json_u64(j, "replies", st->replies_matched);
	pl__json_double(j, "last_rtt_ms", (double)st->last_rtt_ns / 1e6, 3);
	pl__json_double(j, "max_rtt_ms", (double)st->max_rtt_ns / 1e6, 3);
	pl__json_u64(j, "host_messages", dl->host_messages);
	pl__json_end_object(j);
	/* what the host sent that the device rejected, by reason */
	pl__json_begin_object(j, "from_host");
	pl__json_u64(j, "messages", st->rx_messages);
	pl__json_u64(j, "skipped_bytes", st->rx_skipped_bytes);
	pl__json_begin_object(j, "malformed");
	/* bytes without a magic are not messages: skipped_bytes counts them */
	for (int e = PL_WIRE_BAD_MAGIC + 1; e < PL_WIRE_ERROR_COUNT; e++)
		pl__json_u64(j, pl__wire_error_name((enum pl_wire_error)e), st->rx_errors[e]);
	pl__json_end_object(j);
	/* well-formed REPLYs not passed to a producer (docs/wire.md) */
	pl__json_u64(j, "replies_never_sent", st->replies_never_sent);
	pl__json_u64(j, "replies_repeated", st->replies_repeated);
	/* REPLYs that came on a connection already dropped (TCP) */
	pl__json_u64(j, "replies_discarded", st->rx.replies_discarded);
	pl__json_end_object(j);
}

/* Once a second while something was sent: log the diagnostics and send them. */
static void on_diag(void *ctx, uint64_t expirations)
{
	struct pl_daemon_link *dl = ctx;
	struct pl_link_stats st;

	(void)expirations;
	pl__link_get_stats(dl->link, &st);
	if (!st.up || st.frames_sent + st.messages_sent == dl->diag_sent_before)
		return;
	send_diag(dl);
}

/* A link_diag line now (each second, or the host's COMMAND). */
static void send_diag(struct pl_daemon_link *dl)
{
	struct pl_link_stats st;
	const char *line;

	pl__link_get_stats(dl->link, &st);
	if (!st.up)
		return;
	pl__json_reset(&dl->j);
	pl__json_begin_object(&dl->j, NULL);
	pl__json_str(&dl->j, "type", "link_diag");
	pl__json_u64(&dl->j, "mono_ns", pl__mono_ns());
	pl__json_u64(&dl->j, "pid", (uint64_t)getpid());
	diag_json(dl, &dl->j, &st);
	pl__json_end_object(&dl->j);
	line = pl__json_finish(&dl->j);
	if (!line)
		return;
	pl__log_info("link: %.*s", (int)strlen(line) - 1, line);
	pl__daemon_link_telemetry(dl, line);
	pl__link_get_stats(dl->link, &st);
	dl->diag_sent_before = st.frames_sent + st.messages_sent;
}

static void on_room(void *ctx)
{
	struct pl_daemon_link *dl = ctx;

	if (dl->on_room)
		dl->on_room(dl->ctx);
}

static void on_up(void *ctx, unsigned packet_size)
{
	(void)packet_size;
	on_room(ctx);
}

static void on_frames_lost(void *ctx, const uint64_t *frame_ids, size_t n)
{
	struct pl_daemon_link *dl = ctx;

	if (dl->on_lost)
		dl->on_lost(dl->ctx, frame_ids, n);
}

void pl__daemon_link_on_lost(struct pl_daemon_link *dl, pl__daemon_link_lost_fn on_lost)
{
	dl->on_lost = on_lost;
}

bool pl__daemon_link_frame_fits(const struct pl_daemon_link *dl, size_t len)
{
	return pl__link_frame_fits(dl->link, len);
}

void pl__daemon_link_remove_gadget(const struct pl_link_settings *s)
{
	struct pl_link_config lc;

	pl__link_config_default(&lc);
	pl__link_settings_apply(s, &lc);
	pl__gadget_teardown(&lc.gadget);
}

int pl__daemon_link_start(struct pl_daemon_link **out, struct pl_loop *loop,
			  const struct pl_link_settings *s, pl__daemon_link_reply_fn on_reply,
			  pl__daemon_link_room_fn on_room_fn, void *ctx)
{
	static const struct pl_link_handlers h = {
		.up = on_up,
		.message = on_message,
		.writable = on_room,
		.frames_lost = on_frames_lost,
	};
	struct pl_daemon_link *dl = calloc(1, sizeof(*dl));
	struct pl_link_config lc;
	int err;

	if (!dl)
		return -ENOMEM;
	pl__json_init(&dl->j);
	pl__json_init(&dl->cmd_json);
	dl->host_rl = (struct pl__ratelimit)PL_RATELIMIT_INIT(1000);
	dl->on_reply = on_reply;
	dl->on_room = on_room_fn;
	dl->ctx = ctx;
	pl__link_config_default(&lc);
	pl__link_settings_apply(s, &lc);
	if ((err = pl__link_open(&dl->link, &lc, loop, &h, dl)) < 0) {
		pl__log_warnc(err, "link: cannot start on %s", s->tcp_listen ? s->tcp_listen : s->ffs_dir);
		free(dl);
		return err;
	}
	err = pl__loop_add_timer(loop, (uint64_t)(s->diag_interval_s * 1e9),
				 (uint64_t)(s->diag_interval_s * 1e9), on_diag, dl, &dl->diag_timer);
	if (err < 0) {
		pl__daemon_link_stop(dl);
		return err;
	}
	*out = dl;
	return 0;
}

void pl__daemon_link_telemetry(struct pl_daemon_link *dl, const char *json_line)
{
	if (pl__link_send(dl->link, PL_MSG_TELEMETRY, json_line, strlen(json_line)) < 0)
		dl->telemetry_dropped++;
	else
		dl->telemetry_sent++;
}

int pl__daemon_link_frame(struct pl_daemon_link *dl, uint64_t frame_id, const void *data,
			  size_t len, const uint64_t *payload_xxh3)
{
	if (payload_xxh3)
		return pl__link_send_frame_hashed(dl->link, frame_id, 0, data, len, *payload_xxh3);
	return pl__link_send_frame(dl->link, frame_id, 0, data, len);
}

uint64_t pl__daemon_link_replies_discarded(const struct pl_daemon_link *dl)
{
	struct pl_link_stats st;

	pl__link_get_stats(dl->link, &st);
	return st.rx.replies_discarded;
}

void pl__daemon_link_status(const struct pl_daemon_link *dl, struct pl_json *j)
{
	struct pl_link_tcp_totals tcp;
	struct pl_link_stats st;

	pl__link_get_stats(dl->link, &st);
	pl__json_begin_object(j, "link");
	pl__json_str(j, "state", st.up ? "up" : "waiting for the host");
	pl__json_str(j, "transport", st.transport);
	if (pl__link_tcp_port(dl->link))
		pl__json_u64(j, "tcp_port", pl__link_tcp_port(dl->link));
	if (pl__link_tcp_totals(dl->link, &tcp)) {
		pl__json_begin_object(j, "tcp");
		pl__json_str(j, "authentication", tcp.keyed ? "pre-shared key"
							    : "none (loopback only)");
		pl__json_str(j, "encryption", tcp.tls ? "TLS 1.3" : "none");
		pl__json_u64(j, "connections", tcp.connections);
		pl__json_u64(j, "replaced", tcp.replaced);
		pl__json_u64(j, "auth_passed", tcp.auth_passed);
		pl__json_u64(j, "auth_failed", tcp.auth_failed);
		pl__json_u64(j, "auth_timed_out", tcp.auth_timed_out);
		pl__json_u64(j, "auth_evicted", tcp.auth_evicted);
		pl__json_u64(j, "tls_failed", tcp.tls_failed);
		pl__json_end_object(j);
	}
	pl__json_u64(j, "packet_size", st.packet_size);
	pl__json_u64(j, "telemetry_sent", dl->telemetry_sent);
	pl__json_u64(j, "telemetry_dropped", dl->telemetry_dropped);
	/* what the host said of itself (its last HELLO) and asked */
	pl__json_begin_object(j, "host");
	pl__json_str(j, "program", dl->host_hello.program);
	pl__json_str(j, "version", dl->host_hello.version);
	pl__json_u64(j, "wire_version", dl->host_hello.wire_version);
	pl__json_u64(j, "hellos", dl->host_hellos);
	pl__json_u64(j, "hellos_malformed", dl->host_hellos_malformed);
	pl__json_u64(j, "commands", dl->commands);
	pl__json_u64(j, "commands_unknown", dl->commands_unknown);
	pl__json_u64(j, "commands_malformed", dl->commands_malformed);
	pl__json_end_object(j);
	diag_json((struct pl_daemon_link *)dl, j, &st);
	pl__json_end_object(j);
}

void pl__daemon_link_stop(struct pl_daemon_link *dl)
{
	if (!dl)
		return;
	pl__loop_remove(dl->diag_timer);
	pl__link_close(dl->link);
	pl__json_free(&dl->j);
	pl__json_free(&dl->cmd_json);
	free(dl);
}
