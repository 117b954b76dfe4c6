/* The device end of the link: perflink wire messages (docs/wire.md) to and
 * from the host, over a FunctionFS gadget with native AIO (the default on a
 * device) or over TCP (link_port.h), driven by the daemon's event loop.
 *
 * The link answers the host's pings itself (clock offset) and measures each
 * frame's round trip from its send to the host's reply, which it reports to
 * the host as frame_latency telemetry (link_latency.h).
 *
 * Frames are latency-critical: one that does not fit the in-flight budget is
 * held, not sent, and a newer frame replaces a held one (counted). Other
 * messages wait in a bounded queue under a deadline; when the host has taken
 * nothing for that long, the gadget is dropped and re-armed so the host
 * enumerates it afresh. Not thread-safe: the loop's thread owns the link. */
#ifndef PL_DAEMON_LINK_H
#define PL_DAEMON_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event_loop.h"
#include "gadget_configfs.h" /* the gadget's part of pl_link_config */
#include "wire.h"

struct pl_link;

struct pl_link_config {
	const char *tcp_listen;      /* "HOST:PORT": the TCP port instead of USB */
	const char *tcp_key_file;    /* the pre-shared key; NULL: loopback only */
	const char *tcp_tls_cert;    /* TLS (with the key): certificate, PEM */
	const char *tcp_tls_key;     /* and its private key */
	const char *program;         /* named in the HELLO; NULL: "perflinkd" */
	const char *ffs_dir;         /* a mounted functionfs instance */
	bool setup_gadget;           /* make the gadget through configfs first */
	struct pl_gadget_config gadget;
	size_t chunk_bytes;          /* --write-chunk: 8192 default, 16384 allowed */
	size_t budget_bytes;         /* in flight at most, default 1 MiB */
	size_t max_message_bytes;
	unsigned rx_depth;           /* OUT reads queued, at least 8 */
	size_t rx_read_bytes;
	uint64_t deadline_ns;        /* how long other messages may wait */
	size_t queue_bytes;          /* bound on waiting non-frame messages */
	size_t sync_write_bytes;     /* --sync: blocking writes of this size (0: AIO) */
};

struct pl_link_handlers {
	void (*up)(void *ctx, unsigned packet_size);
	void (*down)(void *ctx, const char *why);
	/* A checked message from the host. payload valid during the call. */
	void (*message)(void *ctx, const struct pl_wire_header *hdr, const uint8_t *payload);
	/* Room opened in the budget (a good moment to offer the next frame). */
	void (*writable)(void *ctx);
	/* Frames sent that the host will never get (its connection went away
	 * before it took them; TCP only so far), before down(). May be NULL. */
	void (*frames_lost)(void *ctx, const uint64_t *frame_ids, size_t n);
};

/* What one send did: the last_send object of link_diag (docs/wire.md). */
struct pl_link_send_diag {
	uint64_t bytes;
	unsigned requests;      /* USB: AIO requests or synchronous writes; TCP: 1 */
	uint64_t submit_ns;     /* inside io_submit, write or sendmsg */
	uint64_t backlog_bytes; /* sent, not yet taken by the host, when it came */
	uint64_t backlog_ns;    /* how long that backlog had been waiting then */
};

/* What went out and came in, whatever carries it. */
struct pl_link_tx_totals {
	uint64_t messages, bytes;
	uint64_t failed_sends; /* USB: failed io_submit or write; TCP: failed send */
	uint64_t max_submit_ns, max_backlog_bytes, max_backlog_ns;
	int last_error;        /* negative errno of the last failure, 0 if none */
};
struct pl_link_rx_totals {
	uint64_t reads, bytes, failed_reads;
	int last_error;
	/* TCP: REPLYs the host sent on a connection the device had dropped
	 * (read and discarded while it drained, link_tcp_drain.h) */
	uint64_t replies_discarded;
};
/* USB with AIO only (zero on TCP and with --sync): the requests behind the
 * messages. A message is several requests, plus a zero-length one when it
 * ends on a packet boundary and nothing follows it (docs/wire.md). */
