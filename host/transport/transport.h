/* The host's end of the link, USB or TCP, behind one set of calls, so that
 * perflink-host and libperflink-host.so choose it once and never again ask
 * which it is. usb_link.h and tcp_link.h are the two; both call the same
 * three handlers. */
#ifndef PL_HOST_TRANSPORT_H
#define PL_HOST_TRANSPORT_H

#include "tcp_link.h"
#include "usb_link.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pl_host_transport;

struct pl_host_transport_config {
	const char *tcp;                /* HOST:PORT: TCP; NULL: USB */
	const char *tcp_key_file;       /* TCP only: the pre-shared key */
	const char *tcp_tls_ca_file;    /* TCP only: TLS, the device checked by a CA */
	const char *tcp_tls_fingerprint; /* TCP only: TLS, the device's certificate pinned */
	struct pl_usb_link_config usb;  /* USB only */
	unsigned tcp_retry_ms;          /* TCP only */
	size_t tcp_out_limit_bytes;     /* TCP only */
};

struct pl_host_transport_handlers {
	void (*connected)(void *ctx, unsigned packet_size);
	void (*disconnected)(void *ctx);
	void (*data)(void *ctx, const uint8_t *data, size_t len);
};

/* What both transports count; the rest is in their own stats. */
struct pl_host_transport_stats {
	uint64_t connects, disconnects;
	uint64_t dropped_messages; /* TCP: replies its buffer could not take */
};

/* 0, or a negative code from the transport's open (logged there). */
int pl__host_transport_open(struct pl_host_transport **out,
			    const struct pl_host_transport_config *cfg,
			    const struct pl_host_transport_handlers *h, void *ctx);
/* A whole padded message. 0 or a negative errno. */
int pl__host_transport_send(struct pl_host_transport *t, const void *msg, size_t len);
/* Move bytes for up to timeout_ms; the handlers run inside. 0, or a
 * negative errno when the host side itself failed (not the connection,
 * which is retried). */
int pl__host_transport_poll(struct pl_host_transport *t, int timeout_ms);
const char *pl__host_transport_name(const struct pl_host_transport *t); /* "usb", "tcp" */
void pl__host_transport_get_stats(const struct pl_host_transport *t,
				  struct pl_host_transport_stats *out);
/* Give what is still queued up to flush_ns to go out (TCP: until nothing is
 * pending; USB: a few event rounds, which bulk OUT transfers complete in),
 * while connected. */
void pl__host_transport_flush(struct pl_host_transport *t, uint64_t flush_ns);
void pl__host_transport_close(struct pl_host_transport *t);

#endif
