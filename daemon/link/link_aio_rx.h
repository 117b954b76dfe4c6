/* The link's receiver: reads stay queued on the bulk OUT endpoint,
 * completions on an eventfd, each completed read's bytes handed to a
 * callback in order.
 *
 * How big each read is: a bulk OUT request completes when it is full or
 * ends in a short packet, and every message from the host is padded to the
 * packet size, so a read that asks for more than the rest of a message
 * holds that message back until more bytes, or a zero-length packet, come.
 * A host must not need one (docs/wire.md "Transfers"), so with a want
 * callback the reads follow the messages, depth of them queued (at least
 * 8, as adbd keeps): once a message's header is in, the callback says how
 * many bytes it still needs, and reads of up to read_bytes each are queued
 * for exactly that much, never past its end; every other read is of one
 * packet, which completes with that packet whatever message it starts. So
 * small messages are taken depth packets at a time, and a large one
 * streams in large reads. Without a want callback, depth reads of
 * read_bytes each stay queued (the benchmark's bare stream).
 *
 * A zero-length packet completes a read with 0 bytes and changes nothing.
 * A read that fails with EPIPE before any data came (the host cleared a
 * halt) is simply queued again, as adbd does. */
#ifndef PL_DAEMON_LINK_AIO_RX_H
#define PL_DAEMON_LINK_AIO_RX_H

#include <stddef.h>
#include <stdint.h>

struct pl_aio_rx;

typedef void (*pl__aio_rx_cb)(void *ctx, const uint8_t *data, size_t len);
/* Bytes the message being received still needs, 0 when no message has
 * begun (or its header is not in yet). */
typedef size_t (*pl__aio_rx_want_cb)(void *ctx);

struct pl_aio_rx_totals {
	uint64_t reads, bytes, failed_reads, requeued_after_epipe;
	uint64_t zero_length_reads; /* a host's zero-length packets */
	int last_error;
};

int pl__aio_rx_open(struct pl_aio_rx **out, unsigned depth, size_t read_bytes,
		    pl__aio_rx_cb cb, pl__aio_rx_want_cb want, void *ctx);
int pl__aio_rx_eventfd(const struct pl_aio_rx *rx);
/* Queue the reads on ep_fd, whose packets are packet_size. 0 or -errno. */
int pl__aio_rx_attach(struct pl_aio_rx *rx, int ep_fd, unsigned packet_size);
void pl__aio_rx_detach(struct pl_aio_rx *rx);
/* Collect completions, deliver, queue what is wanted next. Number of reads
 * completed or -errno. */
int pl__aio_rx_reap(struct pl_aio_rx *rx);
void pl__aio_rx_get_totals(const struct pl_aio_rx *rx, struct pl_aio_rx_totals *out);
void pl__aio_rx_close(struct pl_aio_rx *rx);

#endif
