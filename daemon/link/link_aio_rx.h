/* The link's receiver: depth reads of read_bytes each stay queued on the
 * bulk OUT endpoint (at least 8, as adbd keeps), completions on an eventfd.
 * Each completed read's bytes go to a callback in order, and the read is
 * queued again. A read that fails with EPIPE before any data came (the host
 * cleared a halt) is simply queued again, as adbd does. */
#ifndef PL_DAEMON_LINK_AIO_RX_H
#define PL_DAEMON_LINK_AIO_RX_H

#include <stddef.h>
#include <stdint.h>

struct pl_aio_rx;

typedef void (*pl__aio_rx_cb)(void *ctx, const uint8_t *data, size_t len);

struct pl_aio_rx_totals {
	uint64_t reads, bytes, failed_reads, requeued_after_epipe;
	int last_error;
};

int pl__aio_rx_open(struct pl_aio_rx **out, unsigned depth, size_t read_bytes,
		    pl__aio_rx_cb cb, void *ctx);
int pl__aio_rx_eventfd(const struct pl_aio_rx *rx);
/* Queue the reads on ep_fd. 0 or -errno. */
int pl__aio_rx_attach(struct pl_aio_rx *rx, int ep_fd);
void pl__aio_rx_detach(struct pl_aio_rx *rx);
/* Collect completions, deliver, requeue. Number of reads completed or -errno. */
int pl__aio_rx_reap(struct pl_aio_rx *rx);
void pl__aio_rx_get_totals(const struct pl_aio_rx *rx, struct pl_aio_rx_totals *out);
void pl__aio_rx_close(struct pl_aio_rx *rx);

#endif
