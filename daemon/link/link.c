/* See link.h. The link schedules messages (frames first, held when they do
 * not fit; others queued under a deadline), numbers them, answers pings,
 * measures each frame's round trip, and hands whole padded messages to its
 * port (link_port.h: USB or TCP). */
#include "link.h"
#include "clock.h"
#include "link_latency.h"
#include "link_port.h"
#include "link_session_msgs.h"
#include "log.h"
#include "pl_config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A non-frame message waiting for room, copied. */
struct queued_msg {
	struct queued_msg *next;
	uint64_t queued_ns;
	enum pl_wire_type type;
	size_t len;
	uint8_t payload[];
};

struct pl_link {
	struct pl_link_config cfg;
	/* a TCP host may connect in a loop: each line once a second at most */
	struct pl__ratelimit up_rl, down_rl, reply_rl, loss_rl;
	/* what the host sent that did not check, said at most once a second */
	struct pl__ratelimit malformed_rl;
	uint64_t malformed_said[PL_WIRE_ERROR_COUNT];
	struct pl_loop *loop;
	struct pl_link_handlers h;
	void *ctx;

	struct pl_link_port *port;
	/* pl__link_end_session asked, waiting for what went before to reach
	 * the host (NULL: not asked) */
	const char *end_why;
	uint64_t end_asked_ns;
	struct pl_loop_watch *tick_timer;
	struct pl_wire_stream in;
	bool up;
	unsigned packet_size;
	uint64_t sequence;
	unsigned ticks;

	/* the held frame: newest wins */
	uint8_t *held;
	size_t held_len;
	uint64_t held_frame_id, held_since_ns, held_time_ns, held_hash;
	uint16_t held_flags;
	bool have_held;

	struct queued_msg *queue_head, *queue_tail;
	size_t queue_bytes;
	/* the host last took something (a completion), or a send found nothing
	 * in flight: the deadline counts from here. A send onto a backlog is
	 * not progress: small messages that still fit the budget must not
	 * keep a host that takes nothing alive. */
	uint64_t last_progress_ns;

	struct pl_latency latency;
	struct pl_json latency_json;
	struct pl_json hello_json;
	struct pl_link_stats stats;
};

static const uint8_t zero_pad[1024];

void pl__link_config_default(struct pl_link_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ffs_dir = "/dev/ffs-perflink";
	pl__gadget_config_default(&cfg->gadget);
	cfg->chunk_bytes = 8192;
	cfg->budget_bytes = 1u << 20;
	cfg->max_message_bytes = 4u << 20;
	cfg->rx_depth = 8;
	cfg->rx_read_bytes = 16384;
	cfg->deadline_ns = 2000ull * 1000 * 1000;
	cfg->queue_bytes = 1u << 20;
}

/* Build the header and hand header + payload + padding to the port as one
 * message. hash: the payload's XXH3 when the caller has it, else NULL. */
static uint64_t inflight(const struct pl_link *l)
{
	return l->port->ops->inflight(l->port);
}

static int submit(struct pl_link *l, enum pl_wire_type type, uint64_t frame_id, uint16_t flags,
		  uint64_t queued_ns, const void *payload, size_t len, const uint64_t *hash)
{
	uint8_t hdr_bytes[PL_WIRE_HEADER_SIZE];
	struct pl_wire_header hdr = {
		.type = (uint8_t)type,
		.flags = flags,
		.payload_len = (uint32_t)len,
		.sequence = l->sequence,
		.send_time_ns = queued_ns,
		.frame_id = frame_id,
	};
	size_t total = pl__wire_message_size((uint32_t)len, l->packet_size);
	struct iovec iov[3];
	struct pl_link_send_diag diag;
	bool was_idle;
	int n = 0, err;

	if (hash) {
		hdr.payload_xxh3 = *hash;
		pl__wire_encode_header_hashed(hdr_bytes, &hdr);
	} else {
		/* The payload's XXH3 is most of the CPU a large message costs
		 * here: timed, so benchmarks can tell it from the transport's. */
		uint64_t hash_start = pl__mono_ns();

		pl__wire_encode_header(hdr_bytes, &hdr, payload);
		l->stats.hash_ns += pl__mono_ns() - hash_start;
	}
	iov[n++] = (struct iovec){ hdr_bytes, sizeof(hdr_bytes) };
	if (len)
		iov[n++] = (struct iovec){ (void *)(uintptr_t)payload, len };
	if (total > PL_WIRE_HEADER_SIZE + len)
		iov[n++] = (struct iovec){ (void *)zero_pad, total - PL_WIRE_HEADER_SIZE - len };
	memset(&diag, 0, sizeof(diag));
	was_idle = inflight(l) == 0;
	if ((err = l->port->ops->send(l->port, iov, n, type == PL_MSG_FRAME ? &frame_id : NULL,
				      &diag)) < 0)
		return err;
	l->sequence++;
	l->stats.last_send = diag;
	l->stats.last_wait_ns = pl__mono_ns() - queued_ns;
	if (was_idle)
		l->last_progress_ns = pl__mono_ns();
	if (type == PL_MSG_FRAME) {
		l->stats.frames_sent++;
		pl__latency_sent(&l->latency, frame_id, queued_ns);
	} else {
		l->stats.messages_sent++;
	}
	return 0;
}

