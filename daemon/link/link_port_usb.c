/* The USB port of the link: a FunctionFS function (link_ffs.c), the AIO
 * sender and receiver (link_aio_tx.c, link_aio_rx.c), and the --sync
 * baseline sender. See link_port.h. */
#include "link.h"
#include "link_aio_rx.h"
#include "link_aio_tx.h"
#include "link_ffs.h"
#include "link_port.h"
#include "link_sync_tx.h"
#include "udc_reoffer.h"
#include "clock.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* The write size when the kernel has no native AIO: the --sync default. */
#define PL_LINK_SYNC_FALLBACK_BYTES 32768
/* How long a gadget someone else bound stays unbound when it is offered
 * afresh: long enough for the host's hub to see it leave (a cable
 * pull of the vm rig's is 300 ms too). */
#define PL_LINK_REOFFER_NS (300ull * 1000 * 1000)

struct usb_port {
	struct pl_link_port base;
	struct pl_link_config cfg;
	struct pl_loop *loop;
	struct pl_link_port_events ev;
	void *ctx;

	struct pl_ffs *ffs;
	int ep_in;             /* for the --sync baseline */
	uint8_t *sync_bounce;
	struct pl_loop_watch *ep0_watch, *tx_watch, *rx_watch;
	struct pl_aio_tx *tx;
	struct pl_aio_rx *rx;
	struct pl_link_tx_totals sync_totals;
	int udc_fd;            /* the gadget's UDC file, opened at start (set-up mode),
				* or when first needed (external) */
	bool unbound;          /* by perflinkd, until the rebind timer */
	struct pl_loop_watch *rebind_timer;
	char udc[64];          /* the controller it is (to be) bound to */
};

/* The AIO sender's view of a send, in the link's terms. */
static int aio_send(struct usb_port *p, const struct iovec *iov, int iovcnt,
		    const uint64_t *frame_id, struct pl_link_send_diag *diag)
{
	struct pl_aio_send_diag d;
	int err = pl__aio_tx_send(p->tx, iov, iovcnt, frame_id, diag ? &d : NULL);

	if (diag && err == 0)
		*diag = (struct pl_link_send_diag){
			.bytes = d.bytes,
			.requests = d.requests,
			.submit_ns = d.submit_ns,
			.backlog_bytes = d.backlog_bytes,
			.backlog_ns = d.backlog_ns,
		};
	return err;
}

static int usb_send(struct pl_link_port *base, const struct iovec *iov, int iovcnt,
		    const uint64_t *frame_id, struct pl_link_send_diag *diag)
{
	struct usb_port *p = (struct usb_port *)base;
	uint64_t t0, write_ns = 0;
	size_t total = 0;
	int err;

	if (!p->cfg.sync_write_bytes)
		return aio_send(p, iov, iovcnt, frame_id, diag);
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	t0 = pl__mono_ns();
	err = pl__sync_tx_send(p->ep_in, iov, iovcnt, p->cfg.sync_write_bytes, p->sync_bounce,
			       &write_ns);
	if (diag) {
		memset(diag, 0, sizeof(*diag));
		diag->bytes = total;
		diag->requests = (unsigned)((total + p->cfg.sync_write_bytes - 1) /
					    p->cfg.sync_write_bytes);
		diag->submit_ns = pl__mono_ns() - t0;
	}
	if (err < 0) {
		p->sync_totals.failed_sends++;
		p->sync_totals.last_error = err;
		pl__log_warnc(err, "link: synchronous write of %zu bytes", total);
		return err;
	}
	p->sync_totals.messages++;
	p->sync_totals.bytes += total;
	return 0;
}

/* Synchronous writes leave nothing in flight. */
static size_t usb_room(const struct pl_link_port *base)
{
	const struct usb_port *p = (const struct usb_port *)base;

	return p->tx ? pl__aio_tx_room(p->tx) : p->cfg.budget_bytes;
}

static uint64_t usb_inflight(const struct pl_link_port *base)
{
	const struct usb_port *p = (const struct usb_port *)base;

	return p->tx ? pl__aio_tx_inflight_bytes(p->tx) : 0;
}

/* Frames the sender found lost (link_aio_tx.h), to the link: they move
 * from sent to not sent for their producers, as over TCP. */
static void tell_lost(struct usb_port *p)
{
	const uint64_t *ids;
	size_t n = p->tx ? pl__aio_tx_take_lost(p->tx, &ids) : 0;

	if (n && p->ev.frames_lost)
		p->ev.frames_lost(p->ctx, ids, n);
}

