/* One connection to the device, as both perflink-host and libperflink-host
 * keep it: the transport (USB or TCP, retried after it drops), the receiver
 * that checks and answers every message, the device's telemetry parser and
 * the clock offset from a ping sent once a second. A new connection starts
 * the receiver's sequences again and pings at once. What the two front ends
 * do differently comes in through the hooks: what to do with each frame,
 * the application's replies, the telemetry lines, or only counting the
 * bytes (perflink-host --drain).
 *
 * The session owns the transport, the receiver's buffers and the parser's
 * scratch, and frees them in pl__host_session_free; the latency table and
 * telemetry files it is given stay the caller's and must outlive it.
 * Single-threaded: a session is used from one thread at a time, and every
 * hook runs on that thread inside the session's calls (mostly
 * pl__host_session_step) or the transport's flush. The front ends read the
 * fields above "the session's own" directly (counters, the transport for
 * its name, stats and flush); those below are private. Nothing here sets
 * errno on purpose; the socket and libusb calls inside do, so a public
 * edge keeps it (host_lib.c). */
#ifndef PL_HOST_SESSION_H
#define PL_HOST_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock_offset.h"
#include "device_hello.h"
#include "device_telemetry.h"
#include "receiver.h"
#include "transport.h"

/* Each may be NULL; ctx is the one given to pl__host_session_init. */
struct pl_host_session_hooks {
	/* a frame that passed the checks, before its reply goes out; now_ns:
	 * the host's clock when it was taken out of the stream */
	void (*frame)(void *ctx, const struct pl_wire_header *h, uint64_t now_ns);
	/* PL_REPLY_APP: as pl_receiver_hooks.reply */
	size_t (*reply)(void *ctx, const struct pl_wire_header *h, const uint8_t *payload,
			uint8_t *out, size_t cap);
	/* every valid telemetry line: as pl_device_telemetry.line_hook */
	void (*line)(void *ctx, const char *type, const char *line, size_t len);
	/* when set, what arrives is only counted here (len bytes), never
	 * parsed, and no pings go out */
	void (*raw)(void *ctx, size_t len);
};

struct pl_host_session_open_config {
	const char *tcp;                  /* HOST:PORT: TCP; NULL: USB */
	const char *tcp_key_file;         /* TCP: the pre-shared key, or NULL */
	const char *tcp_tls_ca_file;      /* TCP: TLS, checked by this CA, or NULL */
	const char *tcp_tls_fingerprint;  /* TCP: TLS, this certificate pinned, or NULL */
	struct pl_usb_link_config usb;    /* USB only */
	struct pl_latency_table *table;   /* frame_latency round trips; may be NULL */
	struct pl_telemetry_files *files; /* the other lines by type; may be NULL */
	bool log_changes;                 /* log a USB device coming and going (TCP logs its own) */
};

struct pl_host_session {
	struct pl_host_transport *link; /* NULL until pl__host_session_open */
	struct pl_receiver rx;
	struct pl_device_telemetry dt;
	struct pl_device_hello device; /* its last HELLO */
	struct pl_clock_offset clock;
	bool connected;
	uint64_t bad_pongs; /* pongs the clock offset refused */
	/* the session's own */
	uint64_t last_ping_ns;
	bool log_changes;
	const struct pl_host_session_hooks *hooks;
	void *ctx;
};

/* The receiver (answering frames by reply) and the clock offset; nothing
 * is open yet. hooks must not be NULL and must outlive the session. 0 or
 * -ENOMEM; either way pl__host_session_free frees what it took. */
int pl__host_session_init(struct pl_host_session *s, enum pl_reply_mode reply,
			  const struct pl_host_session_hooks *hooks, void *ctx);
/* The telemetry parser and the transport; nothing is connected before the
 * first step. 0, or the transport's negative code (logged there). */
int pl__host_session_open(struct pl_host_session *s, const struct pl_host_session_open_config *cfg);
/* One round: move bytes for up to timeout_ms (connecting, receiving,
 * checking, replying; the hooks run inside), then ping when it is time. 0,
 * or a negative errno when the host itself failed (libusb, logged), not the
 * connection, which is retried. */
int pl__host_session_step(struct pl_host_session *s, int timeout_ms);
/* Close the transport and free everything: after pl__host_session_init,
 * whatever it and pl__host_session_open returned. */
void pl__host_session_free(struct pl_host_session *s);

#endif