/* Telemetry and other messages may use at most half the budget, so that a
 * frame always finds room that they did not take. */
static bool fits_for_other(struct pl_link *l, size_t len)
{
	return inflight(l) + pl__wire_message_size((uint32_t)len, l->packet_size) <=
	       l->cfg.budget_bytes / 2;
}

/* What waits (the held frame, then the queue) goes out as room allows. A
 * send that fails because the host went away keeps its message for the
 * next connection; one that fails otherwise loses it, and that is counted
 * (frames_lost, messages_dropped) and said. */
static bool keep_for_later(const struct pl_link *l, int err)
{
	return err == -EAGAIN || (err < 0 && !l->up);
}

static void flush_pending(struct pl_link *l)
{
	int err;

	if (!l->up)
		return;
	if (l->have_held) {
		err = submit(l, PL_MSG_FRAME, l->held_frame_id, l->held_flags, l->held_time_ns,
			     l->held, l->held_len, &l->held_hash);
		if (keep_for_later(l, err))
			return;
		if (err < 0) {
			l->stats.frames_lost++;
			pl__log_warnx_limited(&l->loss_rl, "link: held frame %llu lost: %s",
					      (unsigned long long)l->held_frame_id, strerror(-err));
		}
		l->have_held = false;
	}
	while (l->up && l->queue_head && fits_for_other(l, l->queue_head->len)) {
		struct queued_msg *m = l->queue_head;

		err = submit(l, m->type, 0, 0, m->queued_ns, m->payload, m->len, NULL);
		if (keep_for_later(l, err))
			break;
		if (err < 0) {
			l->stats.messages_dropped++;
			pl__log_warnx_limited(&l->loss_rl, "link: a queued %u-byte message lost: %s",
					      (unsigned)m->len, strerror(-err));
		}
		l->queue_head = m->next;
		if (!l->queue_head)
			l->queue_tail = NULL;
		l->queue_bytes -= m->len;
		l->stats.messages_queued_now--;
		free(m);
	}
}

/* How long an asked end of the session waits for what was sent before it
 * (its command_result above all) to reach the host. */
#define PL_LINK_END_WAIT_NS (1000ull * 1000 * 1000)

/* End the session asked to end once nothing it was sent waits or is in
 * flight, or after PL_LINK_END_WAIT_NS whatever is left: ending it at once
 * would cut the answer that says it ends (on USB the requests in flight
 * are cancelled when the gadget is offered afresh). */
static void end_when_sent(struct pl_link *l)
{
	const char *why = l->end_why;

	if (!why)
		return;
	if (l->up && (l->queue_head || inflight(l) > 0) &&
	    pl__mono_ns() - l->end_asked_ns < PL_LINK_END_WAIT_NS)
		return;
	l->end_why = NULL;
	if (l->up)
		l->port->ops->reset(l->port, why);
}

static void port_progress(void *ctx)
{
	struct pl_link *l = ctx;

	l->last_progress_ns = pl__mono_ns();
	flush_pending(l);
	if (l->up && l->h.writable)
		l->h.writable(l->ctx);
	end_when_sent(l);
}

/* Send the measured round trips as one telemetry line. */
static void send_latency_batch(struct pl_link *l)
{
	unsigned entries = l->latency.batch_len;
	const char *line;

	if (!entries)
		return;
	pl__json_reset(&l->latency_json);
	pl__json_begin_object(&l->latency_json, NULL);
	pl__latency_take_batch(&l->latency, &l->latency_json);
	pl__json_end_object(&l->latency_json);
	line = pl__json_finish(&l->latency_json);
	if (!line || pl__link_send(l, PL_MSG_TELEMETRY, line, strlen(line)) < 0)
		pl__latency_batch_lost(&l->latency, entries);
}

