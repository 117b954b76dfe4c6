/* See link.h. */
#include "link.h"
#include "clock.h"
#include "link_ffs.h"
#include "link_sync_tx.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

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
	struct pl_loop *loop;
	struct pl_link_handlers h;
	void *ctx;

	struct pl_ffs *ffs;
	int ep_in;             /* for the --sync baseline */
	uint8_t *sync_bounce;
	struct pl_loop_watch *ep0_watch, *tx_watch, *rx_watch, *deadline_timer;
	struct pl_aio_tx *tx;
	struct pl_aio_rx *rx;
	struct pl_wire_stream in;
	bool up;
	unsigned packet_size;
	uint64_t sequence;

	/* the held frame: newest wins */
	uint8_t *held;
	size_t held_len;
	uint64_t held_frame_id, held_since_ns, held_time_ns;
	uint16_t held_flags;
	bool have_held;

	struct queued_msg *queue_head, *queue_tail;
	size_t queue_bytes;
	uint64_t last_progress_ns; /* last completion or send */

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

/* Build the header and submit header + payload + padding as one message. */
static int submit(struct pl_link *l, enum pl_wire_type type, uint64_t frame_id, uint16_t flags,
		  uint64_t queued_ns, const void *payload, size_t len)
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
	struct pl_aio_send_diag diag;
	int n = 0, err;

	pl__wire_encode_header(hdr_bytes, &hdr, payload);
	iov[n++] = (struct iovec){ hdr_bytes, sizeof(hdr_bytes) };
	if (len)
		iov[n++] = (struct iovec){ (void *)(uintptr_t)payload, len };
	if (total > PL_WIRE_HEADER_SIZE + len)
		iov[n++] = (struct iovec){ (void *)zero_pad, total - PL_WIRE_HEADER_SIZE - len };
	if (l->cfg.sync_write_bytes) {
		uint64_t t0 = pl__mono_ns(), write_ns = 0;

		memset(&diag, 0, sizeof(diag));
		diag.bytes = total;
		diag.requests = (unsigned)((total + l->cfg.sync_write_bytes - 1) /
					   l->cfg.sync_write_bytes);
		err = pl__sync_tx_send(l->ep_in, iov, n, l->cfg.sync_write_bytes, l->sync_bounce,
				       &write_ns);
		diag.submit_ns = pl__mono_ns() - t0;
		if (err < 0) {
			pl__log_warnc(err, "link: synchronous write of %zu bytes", total);
			return err;
		}
	} else if ((err = pl__aio_tx_send(l->tx, iov, n, &diag)) < 0) {
		return err;
	}
	l->sequence++;
	l->stats.last_send = diag;
	l->stats.last_wait_ns = pl__mono_ns() - queued_ns;
	l->last_progress_ns = pl__mono_ns();
	if (type == PL_MSG_FRAME)
		l->stats.frames_sent++;
	else
		l->stats.messages_sent++;
	return 0;
}

/* Telemetry and other messages may use at most half the budget, so that a
 * frame always finds room that they did not take. */
static bool fits_for_other(struct pl_link *l, size_t len)
{
	uint64_t inflight = pl__aio_tx_inflight_bytes(l->tx);

	return inflight + pl__wire_message_size((uint32_t)len, l->packet_size) <=
	       l->cfg.budget_bytes / 2;
}

static void flush_pending(struct pl_link *l)
{
	if (!l->up)
		return;
	if (l->have_held) {
		int err = submit(l, PL_MSG_FRAME, l->held_frame_id, l->held_flags, l->held_time_ns,
				 l->held, l->held_len);

		if (err == -EAGAIN)
			return;
		l->have_held = false;
	}
	while (l->queue_head && fits_for_other(l, l->queue_head->len)) {
		struct queued_msg *m = l->queue_head;

		if (submit(l, m->type, 0, 0, m->queued_ns, m->payload, m->len) == -EAGAIN)
			break;
		l->queue_head = m->next;
		if (!l->queue_head)
			l->queue_tail = NULL;
		l->queue_bytes -= m->len;
		l->stats.messages_queued_now--;
		free(m);
	}
}

static void on_tx(void *ctx, int fd, uint32_t events)
{
	struct pl_link *l = ctx;
	int n;

	(void)fd;
	(void)events;
	n = pl__aio_tx_reap(l->tx);
	if (n > 0) {
		l->last_progress_ns = pl__mono_ns();
		flush_pending(l);
		if (l->up && l->h.writable)
			l->h.writable(l->ctx);
	}
}