struct pl_link_usb_totals {
	uint64_t requests, completed_requests, failed_requests, short_requests;
	uint64_t cancelled_requests, partial_submits;
	uint64_t zero_length_requests, zlps_not_needed;
	uint64_t reads_requeued_after_epipe;
};

/* TCP only: who connected and how the handshake went (link_tcp_auth.h). */
struct pl_link_tcp_totals {
	bool keyed;                  /* a key is set: every host must prove it */
	bool tls;                    /* and inside TLS 1.3 */
	uint64_t connections;        /* admitted as the host */
	uint64_t replaced;           /* an admitted host displaced by a newer one */
	uint64_t auth_passed, auth_failed, auth_timed_out, auth_evicted;
	uint64_t tls_failed;         /* TLS handshakes that failed (not a ClientHello...) */
};

struct pl_link_stats {
	bool up;
	const char *transport;       /* "usb" or "tcp" */
	unsigned packet_size;
	uint64_t frames_sent, frames_held, frames_replaced; /* replaced: a held one lost */
	/* frames the host never got: a held one whose send failed with the host
	 * still there, or one sent when its connection went away untaken */
	uint64_t frames_lost;
	bool frames_held_now; /* a frame is held at this moment */
	uint64_t messages_sent, messages_queued_now, messages_dropped;
	uint64_t rearms;
	struct pl_link_send_diag last_send;
	uint64_t last_wait_ns; /* how long the last sent message waited for room */
	struct pl_link_tx_totals tx;
	struct pl_link_rx_totals rx;
	struct pl_link_usb_totals usb;
	uint64_t rx_messages;
	uint64_t rx_errors[PL_WIRE_ERROR_COUNT];
	uint64_t rx_skipped_bytes;
	uint64_t pings, replies_matched;
	/* replies not passed on: to a frame not among the last 4096 sent on
	 * the connection, or a second reply to one */
	uint64_t replies_never_sent, replies_repeated;
	uint64_t hash_ns;            /* spent computing payload checksums */
	uint64_t last_rtt_ns, max_rtt_ns, latency_dropped;
};

void pl__link_config_default(struct pl_link_config *cfg);
int pl__link_open(struct pl_link **out, const struct pl_link_config *cfg, struct pl_loop *loop,
		  const struct pl_link_handlers *h, void *ctx);
/* Send a frame now, or hold it (copied) if the budget is full. 0 when sent,
 * 1 when held, 2 when held in place of a frame held before (which is then
 * never sent), -ENOTCONN when the host is not there, other -errno. */
int pl__link_send_frame(struct pl_link *l, uint64_t frame_id, uint16_t flags,
			const void *payload, size_t len);
/* The same with the payload's XXH3 computed by the caller
 * (pl__wire_payload_hash), where the frame was made: the link then only
 * submits. A wrong hash makes the host reject this frame, nothing else. */
int pl__link_send_frame_hashed(struct pl_link *l, uint64_t frame_id, uint16_t flags,
			       const void *payload, size_t len, uint64_t payload_xxh3);
/* Send any other message now or queue it (copied). 0 sent, 1 queued,
 * -ENOBUFS when the queue is full (dropped and counted), -ENOTCONN. */
int pl__link_send(struct pl_link *l, enum pl_wire_type type, const void *payload, size_t len);
bool pl__link_is_up(const struct pl_link *l);
/* End the session as the deadline would (USB: offer the gadget afresh;
 * TCP: drain and close the connection): the host said it is leaving. It
 * ends once what was sent or queued before has reached the host (the
 * command_result that answers end_of_stream above all), or after 1 s. */
void pl__link_end_session(struct pl_link *l, const char *why);
/* Whether a frame of len bytes would be sent at once (not held): for
 * producers that prefer to wait for room rather than have frames replaced. */
bool pl__link_frame_fits(const struct pl_link *l, size_t len);
/* The TCP port listened on (useful with port 0), 0 on USB. */
unsigned pl__link_tcp_port(const struct pl_link *l);
/* false when the link is not on TCP. */
bool pl__link_tcp_totals(const struct pl_link *l, struct pl_link_tcp_totals *out);
void pl__link_get_stats(const struct pl_link *l, struct pl_link_stats *out);
void pl__link_close(struct pl_link *l);

#endif