/* PING: answer at once with the ping's time and ours (docs/wire.md). */
static void answer_ping(struct pl_link *l, const struct pl_wire_header *hdr, uint64_t recv_ns)
{
	uint64_t times[2] = { htole64(hdr->send_time_ns), htole64(recv_ns) };

	l->stats.pings++;
	pl__link_send(l, PL_MSG_PONG, times, sizeof(times));
}

/* Messages from the host that did not check are counted by the wire
 * stream (link_diag and status show them, docs/wire.md); the log says which
 * reason grew, once a second at most. */
static void say_malformed(struct pl_link *l)
{
	for (int e = PL_WIRE_BAD_MAGIC + 1; e < PL_WIRE_ERROR_COUNT; e++) {
		if (l->in.errors[e] == l->malformed_said[e])
			continue;
		pl__log_warnx_limited(&l->malformed_rl,
				      "link: malformed input from the host (%s): %llu so far, %llu "
				      "bytes skipped",
				      pl__wire_error_name((enum pl_wire_error)e),
				      (unsigned long long)l->in.errors[e],
				      (unsigned long long)l->in.skipped_bytes);
		l->malformed_said[e] = l->in.errors[e];
	}
}

static void reply_dropped(struct pl_link *l, const struct pl_wire_header *hdr,
			  enum pl_latency_match m)
{
	if (m == PL_LATENCY_REPEATED)
		l->stats.replies_repeated++;
	else
		l->stats.replies_never_sent++;
	pl__log_warnx_limited(&l->reply_rl,
			      "link: a reply from the host to frame %llu dropped: %s",
			      (unsigned long long)hdr->frame_id,
			      m == PL_LATENCY_REPEATED
				      ? "that frame was answered already"
				      : "no such frame among the last frames sent on this "
					"connection");
}

static size_t port_bytes_wanted(void *ctx)
{
	struct pl_link *l = ctx;

	return pl__wire_stream_wanted(&l->in);
}

static void port_bytes(void *ctx, const uint8_t *data, size_t len)
{
	struct pl_link *l = ctx;
	struct pl_wire_header hdr;
	const uint8_t *payload;

	while (len > 0) {
		size_t took = pl__wire_stream_feed(&l->in, data, len);

		data += took;
		len -= took;
		while (pl__wire_stream_next(&l->in, &hdr, &payload) == 1) {
			uint64_t now = pl__mono_ns(), rtt;

			l->stats.rx_messages++;
			if (hdr.type == PL_MSG_PING) {
				answer_ping(l, &hdr, now);
				continue;
			}
			if (hdr.type == PL_MSG_REPLY) {
				enum pl_latency_match m =
					pl__latency_reply(&l->latency, hdr.frame_id, now, &rtt);

				if (pl__latency_batch_full(&l->latency))
					send_latency_batch(l);
				if (m != PL_LATENCY_MATCHED) {
					/* a producer gets answers only to frames it
					 * sent, and one each */
					reply_dropped(l, &hdr, m);
					continue;
				}
				l->stats.replies_matched++;
			}
			if (l->h.message)
				l->h.message(l->ctx, &hdr, payload);
		}
	}
	say_malformed(l);
}

/* The session's first message, sequence 0 (link_session_msgs.h). */
static void send_hello(struct pl_link *l)
{
	const struct pl_device_hello h = {
		.program = l->cfg.program ? l->cfg.program : "perflinkd",
		.version = PL_VERSION,
		.transport = l->port->ops->name,
		.packet_size = l->packet_size,
		.max_host_payload = l->cfg.max_message_bytes,
		.deadline_ms = l->cfg.deadline_ns / 1000000u,
	};
	const char *text;

	pl__json_reset(&l->hello_json);
	pl__device_hello_json(&l->hello_json, &h);
	/* a message of its own: no newline, not a telemetry line */
	text = pl__json_finish(&l->hello_json);
	if (text && submit(l, PL_MSG_HELLO, 0, 0, pl__mono_ns(), text, strlen(text) - 1, NULL) < 0)
		l->stats.messages_dropped++;
}

static void port_up(void *ctx, unsigned packet_size)
{
	struct pl_link *l = ctx;

	l->packet_size = packet_size;
	l->sequence = 0;
	pl__wire_stream_reset(&l->in, packet_size); /* the host pads its messages the same way */
	l->up = true;
	l->last_progress_ns = pl__mono_ns();
	pl__latency_reset(&l->latency);
	pl__log_info_limited(&l->up_rl, "link: up over %s, %u-byte packets", l->port->ops->name,
			     packet_size);
	send_hello(l);
	/* what waited goes first, and only then is the owner told: a frame
	 * still held makes pl__link_frame_fits say no, and a producer that
	 * waits for room would be told too early and then never again */
	flush_pending(l);
	if (l->up && l->h.up)
		l->h.up(l->ctx, packet_size);
}

