/* The TCP transport: perflink-host connects to perflinkd listening on
 * HOST:PORT. Same framing as USB, with messages padded to 64 bytes. The
 * connection is retried every retry_ms while it is refused or after it
 * drops; each change of state is logged once, not each retry.
 *
 * Non-blocking socket and poll(); TCP_NODELAY, since replies are
 * latency-critical and small. A message the socket does not take at once is
 * buffered (at most out_limit_bytes; a message that does not fit whole is
 * dropped and counted, never cut). The shape mirrors usb_link.h.
 *
 * With a key the connection counts as made only after the handshake of
 * docs/wire.md "TCP authentication"; a handshake that fails is logged once
 * by its reason and retried like a refused connection. With TLS the key's
 * handshake and everything after it run inside TLS 1.3; the socket's bytes
 * go through common/auth/link_conn.h either way. */
#ifndef PL_HOST_TCP_LINK_H
#define PL_HOST_TCP_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PL_TCP_PACKET_SIZE 64

struct pl_tcp_link;

struct pl_tcp_link_config {
	const char *address;    /* HOST:PORT, [IPV6]:PORT */
	/* The pre-shared key's file (common/auth/link_auth.h): the device must
	 * prove it holds the key, and this host proves it too, before any
	 * message. NULL: no key; a device that asks for one is refused. */
	const char *key_file;
	/* TLS 1.3 (docs/wire.md "TLS"; needs key_file): the device's
	 * certificate checked against this CA file (chain, and the name or
	 * address connected to), or pinned by its SHA-256 fingerprint. Both
	 * NULL: no TLS. */
	const char *tls_ca_file, *tls_fingerprint;
	unsigned retry_ms;      /* between connection attempts */
	size_t out_limit_bytes; /* replies buffered, at least one largest message */
};

struct pl_tcp_link_handlers {
	void (*connected)(void *ctx, unsigned packet_size);
	void (*disconnected)(void *ctx);
	void (*data)(void *ctx, const uint8_t *data, size_t len);
};

struct pl_tcp_link_stats {
	uint64_t connects, disconnects, failed_connects, bytes;
	uint64_t failed_auths; /* handshakes that did not prove both sides */
	uint64_t sent_messages, dropped_messages, failed_sends;
	size_t max_buffered;
};

/* Resolves the address (numeric or a name) once and loads the key. 0,
 * -EINVAL (bad address or key; logged) or -errno. Connecting starts in the
 * first poll. */
int pl__tcp_link_open(struct pl_tcp_link **out, const struct pl_tcp_link_config *cfg,
		      const struct pl_tcp_link_handlers *h, void *ctx);
/* Connect, read, write for up to timeout_ms. 0, or a negative errno for
 * failure of the host itself (not of the connection). A signal ends the
 * wait early with 0. */
int pl__tcp_link_poll(struct pl_tcp_link *l, int timeout_ms);
bool pl__tcp_link_connected(const struct pl_tcp_link *l);
/* Queue a whole padded message; copied when it cannot go out at once.
 * 0, -ENOTCONN, -ENOBUFS (buffer full; counted) or -errno. */
int pl__tcp_link_send(struct pl_tcp_link *l, const void *data, size_t len);
/* Bytes waiting to be written. */
size_t pl__tcp_link_pending(const struct pl_tcp_link *l);
void pl__tcp_link_get_stats(const struct pl_tcp_link *l, struct pl_tcp_link_stats *out);
void pl__tcp_link_close(struct pl_tcp_link *l);

#endif