static void on_rx_bytes(void *ctx, const uint8_t *data, size_t len)
{
	struct pl_link *l = ctx;
	struct pl_wire_header hdr;
	const uint8_t *payload;

	while (len > 0) {
		size_t took = pl__wire_stream_feed(&l->in, data, len);

		data += took;
		len -= took;
		while (pl__wire_stream_next(&l->in, &hdr, &payload) == 1) {
			l->stats.rx_messages++;
			if (l->h.message)
				l->h.message(l->ctx, &hdr, payload);
		}
	}
}

static void on_rx(void *ctx, int fd, uint32_t events)
{
	struct pl_link *l = ctx;

	(void)fd;
	(void)events;
	pl__aio_rx_reap(l->rx);
}

static void link_enable(void *ctx, int ep_in, int ep_out, unsigned packet_size)
{
	struct pl_link *l = ctx;

	l->packet_size = packet_size;
	l->sequence = 0;
	l->ep_in = ep_in;
	pl__aio_tx_attach(l->tx, ep_in, packet_size);
	l->in.len = 0;
	l->in.pending_consume = 0;
	l->in.pad = packet_size; /* the host pads its messages the same way */
	if (pl__aio_rx_attach(l->rx, ep_out) < 0)
		pl__log_warnx("link: the host's messages cannot be received");
	l->up = true;
	l->last_progress_ns = pl__mono_ns();
	pl__log_info("link: up, %u-byte packets", packet_size);
	if (l->h.up)
		l->h.up(l->ctx, packet_size);
	flush_pending(l);
}

static void link_disable(void *ctx, const char *why)
{
	struct pl_link *l = ctx;

	l->up = false;
	pl__aio_tx_detach(l->tx);
	pl__aio_rx_detach(l->rx);
	pl__log_info("link: down (%s)", why);
	if (l->h.down)
		l->h.down(l->ctx, why);
}

static void on_ep0(void *ctx, int fd, uint32_t events);

static int arm(struct pl_link *l)
{
	static const struct pl_ffs_events ev = { link_enable, link_disable };
	int err;

	if ((err = pl__ffs_open(&l->ffs, l->cfg.ffs_dir, &ev, l)) < 0)
		return err;
	if ((err = pl__loop_add_fd(l->loop, pl__ffs_ep0_fd(l->ffs), EPOLLIN, on_ep0, l,
				   &l->ep0_watch)) < 0)
		return err;
	if (l->cfg.setup_gadget && (err = pl__gadget_bind(&l->cfg.gadget, true)) < 0)
		return err;
	return 0;
}

static void disarm(struct pl_link *l)
{
	pl__loop_remove(l->ep0_watch);
	l->ep0_watch = NULL;
	if (l->cfg.setup_gadget)
		pl__gadget_bind(&l->cfg.gadget, false);
	pl__ffs_close(l->ffs); /* calls link_disable if it was up */
	l->ffs = NULL;
}

/* Drop the gadget and offer it again: the host enumerates it afresh, which
 * recovers a host side that stopped reading. */
static void rearm(struct pl_link *l, const char *why)
{
	int err;

	pl__log_warnx("link: %s; dropping the gadget and re-arming it", why);
	l->stats.rearms++;
	disarm(l);
	if ((err = arm(l)) < 0)
		pl__log_warnc(err, "link: re-arming the gadget failed");
}

static void on_ep0(void *ctx, int fd, uint32_t events)
{
	struct pl_link *l = ctx;
	int err;

	(void)fd;
	(void)events;
	if ((err = pl__ffs_handle_ep0(l->ffs)) < 0)
		rearm(l, "ep0 failed");
}

static void on_deadline_tick(void *ctx, uint64_t expirations)
{
	struct pl_link *l = ctx;
	uint64_t now = pl__mono_ns();
	bool waiting = l->queue_head || l->have_held;

	(void)expirations;
	if (!l->up || !waiting || pl__aio_tx_inflight_bytes(l->tx) == 0)
		return;
	if (now - l->last_progress_ns > l->cfg.deadline_ns)
		rearm(l, "the host took nothing before the deadline");
}