static void port_frames_lost(void *ctx, const uint64_t *frame_ids, size_t n)
{
	struct pl_link *l = ctx;

	l->stats.frames_lost += n;
	pl__log_warnx_limited(&l->loss_rl,
			      "link: %zu frame%s sent on this connection never reached the host "
			      "(the first: %llu)", n, n == 1 ? "" : "s",
			      (unsigned long long)frame_ids[0]);
	if (l->h.frames_lost)
		l->h.frames_lost(l->ctx, frame_ids, n);
}

static void port_down(void *ctx, const char *why)
{
	struct pl_link *l = ctx;

	l->up = false;
	l->end_why = NULL; /* the session ended by itself */
	pl__log_info_limited(&l->down_rl, "link: down (%s)", why);
	if (l->h.down)
		l->h.down(l->ctx, why);
}

/* Every 100 ms: send the round trips measured (every 500 ms) and drop a
 * host that took nothing before the deadline. */
static void on_tick(void *ctx, uint64_t expirations)
{
	struct pl_link *l = ctx;
	uint64_t now = pl__mono_ns();
	bool waiting = l->queue_head || l->have_held;

	(void)expirations;
	if (!l->up)
		return;
	end_when_sent(l);
	if (!l->up)
		return;
	if (++l->ticks % 5 == 0)
		send_latency_batch(l);
	if (!waiting || inflight(l) == 0)
		return;
	if (now - l->last_progress_ns > l->cfg.deadline_ns) {
		l->stats.rearms++;
		l->port->ops->reset(l->port, "the host took nothing before the deadline");
	}
}

int pl__link_open(struct pl_link **out, const struct pl_link_config *cfg, struct pl_loop *loop,
		  const struct pl_link_handlers *h, void *ctx)
{
	static const struct pl_link_port_events ev = {
		.up = port_up,
		.down = port_down,
		.progress = port_progress,
		.bytes = port_bytes,
		.bytes_wanted = port_bytes_wanted,
		.frames_lost = port_frames_lost,
	};
	struct pl_link *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return -ENOMEM;
	l->cfg = *cfg;
	l->up_rl = l->down_rl = l->reply_rl = l->loss_rl =
		(struct pl__ratelimit)PL_RATELIMIT_INIT(1000);
	l->malformed_rl = (struct pl__ratelimit)PL_RATELIMIT_INIT(1000);
	l->loop = loop;
	l->h = *h;
	l->ctx = ctx;
	pl__json_init(&l->latency_json);
	pl__json_init(&l->hello_json);
	if (cfg->chunk_bytes != 8192 && cfg->chunk_bytes != 16384) {
		pl__log_warnx("link: write chunk must be 8192 or 16384 bytes, not %zu",
			      cfg->chunk_bytes);
		err = -EINVAL;
		goto fail;
	}
	if (!(l->held = malloc(cfg->max_message_bytes))) {
		err = -ENOMEM;
		goto fail;
	}
	if ((err = pl__wire_stream_init(&l->in, 1024, (uint32_t)cfg->max_message_bytes)) < 0)
		goto fail;
	if ((err = pl__loop_add_timer(loop, 100000000ull, 100000000ull, on_tick, l,
				      &l->tick_timer)) < 0)
		goto fail;
	err = cfg->tcp_listen ? pl__link_port_tcp_open(&l->port, cfg, loop, &ev, l)
			      : pl__link_port_usb_open(&l->port, cfg, loop, &ev, l);
	if (err < 0)
		goto fail;
	*out = l;
	return 0;
fail:
	pl__link_close(l);
	return err;
}

/* Keep a copy of the frame to send when room opens; newest wins. */
static int hold(struct pl_link *l, uint64_t frame_id, uint16_t flags, const void *payload,
		size_t len, uint64_t hash, uint64_t now)
{
	bool replacing = l->have_held;

	if (replacing)
		l->stats.frames_replaced++;
	memcpy(l->held, payload, len);
	l->held_len = len;
	l->held_frame_id = frame_id;
	l->held_flags = flags;
	l->held_hash = hash;
	l->held_time_ns = now;
	if (!l->have_held)
		l->held_since_ns = now;
	l->have_held = true;
	l->stats.frames_held++;
	return replacing ? 2 : 1;
}