static void on_tx(void *ctx, int fd, uint32_t events)
{
	struct usb_port *p = ctx;

	(void)fd;
	(void)events;
	if (pl__aio_tx_reap(p->tx) > 0) {
		tell_lost(p);
		p->ev.progress(p->ctx);
	}
}

static void on_rx(void *ctx, int fd, uint32_t events)
{
	struct usb_port *p = ctx;

	(void)fd;
	(void)events;
	pl__aio_rx_reap(p->rx);
}

static void on_rx_bytes(void *ctx, const uint8_t *data, size_t len)
{
	struct usb_port *p = ctx;

	p->ev.bytes(p->ctx, data, len);
}

static size_t on_rx_want(void *ctx)
{
	struct usb_port *p = ctx;

	return p->ev.bytes_wanted ? p->ev.bytes_wanted(p->ctx) : 0;
}

static void ffs_enable(void *ctx, int ep_in, int ep_out, unsigned packet_size)
{
	struct usb_port *p = ctx;

	p->ep_in = ep_in;
	if (p->tx)
		pl__aio_tx_attach(p->tx, ep_in, packet_size);
	if (p->rx && pl__aio_rx_attach(p->rx, ep_out, packet_size) < 0)
		pl__log_warnx("link: the host's messages cannot be received");
	p->ev.up(p->ctx, packet_size);
}

static void ffs_disable(void *ctx, const char *why)
{
	struct usb_port *p = ctx;

	if (p->tx)
		pl__aio_tx_detach(p->tx);
	if (p->rx)
		pl__aio_rx_detach(p->rx);
	p->ep_in = -1;
	tell_lost(p); /* what was in flight: before down, as the port promises */
	p->ev.down(p->ctx, why);
}

static void on_ep0(void *ctx, int fd, uint32_t events);

static int arm(struct usb_port *p)
{
	static const struct pl_ffs_events ev = { .enable = ffs_enable, .disable = ffs_disable };
	int err;

	if ((err = pl__ffs_open(&p->ffs, p->cfg.ffs_dir, &ev, p)) < 0)
		return err;
	if ((err = pl__loop_add_fd(p->loop, pl__ffs_ep0_fd(p->ffs), EPOLLIN, on_ep0, p,
				   &p->ep0_watch)) < 0)
		return err;
	/* through the descriptor opened at start: as its own user too */
	if (p->cfg.setup_gadget && (err = pl__udc_write(p->udc_fd, p->udc)) < 0) {
		pl__log_warnc(err, "gadget: binding to %s", p->udc);
		return err;
	}
	return 0;
}

static void disarm(struct usb_port *p)
{
	pl__loop_remove(p->ep0_watch);
	p->ep0_watch = NULL;
	if (p->cfg.setup_gadget)
		pl__udc_write(p->udc_fd, NULL); /* ENODEV: was not bound */
	pl__ffs_close(p->ffs); /* calls ffs_disable if it was up */
	p->ffs = NULL;
}

static void on_rebind(void *ctx, uint64_t expirations)
{
	struct usb_port *p = ctx;
	int err;

	(void)expirations;
	if (!p->unbound)
		return;
	p->unbound = false;
	if ((err = pl__udc_write(p->udc_fd, p->udc)) < 0)
		pl__log_warnc(err, "link: binding the gadget to UDC %s again failed: the host "
			      "sees no device until its owner binds it", p->udc);
}

/* The external gadget's UDC file, found from the functionfs mount
 * (udc_reoffer.h) and kept open: at start, while perflinkd may still open
 * it (it may run as its own user later), or else when first needed. */