int pl__link_open(struct pl_link **out, const struct pl_link_config *cfg, struct pl_loop *loop,
		  const struct pl_link_handlers *h, void *ctx)
{
	struct pl_link *l = calloc(1, sizeof(*l));
	struct pl_aio_tx_config txc;
	int err;

	if (!l)
		return -ENOMEM;
	l->cfg = *cfg;
	l->loop = loop;
	l->h = *h;
	l->ctx = ctx;
	if (cfg->chunk_bytes != 8192 && cfg->chunk_bytes != 16384) {
		pl__log_warnx("link: write chunk must be 8192 or 16384 bytes, not %zu",
			      cfg->chunk_bytes);
		err = -EINVAL;
		goto fail;
	}
	l->held = malloc(cfg->max_message_bytes);
	if (cfg->sync_write_bytes)
		l->sync_bounce = malloc(cfg->sync_write_bytes);
	if (!l->held || (cfg->sync_write_bytes && !l->sync_bounce)) {
		err = -ENOMEM;
		goto fail;
	}
	if ((err = pl__wire_stream_init(&l->in, 1024, (uint32_t)cfg->max_message_bytes)) < 0)
		goto fail;
	pl__aio_tx_config_default(&txc);
	txc.chunk_bytes = cfg->chunk_bytes;
	txc.budget_bytes = cfg->budget_bytes;
	txc.max_message_bytes = cfg->max_message_bytes + 1024; /* header and padding */
	if ((err = pl__aio_tx_open(&l->tx, &txc)) < 0)
		goto fail;
	if ((err = pl__aio_rx_open(&l->rx, cfg->rx_depth < 8 ? 8 : cfg->rx_depth,
				   cfg->rx_read_bytes, on_rx_bytes, l)) < 0)
		goto fail;
	if ((err = pl__loop_add_fd(loop, pl__aio_tx_eventfd(l->tx), EPOLLIN, on_tx, l,
				   &l->tx_watch)) < 0 ||
	    (err = pl__loop_add_fd(loop, pl__aio_rx_eventfd(l->rx), EPOLLIN, on_rx, l,
				   &l->rx_watch)) < 0 ||
	    (err = pl__loop_add_timer(loop, 100000000ull, 100000000ull, on_deadline_tick, l,
				      &l->deadline_timer)) < 0)
		goto fail;
	if (cfg->setup_gadget && (err = pl__gadget_setup(&cfg->gadget)) < 0)
		goto fail;
	if ((err = arm(l)) < 0)
		goto fail;
	*out = l;
	return 0;
fail:
	pl__link_close(l);
	return err;
}

int pl__link_send_frame(struct pl_link *l, uint64_t frame_id, uint16_t flags,
			const void *payload, size_t len)
{
	uint64_t now = pl__mono_ns();
	int err;

	if (!l->up)
		return -ENOTCONN;
	if (len > l->cfg.max_message_bytes)
		return -EMSGSIZE;
	bool replacing = l->have_held;

	if (!replacing) {
		err = submit(l, PL_MSG_FRAME, frame_id, flags, now, payload, len);
		if (err != -EAGAIN)
			return err;
	} else {
		l->stats.frames_replaced++;
	}
	memcpy(l->held, payload, len);
	l->held_len = len;
	l->held_frame_id = frame_id;
	l->held_flags = flags;
	l->held_time_ns = now;
	if (!l->have_held)
		l->held_since_ns = now;
	l->have_held = true;
	l->stats.frames_held++;
	return replacing ? 2 : 1;
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
		err = submit(l, type, 0, 0, pl__mono_ns(), payload, len);
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
	       (pl__aio_tx_inflight_bytes(l->tx) == 0 || total <= pl__aio_tx_room(l->tx));
}

bool pl__link_is_up(const struct pl_link *l)
{
	return l->up;
}

void pl__link_get_stats(const struct pl_link *l, struct pl_link_stats *out)
{
	*out = l->stats;
	out->up = l->up;
	out->packet_size = l->packet_size;
	out->frames_held_now = l->have_held;
	pl__aio_tx_get_totals(l->tx, &out->tx);
	pl__aio_rx_get_totals(l->rx, &out->rx);
	memcpy(out->rx_errors, l->in.errors, sizeof(out->rx_errors));
	out->rx_skipped_bytes = l->in.skipped_bytes;
}

void pl__link_close(struct pl_link *l)
{
	struct queued_msg *m;

	if (!l)
		return;
	if (l->ffs)
		disarm(l);
	pl__loop_remove(l->tx_watch);
	pl__loop_remove(l->rx_watch);
	pl__loop_remove(l->deadline_timer);
	pl__aio_tx_close(l->tx);
	pl__aio_rx_close(l->rx);
	pl__wire_stream_free(&l->in);
	while ((m = l->queue_head)) {
		l->queue_head = m->next;
		free(m);
	}
	if (l->cfg.setup_gadget)
		pl__gadget_teardown(&l->cfg.gadget);
	free(l->held);
	free(l->sync_bounce);
	free(l);
}