int pl__link_send_frame_hashed(struct pl_link *l, uint64_t frame_id, uint16_t flags,
			       const void *payload, size_t len, uint64_t payload_xxh3)
{
	uint64_t now = pl__mono_ns();
	int err;

	if (!l->up)
		return -ENOTCONN;
	if (len > l->cfg.max_message_bytes)
		return -EMSGSIZE;
	if (!l->have_held) {
		err = submit(l, PL_MSG_FRAME, frame_id, flags, now, payload, len, &payload_xxh3);
		if (err != -EAGAIN)
			return err;
	}
	return hold(l, frame_id, flags, payload, len, payload_xxh3, now);
}

int pl__link_send_frame(struct pl_link *l, uint64_t frame_id, uint16_t flags,
			const void *payload, size_t len)
{
	uint64_t start = pl__mono_ns(), hash;

	if (!l->up)
		return -ENOTCONN;
	if (len > l->cfg.max_message_bytes)
		return -EMSGSIZE;
	hash = pl__wire_payload_hash(payload, len);
	l->stats.hash_ns += pl__mono_ns() - start;
	return pl__link_send_frame_hashed(l, frame_id, flags, payload, len, hash);
}

int pl__link_send(struct pl_link *l, enum pl_wire_type type, const void *payload, size_t len)
{
	struct queued_msg *m;
	int err;

	if (!l->up)
		return -ENOTCONN;
	if (len > l->cfg.max_message_bytes)
		return -EMSGSIZE;
	if (!l->queue_head && !l->have_held && fits_for_other(l, len)) {
		err = submit(l, type, 0, 0, pl__mono_ns(), payload, len, NULL);
		if (err != -EAGAIN)
			return err;
	}
	if (l->queue_bytes + len > l->cfg.queue_bytes) {
		l->stats.messages_dropped++;
		return -ENOBUFS;
	}
	m = malloc(sizeof(*m) + len);
	if (!m) {
		l->stats.messages_dropped++;
		return -ENOMEM;
	}
	m->next = NULL;
	m->queued_ns = pl__mono_ns();
	m->type = type;
	m->len = len;
	memcpy(m->payload, payload, len);
	if (l->queue_tail)
		l->queue_tail->next = m;
	else
		l->queue_head = m;
	l->queue_tail = m;
	l->queue_bytes += len;
	l->stats.messages_queued_now++;
	return 1;
}

bool pl__link_frame_fits(const struct pl_link *l, size_t len)
{
	size_t total = pl__wire_message_size((uint32_t)len, l->packet_size);

	return l->up && !l->have_held &&
	       (inflight(l) == 0 || total <= l->port->ops->room(l->port));
}

bool pl__link_is_up(const struct pl_link *l)
{
	return l->up;
}

void pl__link_end_session(struct pl_link *l, const char *why)
{
	if (!l->up || l->end_why)
		return;
	l->end_why = why;
	l->end_asked_ns = pl__mono_ns();
	end_when_sent(l);
}

bool pl__link_tcp_totals(const struct pl_link *l, struct pl_link_tcp_totals *out)
{
	return pl__link_port_tcp_totals(l->port, out);
}

unsigned pl__link_tcp_port(const struct pl_link *l)
{
	return pl__link_port_tcp_bound_port(l->port);
}

void pl__link_get_stats(const struct pl_link *l, struct pl_link_stats *out)
{
	*out = l->stats;
	out->up = l->up;
	out->packet_size = l->packet_size;
	out->frames_held_now = l->have_held;
	out->transport = l->port->ops->name;
	memset(&out->tx, 0, sizeof(out->tx));
	memset(&out->rx, 0, sizeof(out->rx));
	memset(&out->usb, 0, sizeof(out->usb));
	l->port->ops->totals(l->port, &out->tx, &out->rx, &out->usb);
	memcpy(out->rx_errors, l->in.errors, sizeof(out->rx_errors));
	out->rx_skipped_bytes = l->in.skipped_bytes;
	out->last_rtt_ns = l->latency.last_rtt_ns;
	out->max_rtt_ns = l->latency.max_rtt_ns;
	out->latency_dropped = l->latency.dropped;
}

void pl__link_close(struct pl_link *l)
{
	struct queued_msg *m;

	if (!l)
		return;
	if (l->port)
		l->port->ops->close(l->port);
	pl__loop_remove(l->tick_timer);
	pl__wire_stream_free(&l->in);
	while ((m = l->queue_head)) {
		l->queue_head = m->next;
		free(m);
	}
	pl__json_free(&l->latency_json);
	pl__json_free(&l->hello_json);
	free(l->held);
	free(l);
}