static int open_udc_file(struct usb_port *p, bool quiet)
{
	char udc_file[PATH_MAX];
	int err;

	if (p->udc_fd >= 0)
		return 0;
	if ((err = pl__udc_file_of_ffs("/proc/self/mountinfo", p->cfg.gadget.configfs,
				       p->cfg.ffs_dir, udc_file, sizeof(udc_file))) < 0) {
		if (!quiet)
			pl__log_warnc(err, "link: cannot find the configfs gadget of %s",
				      p->cfg.ffs_dir);
		return err;
	}
	if ((p->udc_fd = open(udc_file, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		err = -errno;
		if (!quiet)
			pl__log_warnc(err, "link: cannot open %s", udc_file);
		return err;
	}
	return 0;
}

/* A gadget someone else bound: unbind it from its UDC and bind it again
 * shortly after (udc_reoffer.h). 0, or -errno when that cannot be done here
 * (logged). */
static int reoffer_external(struct usb_port *p)
{
	int err;

	if (p->unbound)
		return 0; /* already unbound: the timer binds it */
	if ((err = open_udc_file(p, false)) < 0)
		return err;
	if ((err = pl__udc_read(p->udc_fd, p->udc, sizeof(p->udc))) < 0 || !p->udc[0]) {
		err = err < 0 ? err : -ENOENT;
		pl__log_warnc(err, "link: the gadget of %s is bound to no UDC", p->cfg.ffs_dir);
		return err;
	}
	if (!p->rebind_timer &&
	    (err = pl__loop_add_timer(p->loop, 0, 0, on_rebind, p, &p->rebind_timer)) < 0)
		return err;
	/* nothing may be submitted to the endpoints once the unbind began */
	pl__ffs_drop_endpoints(p->ffs, "unbind");
	if ((err = pl__udc_write(p->udc_fd, NULL)) < 0) {
		pl__log_warnc(err, "link: unbinding the gadget from UDC %s", p->udc);
		return err;
	}
	p->unbound = true;
	pl__loop_timer_set(p->rebind_timer, PL_LINK_REOFFER_NS, 0);
	return 0;
}

/* Close ep0 and open it again (ep0 failed, or the gadget cannot be offered
 * afresh otherwise). A gadget perflinkd set up is bound again by arm(). One
 * someone else bound is unbound by the kernel when ep0 closes (udc_reoffer.h
 * says why): it is bound again through its UDC file when perflinkd has it,
 * else it stays unbound until its owner binds it. */
static void rearm(struct usb_port *p, const char *why)
{
	char udc[sizeof(p->udc)] = "";
	int err;

	if (!p->cfg.setup_gadget && p->udc_fd >= 0 && !p->unbound)
		pl__udc_read(p->udc_fd, udc, sizeof(udc));
	if (p->cfg.setup_gadget)
		pl__log_warnx("link: %s; dropping the gadget and re-arming it", why);
	else if (udc[0])
		pl__log_warnx("link: %s; re-arming the gadget and binding it to UDC %s again",
			      why, udc);
	else
		pl__log_warnx("link: %s; re-arming the gadget: it stays unbound until its "
			      "owner binds it again", why);
	disarm(p);
	if ((err = arm(p)) < 0) {
		pl__log_warnc(err, "link: re-arming the gadget failed");
		return;
	}
	/* the descriptors are written again: binding works now */
	if (udc[0] && (err = pl__udc_write(p->udc_fd, udc)) < 0)
		pl__log_warnc(err, "link: binding the gadget to UDC %s again failed", udc);
}

/* Offer the gadget to the host again: the host enumerates it afresh, which
 * recovers a host side that stopped reading. One that someone else bound is
 * unbound and bound again at its UDC, with ep0 kept open; where that
 * cannot be done, and for a gadget perflinkd set up, it is re-armed. */
static void usb_reset(struct pl_link_port *base, const char *why)
{
	struct usb_port *p = (struct usb_port *)base;

	if (!p->cfg.setup_gadget && p->ffs && reoffer_external(p) == 0) {
		pl__log_warnx("link: %s; unbinding the gadget from UDC %s and binding it "
			      "again", why, p->udc);
		return;
	}
	rearm(p, why);
}

static void on_ep0(void *ctx, int fd, uint32_t events)
{
	struct usb_port *p = ctx;

	(void)fd;
	(void)events;
	if (pl__ffs_handle_ep0(p->ffs) < 0)
		rearm(p, "ep0 failed");
}

static void aio_totals(const struct pl_aio_tx *aio, struct pl_link_tx_totals *tx,
		       struct pl_link_usb_totals *usb)
{
	struct pl_aio_tx_totals t;

	pl__aio_tx_get_totals(aio, &t);
	*tx = (struct pl_link_tx_totals){
		.messages = t.messages,
		.bytes = t.bytes,
		.failed_sends = t.failed_submits,
		.max_submit_ns = t.max_submit_ns,
		.max_backlog_bytes = t.max_backlog_bytes,
		.max_backlog_ns = t.max_backlog_ns,
		.last_error = t.last_error,
	};
	usb->requests = t.requests;
	usb->completed_requests = t.completed_requests;
	usb->failed_requests = t.failed_requests;
	usb->short_requests = t.short_requests;
	usb->cancelled_requests = t.cancelled_requests;
	usb->partial_submits = t.partial_submits;
	usb->zero_length_requests = t.zero_length_requests;
	usb->zlps_not_needed = t.zlps_not_needed;
}

static void usb_totals(const struct pl_link_port *base, struct pl_link_tx_totals *tx,
		       struct pl_link_rx_totals *rx, struct pl_link_usb_totals *usb)
{
	const struct usb_port *p = (const struct usb_port *)base;

	if (p->cfg.sync_write_bytes || !p->tx)
		*tx = p->sync_totals;
	else
		aio_totals(p->tx, tx, usb);
	if (p->rx) {
		struct pl_aio_rx_totals r;

		pl__aio_rx_get_totals(p->rx, &r);
		*rx = (struct pl_link_rx_totals){
			.reads = r.reads,
			.bytes = r.bytes,
			.failed_reads = r.failed_reads,
			.last_error = r.last_error,
		};
		usb->reads_requeued_after_epipe = r.requeued_after_epipe;
	}
}

static void usb_close(struct pl_link_port *base)
{
	struct usb_port *p = (struct usb_port *)base;

	if (!p)
		return;
	on_rebind(p, 1); /* leave the gadget bound as its owner bound it */
	pl__loop_remove(p->rebind_timer);
	if (p->ffs)
		disarm(p); /* unbinds a set-up gadget through udc_fd */
	if (p->udc_fd >= 0)
		close(p->udc_fd);
	pl__loop_remove(p->tx_watch);
	pl__loop_remove(p->rx_watch);
	pl__aio_tx_close(p->tx);
	pl__aio_rx_close(p->rx);
	/* Removing the gadget takes root. perflinkd running as its own user
	 * leaves it to the part that stayed root (daemon/core/root_cleanup.h),
	 * which does it once perflinkd has exited. */
	if (p->cfg.setup_gadget && geteuid() == 0)
		pl__gadget_teardown(&p->cfg.gadget);
	free(p->sync_bounce);
	free(p);
}

static const struct pl_link_port_ops usb_ops = {
	.name = "usb",
	.send = usb_send,
	.room = usb_room,
	.inflight = usb_inflight,
	.reset = usb_reset,
	.totals = usb_totals,
	.close = usb_close,
};

int pl__link_port_usb_open(struct pl_link_port **out, const struct pl_link_config *cfg,
			   struct pl_loop *loop, const struct pl_link_port_events *ev, void *ctx)
{
	struct usb_port *p = calloc(1, sizeof(*p));
	struct pl_aio_tx_config txc;
	int err;

	if (!p)
		return -ENOMEM;
	p->base.ops = &usb_ops;
	p->cfg = *cfg;
	p->loop = loop;
	p->ev = *ev;
	p->ctx = ctx;
	p->ep_in = -1;
	p->udc_fd = -1;
	pl__aio_tx_config_default(&txc);
	txc.chunk_bytes = cfg->chunk_bytes;
	txc.budget_bytes = cfg->budget_bytes;
	txc.max_message_bytes = cfg->max_message_bytes + 1024; /* header and padding */
	err = pl__aio_tx_open(&p->tx, &txc);
	if (err == -ENOSYS) {
		/* A kernel without native AIO (the probe said why): the link
		 * still carries frames and telemetry, the slow way. */
		if (!p->cfg.sync_write_bytes)
			p->cfg.sync_write_bytes = PL_LINK_SYNC_FALLBACK_BYTES;
		pl__log_warnx("link: without native AIO, messages go out as blocking %zu-byte "
			      "writes (the --sync baseline: a host that stops reading stalls "
			      "perflinkd) and the host's replies and pings are not received",
			      p->cfg.sync_write_bytes);
		p->tx = NULL;
	} else if (err < 0) {
		goto fail;
	} else if ((err = pl__aio_rx_open(&p->rx, cfg->rx_depth < 8 ? 8 : cfg->rx_depth,
					  cfg->rx_read_bytes, on_rx_bytes, on_rx_want, p)) < 0) {
		goto fail;
	}
	if (p->cfg.sync_write_bytes && !(p->sync_bounce = malloc(p->cfg.sync_write_bytes))) {
		err = -ENOMEM;
		goto fail;
	}
	if ((p->tx && (err = pl__loop_add_fd(loop, pl__aio_tx_eventfd(p->tx), EPOLLIN, on_tx, p,
					     &p->tx_watch)) < 0) ||
	    (p->rx && (err = pl__loop_add_fd(loop, pl__aio_rx_eventfd(p->rx), EPOLLIN, on_rx, p,
					     &p->rx_watch)) < 0))
		goto fail;
	if (cfg->setup_gadget &&
	    ((err = pl__gadget_setup(&cfg->gadget)) < 0 ||
	     (err = p->udc_fd = pl__gadget_udc_open(&cfg->gadget, p->udc, sizeof(p->udc))) < 0))
		goto fail;
	if ((err = arm(p)) < 0)
		goto fail;
	if (!cfg->setup_gadget)
		open_udc_file(p, true); /* else found, or said why, when first needed */
	*out = &p->base;
	return 0;
fail:
	usb_close(&p->base);
	return err;
}
