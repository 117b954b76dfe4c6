/* The end of a host's TCP connection, and which frames it never got.
 *
 * The ledger: the frames sent on a connection by where their last byte
 * lies in its stream. When the connection goes away, a frame whose last
 * byte had not reached the host's TCP is lost, and the link says so
 * (frames_lost) so that its producer counts it not sent: nothing is
 * reported delivered that never arrived.
 *
 * The drain: a connection dropped by the device (the deadline, a newer
 * host) is not simply closed. close() on a socket with unread input, or
 * input arriving after it, makes the kernel send a reset, and a reset
 * makes the host's kernel throw away what it received and the host had not
 * read yet: frames lost without anyone knowing. So the device shuts its
 * sending side (TLS: after close_notify) (the host reads what is queued, then end of stream), reads
 * and discards what the host still sends (counting the REPLYs among it:
 * answers that never reach their producer), and closes once the host closed
 * too. A host that does not come back within PL_TCP_DRAIN_MS loses what
 * its TCP had not acknowledged (SIOCOUTQ) by then: those frames are
 * counted lost, and the connection closed. One connection drains at a
 * time; the next drop finishes the one before in the same way. */
#ifndef PL_DAEMON_LINK_TCP_DRAIN_H
#define PL_DAEMON_LINK_TCP_DRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "event_loop.h"
#include "link_conn.h"

/* more than the budget and the send buffer hold of small frames */
#define PL_TCP_LEDGER_FRAMES 4096
#define PL_TCP_DRAIN_MS 10000

struct pl_tcp_ledger {
	struct pl_tcp_ledger_frame {
		uint64_t end, frame_id;
	} frame[PL_TCP_LEDGER_FRAMES];
	unsigned next, count;
	uint64_t stream_bytes; /* handed to the port on this connection */
};

void pl__tcp_ledger_reset(struct pl_tcp_ledger *l);
/* A message of bytes went out (into the socket or the port's buffer);
 * frame_id when it is a FRAME, else NULL. */
void pl__tcp_ledger_sent(struct pl_tcp_ledger *l, size_t bytes, const uint64_t *frame_id);
/* The frames whose last byte lies in [from, to) of the stream, into out
 * (PL_TCP_LEDGER_FRAMES room); how many. */
size_t pl__tcp_ledger_between(const struct pl_tcp_ledger *l, uint64_t from, uint64_t to,
			      uint64_t *out);

typedef void (*pl__tcp_lost_cb)(void *ctx, const uint64_t *frame_ids, size_t n);

struct pl_tcp_drain;

int pl__tcp_drain_open(struct pl_tcp_drain **out, struct pl_loop *loop, pl__tcp_lost_cb lost,
		       void *ctx);
/* Take conn (owned from here) whose stream, as ledger counts it, reached the
 * kernel up to kernel_end: drain it as above. The host's messages are
 * padded to pad; rest_of_message: how many bytes of a message the link had
 * begun to receive are still to come (skipped before the next header). */
void pl__tcp_drain_start(struct pl_tcp_drain *d, struct pl_link_conn *conn,
			 const struct pl_tcp_ledger *ledger, uint64_t kernel_end, uint32_t pad,
			 uint64_t rest_of_message);
/* REPLYs read and discarded on dropped connections, since the drain opened. */
uint64_t pl__tcp_drain_replies_discarded(const struct pl_tcp_drain *d);
/* Closes a connection still draining, telling nobody (shutting down). */
void pl__tcp_drain_close(struct pl_tcp_drain *d);

#endif
