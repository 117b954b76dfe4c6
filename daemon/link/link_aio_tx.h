/* The link's sender: one message goes out as one io_submit of requests of
 * chunk_bytes each (8 KiB by default: the largest size the kernel serves from
 * a slab cache, so no request waits on compaction). Completions
 * arrive on an eventfd. At most budget_bytes are submitted and not yet
 * completed; a message that would pass the budget is refused with -EAGAIN so
 * that the caller can hold it (frames) or let it wait (other messages).
 *
 * FunctionFS copies the data into its own request buffers inside io_submit,
 * so the caller's buffer is free as soon as pl__aio_tx_send returns.
 * No synchronous write, no watchdog and no signal masking: a signal never
 * interrupts a transfer here because nothing waits inside one. */
#ifndef PL_DAEMON_LINK_AIO_TX_H
#define PL_DAEMON_LINK_AIO_TX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct pl_aio_tx;

struct pl_aio_tx_config {
	size_t chunk_bytes;       /* 8192 (default) or 16384 */
	size_t budget_bytes;      /* submitted-not-completed limit, default 1 MiB */
	size_t max_message_bytes; /* largest message, sizes the AIO context */
	unsigned packet_size;     /* a zero-length request ends each message
				   * that is a multiple of it, unless the next
				   * message follows first (link_aio_tx.c,
				   * zlp_lead); 0: never */
};

/* What one send did: the last_send figures of the link's diagnostics
 * (docs/wire.md, link diagnostics). */
struct pl_aio_send_diag {
	uint64_t bytes;
	unsigned requests;
	uint64_t submit_ns;     /* inside io_submit */
	uint64_t backlog_bytes; /* submitted, not completed, when it came */
	uint64_t backlog_ns;    /* age of the oldest incomplete message then */
};

struct pl_aio_tx_totals {
	uint64_t messages, bytes, requests;
	uint64_t completed_requests, failed_requests, short_requests, cancelled_requests;
	uint64_t failed_submits, partial_submits;
	/* zero-length requests sent; owed ones a following message made
	 * unnecessary */
	uint64_t zero_length_requests, zlps_not_needed;
	uint64_t max_submit_ns, max_backlog_bytes, max_backlog_ns;
	int last_error; /* negative errno of the last failed request, 0 if none */
};

void pl__aio_tx_config_default(struct pl_aio_tx_config *cfg);
int pl__aio_tx_open(struct pl_aio_tx **out, const struct pl_aio_tx_config *cfg);
/* The eventfd to watch for EPOLLIN; then call pl__aio_tx_reap. */
int pl__aio_tx_eventfd(const struct pl_aio_tx *tx);
/* Start sending on ep_fd (after ENABLE). packet_size as the endpoint says. */
void pl__aio_tx_attach(struct pl_aio_tx *tx, int ep_fd, unsigned packet_size);
/* Stop: cancel what is in flight and collect it (after DISABLE, before the
 * fd is closed). Returns how many requests were still in flight. */
unsigned pl__aio_tx_detach(struct pl_aio_tx *tx);
/* Bytes that can be submitted now without passing the budget. */
size_t pl__aio_tx_room(const struct pl_aio_tx *tx);
uint64_t pl__aio_tx_inflight_bytes(const struct pl_aio_tx *tx);
/* Submit one message given as up to PL_AIO_TX_MAX_IOV pieces (typically the
 * header, the payload where the producer left it, and the padding): the
 * requests are cut from the pieces with pwritev, so the payload is never
 * copied in user space. 0; -EAGAIN when it does not fit the budget now (an
 * idle sender always takes one message, however large); -ENOTCONN when not
 * attached; -EMSGSIZE past max_message_bytes; another -errno when io_submit
 * failed (logged). frame_id: the frame's id when the message is a FRAME
 * (its loss is then told through pl__aio_tx_take_lost), else NULL. diag may
 * be NULL. */
#define PL_AIO_TX_MAX_IOV 4
int pl__aio_tx_send(struct pl_aio_tx *tx, const struct iovec *iov, int iovcnt,
		    const uint64_t *frame_id, struct pl_aio_send_diag *diag);
/* The frames sent that did not reach the host whole (a request of theirs
 * cancelled, failed or short: a re-arm, a cable pull) since the last call:
 * their ids in *frame_ids, valid until the next send or reap. */
size_t pl__aio_tx_take_lost(struct pl_aio_tx *tx, const uint64_t **frame_ids);
/* Collect completions, then send an owed zero-length request if what is in
 * flight fell to its lead (link_aio_tx.c). Returns the number of requests
 * completed or -errno. */
int pl__aio_tx_reap(struct pl_aio_tx *tx);
void pl__aio_tx_get_totals(const struct pl_aio_tx *tx, struct pl_aio_tx_totals *out);
void pl__aio_tx_close(struct pl_aio_tx *tx);

#endif
