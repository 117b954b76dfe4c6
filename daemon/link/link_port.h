/* What carries the link's bytes: a "port". The link (link.c) decides what
 * goes out and when (held frames, queued telemetry, deadlines, sequence
 * numbers); a port only moves whole padded messages and reports what came
 * back. Two ports exist: USB (FunctionFS + native AIO, link_port_usb.c),
 * the default on a device, and TCP (link_port_tcp.c), for machines without
 * a gadget and for the demo. Both use the same wire framing.
 *
 * A port is driven by the daemon's event loop and calls the link back
 * through pl_link_port_events. Not thread-safe. */
#ifndef PL_DAEMON_LINK_PORT_H
#define PL_DAEMON_LINK_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "event_loop.h"
#include "link.h"

/* From the port to the link. */
struct pl_link_port_events {
	/* The peer is there; messages are padded to packet_size. */
	void (*up)(void *ctx, unsigned packet_size);
	/* The peer went away (unplugged, disconnected, reset). */
	void (*down)(void *ctx, const char *why);
	/* Sent bytes completed: room opened in the budget. */
	void (*progress)(void *ctx);
	/* Bytes from the peer, in order. */
	void (*bytes)(void *ctx, const uint8_t *data, size_t len);
	/* How many more bytes the peer's message being received needs, 0 when
	 * none has begun: a port that reads in requests sizes them by it. */
	size_t (*bytes_wanted)(void *ctx);
	/* Frames sent that the peer will never get (the connection went away
	 * with their bytes not taken), just before down(). NULL-safe: a port
	 * that cannot know says nothing. */
	void (*frames_lost)(void *ctx, const uint64_t *frame_ids, size_t n);
};

struct pl_link_port;

struct pl_link_port_ops {
	const char *name;
	/* Send one message given as pieces (header, payload in place, padding).
	 * 0; -EAGAIN when it does not fit the budget now (an idle port always
	 * takes one message); -ENOTCONN; another -errno (logged). The pieces
	 * may be reused as soon as this returns. diag may be NULL. frame_id:
	 * the frame's id when the message is a FRAME, else NULL. */
	int (*send)(struct pl_link_port *p, const struct iovec *iov, int iovcnt,
		    const uint64_t *frame_id, struct pl_link_send_diag *diag);
	size_t (*room)(const struct pl_link_port *p);
	uint64_t (*inflight)(const struct pl_link_port *p);
	/* The peer took nothing for too long: drop it so that it comes back
	 * afresh (USB: re-arm the gadget; TCP: close the connection). */
	void (*reset)(struct pl_link_port *p, const char *why);
	/* Counters: each comes zeroed, and a port fills what it has (usb only
	 * the USB port). */
	void (*totals)(const struct pl_link_port *p, struct pl_link_tx_totals *tx,
		       struct pl_link_rx_totals *rx, struct pl_link_usb_totals *usb);
	void (*close)(struct pl_link_port *p);
};

struct pl_link_port {
	const struct pl_link_port_ops *ops;
};

/* USB: cfg->ffs_dir etc. 0 or -errno (logged). */
int pl__link_port_usb_open(struct pl_link_port **out, const struct pl_link_config *cfg,
			   struct pl_loop *loop, const struct pl_link_port_events *ev, void *ctx);
/* TCP: listen on cfg->tcp_listen ("HOST:PORT", "[V6]:PORT" or ":PORT"). */
int pl__link_port_tcp_open(struct pl_link_port **out, const struct pl_link_config *cfg,
			   struct pl_loop *loop, const struct pl_link_port_events *ev, void *ctx);
/* The port the TCP listener got (for ":0"), 0 if none. */
unsigned pl__link_port_tcp_bound_port(const struct pl_link_port *p);
/* false when p is not the TCP port. */
bool pl__link_port_tcp_totals(const struct pl_link_port *p, struct pl_link_tcp_totals *out);

#endif
