/* See transport.h. */
#include "transport.h"
#include "clock.h"

#include <errno.h>
#include <stdlib.h>

struct pl_host_transport {
	struct pl_usb_link *usb; /* one of the two */
	struct pl_tcp_link *tcp;
};

int pl__host_transport_open(struct pl_host_transport **out,
			    const struct pl_host_transport_config *cfg,
			    const struct pl_host_transport_handlers *h, void *ctx)
{
	/* the two handler structs have this one's shape */
	const struct pl_tcp_link_handlers th = {
		.connected = h->connected,
		.disconnected = h->disconnected,
		.data = h->data,
	};
	const struct pl_usb_link_handlers uh = {
		.connected = h->connected,
		.disconnected = h->disconnected,
		.data = h->data,
	};
	struct pl_host_transport *t = calloc(1, sizeof(*t));
	int err;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	if (cfg->tcp) {
		struct pl_tcp_link_config tc = {
			.address = cfg->tcp,
			.key_file = cfg->tcp_key_file,
			.tls_ca_file = cfg->tcp_tls_ca_file,
			.tls_fingerprint = cfg->tcp_tls_fingerprint,
			.retry_ms = cfg->tcp_retry_ms,
			.out_limit_bytes = cfg->tcp_out_limit_bytes,
		};

		err = pl__tcp_link_open(&t->tcp, &tc, &th, ctx);
	} else {
		err = pl__usb_link_open(&t->usb, &cfg->usb, &uh, ctx);
	}
	if (err < 0) {
		free(t);
		return err;
	}
	*out = t;
	return 0;
}

int pl__host_transport_send(struct pl_host_transport *t, const void *msg, size_t len)
{
	return t->tcp ? pl__tcp_link_send(t->tcp, msg, len) : pl__usb_link_send(t->usb, msg, len);
}

int pl__host_transport_poll(struct pl_host_transport *t, int timeout_ms)
{
	return t->tcp ? pl__tcp_link_poll(t->tcp, timeout_ms) : pl__usb_link_poll(t->usb, timeout_ms);
}

const char *pl__host_transport_name(const struct pl_host_transport *t)
{
	return t->tcp ? "tcp" : "usb";
}

void pl__host_transport_get_stats(const struct pl_host_transport *t,
				  struct pl_host_transport_stats *out)
{
	if (t->tcp) {
		struct pl_tcp_link_stats ts;

		pl__tcp_link_get_stats(t->tcp, &ts);
		*out = (struct pl_host_transport_stats){ ts.connects, ts.disconnects,
							 ts.dropped_messages };
	} else {
		struct pl_usb_link_stats us;

		pl__usb_link_get_stats(t->usb, &us);
		*out = (struct pl_host_transport_stats){ us.connects, us.disconnects, 0 };
	}
}

void pl__host_transport_flush(struct pl_host_transport *t, uint64_t flush_ns)
{
	uint64_t until = pl__mono_ns() + flush_ns;
	int i;

	if (t->tcp) {
		while (pl__tcp_link_connected(t->tcp) && pl__tcp_link_pending(t->tcp) &&
		       pl__mono_ns() < until)
			if (pl__tcp_link_poll(t->tcp, 10) < 0)
				break;
		return;
	}
	for (i = 0; i < 5 && pl__usb_link_connected(t->usb) && pl__mono_ns() < until; i++)
		pl__usb_link_poll(t->usb, 20);
}

void pl__host_transport_close(struct pl_host_transport *t)
{
	if (!t)
		return;
	if (t->tcp)
		pl__tcp_link_close(t->tcp);
	else
		pl__usb_link_close(t->usb);
	free(t);
}
