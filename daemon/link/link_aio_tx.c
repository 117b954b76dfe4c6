/* See link_aio_tx.h. */
#include "link_aio_tx.h"
#include "clock.h"
#include "kernel_compat.h"
#include "log.h"
#include "probe.h"

#include <errno.h>
#include <libaio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One message in flight: the requests not yet completed and when it went.
 * (Its bytes are counted in inflight_bytes request by request.) */
struct inflight_msg {
	uint64_t submit_ns;
	unsigned pending;
	uint64_t frame_id; /* when it is a frame */
	bool frame;        /* a FRAME whose loss must be told (take_lost) */
	bool failed;       /* a request of it did not complete whole */
	struct inflight_msg *next; /* oldest first */
};

/* A request is cut from at most this many pieces: a chunk boundary can fall
 * inside every piece of the message, so a chunk spans at most all of them. */
#define REQ_IOV PL_AIO_TX_MAX_IOV

struct pl_aio_tx {
	struct pl_aio_tx_config cfg;
	struct iovec (*req_iov)[REQ_IOV]; /* per iocb, parallel to iocbs */
	io_context_t ctx;
	int efd;
	int ep_fd;
	unsigned nr_iocbs;
	struct iocb *iocbs;
	struct iocb **free_iocbs; /* stack */
	unsigned nr_free;
	struct iocb **batch;      /* scratch for one io_submit */
	struct io_event *events;  /* scratch for io_getevents */
	struct inflight_msg *msgs; /* pool, one per possible request */
	struct inflight_msg **free_msgs;
	unsigned nr_free_msgs;
	struct inflight_msg *oldest, *newest;
	uint64_t *lost_ids;       /* frames lost since the last take_lost */
	size_t nr_lost;
	uint64_t inflight_bytes;
	bool zlp_owed; /* the newest message ended on a packet boundary, and
			* neither a zero-length request nor a message followed */
	struct pl_aio_tx_totals totals;
	struct pl__ratelimit error_rl;
};

void pl__aio_tx_config_default(struct pl_aio_tx_config *cfg)
{
	cfg->chunk_bytes = 8192;
	cfg->budget_bytes = 1u << 20;
	cfg->max_message_bytes = 4u << 20;
	cfg->packet_size = 512;
}

int pl__aio_tx_open(struct pl_aio_tx **out, const struct pl_aio_tx_config *cfg)
{
	struct pl_aio_tx *tx;
	unsigned i;
	int err;

	if (cfg->chunk_bytes == 0 || cfg->budget_bytes == 0 || cfg->max_message_bytes == 0)
		return -EINVAL;
	tx = calloc(1, sizeof(*tx));
	if (!tx)
		return -ENOMEM;
	tx->cfg = *cfg;
	tx->efd = -1;
	tx->ep_fd = -1;
	tx->error_rl = (struct pl__ratelimit)PL_RATELIMIT_INIT(1000);
	/* Enough requests for a full budget plus one largest message (an idle
	 * sender takes a message past the budget), plus the end-of-message
	 * zero-length requests. */
	tx->nr_iocbs = (unsigned)((cfg->budget_bytes + cfg->max_message_bytes) / cfg->chunk_bytes) +
		       64;
	tx->iocbs = calloc(tx->nr_iocbs, sizeof(*tx->iocbs));
	tx->req_iov = calloc(tx->nr_iocbs, sizeof(*tx->req_iov));
	tx->free_iocbs = calloc(tx->nr_iocbs, sizeof(*tx->free_iocbs));
	tx->batch = calloc(tx->nr_iocbs, sizeof(*tx->batch));
	tx->events = calloc(tx->nr_iocbs, sizeof(*tx->events));
	tx->msgs = calloc(tx->nr_iocbs, sizeof(*tx->msgs));
	tx->free_msgs = calloc(tx->nr_iocbs, sizeof(*tx->free_msgs));
	/* one id a message: at most nr_iocbs messages are in flight */
	tx->lost_ids = calloc(tx->nr_iocbs, sizeof(*tx->lost_ids));
	if (!tx->iocbs || !tx->req_iov || !tx->free_iocbs || !tx->batch || !tx->events || !tx->msgs ||
	    !tx->free_msgs || !tx->lost_ids) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < tx->nr_iocbs; i++) {
		tx->free_iocbs[i] = &tx->iocbs[i];
		tx->free_msgs[i] = &tx->msgs[i];
	}
	tx->nr_free = tx->nr_free_msgs = tx->nr_iocbs;
	if ((tx->efd = pl__eventfd_create(0)) < 0) {
		err = tx->efd;
		goto fail;
	}
	/* libaio returns -errno */
	err = pl__probe_forced(PL_PROBE_FFS_AIO) ? -ENOSYS : io_setup((int)tx->nr_iocbs, &tx->ctx);
	if ((err = pl__aio_setup_result(err, "io_setup for the IN endpoint")) < 0)
		goto fail;
	*out = tx;
	return 0;
fail:
	pl__aio_tx_close(tx);
	return err;
}

int pl__aio_tx_eventfd(const struct pl_aio_tx *tx)
{
	return tx->efd;
}

void pl__aio_tx_attach(struct pl_aio_tx *tx, int ep_fd, unsigned packet_size)
{
	tx->ep_fd = ep_fd;
	tx->cfg.packet_size = packet_size;
	tx->zlp_owed = false;
}

/* The end of a message that fills its last packet. The host's transfer
 * ends at a short packet or when its buffer is full, so such a message needs
 * a zero-length request (ZLP) after it, or its last bytes wait in the host's
 * buffer for the next message. But the next message's bytes end that wait
 * just as well, and a ZLP costs a request here and a short transfer on the
 * host: with 384 KiB frames and 64 KiB host transfers, one host transfer in
 * seven, at maximum throughput when the next message is always close
 * behind. So while more than ZLP_LEAD is in flight the ZLP is owed, not
 * sent: pl__aio_tx_reap sends it once what is in flight falls to ZLP_LEAD
 * (still queued ahead of the host reaching the message's end), and a
 * message sent before then makes it unnecessary. A message sent when
 * little is in flight takes its ZLP in the same io_submit. */
static size_t zlp_lead(const struct pl_aio_tx *tx)
{
	return tx->cfg.budget_bytes / 4;
}

size_t pl__aio_tx_room(const struct pl_aio_tx *tx)
{
	return tx->inflight_bytes >= tx->cfg.budget_bytes
		       ? 0
		       : tx->cfg.budget_bytes - (size_t)tx->inflight_bytes;
}

uint64_t pl__aio_tx_inflight_bytes(const struct pl_aio_tx *tx)
{
	return tx->inflight_bytes;
}

static size_t iov_bytes(const struct iovec *iov, int n)
{
	size_t total = 0;

	while (n-- > 0)
		total += iov[n].iov_len;
	return total;
}

/* The budget counts bytes submitted and not yet completed, request by
 * request: a large message's first requests are done long before its last,
 * and counting it whole until then would keep up to a message's worth of
 * the budget idle (with 384 KiB frames and 1 MiB, two frames in flight
 * instead of two and a half). */
static void release_request(struct pl_aio_tx *tx, struct iocb *cb)
{
	struct inflight_msg *m = cb->data;

	cb->data = NULL; /* a free request has no message: detach relies on it */
	tx->free_iocbs[tx->nr_free++] = cb;
	if (!m || m->pending == 0)
		return;
	tx->inflight_bytes -= iov_bytes(cb->u.v.vec, (int)cb->u.v.nr);
	if (--m->pending > 0)
		return;
	if (m->frame && m->failed && tx->nr_lost < tx->nr_iocbs)
		tx->lost_ids[tx->nr_lost++] = m->frame_id;
	/* Whole message done. Messages complete in order on one endpoint, so
	 * this is normally the oldest; unlink wherever it is to be safe. */
	if (tx->oldest == m) {
		tx->oldest = m->next;
		if (!tx->oldest)
			tx->newest = NULL;
	} else {
		struct inflight_msg *p = tx->oldest;

		while (p && p->next != m)
			p = p->next;
		if (p) {
			p->next = m->next;
			if (tx->newest == m)
				tx->newest = p;
		}
	}
	tx->free_msgs[tx->nr_free_msgs++] = m;
}

/* m joins the messages in flight as the newest. */
static void append_inflight(struct pl_aio_tx *tx, struct inflight_msg *m)
{
	if (tx->newest)
		tx->newest->next = m;
	else
		tx->oldest = m;
	tx->newest = m;
}

/* Fill request cb's iovec with the next up to chunk bytes of the message,
 * advancing the cursor (piece index and offset in it). */
static size_t cut_request(struct iovec *out, int *nout, const struct iovec *iov, int iovcnt,
			  int *piece, size_t *off, size_t chunk)
{
	size_t taken = 0;

	*nout = 0;
	while (taken < chunk && *piece < iovcnt && *nout < REQ_IOV) {
		size_t left = iov[*piece].iov_len - *off;
		size_t n = left < chunk - taken ? left : chunk - taken;

		if (n > 0) {
			out[*nout].iov_base = (char *)iov[*piece].iov_base + *off;
			out[*nout].iov_len = n;
			(*nout)++;
			taken += n;
			*off += n;
		}
		if (*off == iov[*piece].iov_len) {
			(*piece)++;
			*off = 0;
		}
	}
	return taken;
}

int pl__aio_tx_send(struct pl_aio_tx *tx, const struct iovec *iov, int iovcnt,
		    const uint64_t *frame_id, struct pl_aio_send_diag *diag)
{
	const size_t chunk = tx->cfg.chunk_bytes;
	struct inflight_msg *m;
	uint64_t start, now;
	unsigned nreq, i;
	size_t len = 0, off = 0;
	int piece = 0, n;
	bool ends_packet, zlp;

	if (tx->ep_fd < 0)
		return -ENOTCONN;
	if (iovcnt < 1 || iovcnt > PL_AIO_TX_MAX_IOV)
		return -EINVAL;
	for (n = 0; n < iovcnt; n++)
		len += iov[n].iov_len;
	if (len == 0 || len > tx->cfg.max_message_bytes)
		return -EMSGSIZE;
	if (tx->inflight_bytes > 0 && len > pl__aio_tx_room(tx))
		return -EAGAIN;
	nreq = (unsigned)((len + chunk - 1) / chunk);
	/* see zlp_lead() */
	ends_packet = tx->cfg.packet_size && len % tx->cfg.packet_size == 0;
	zlp = ends_packet && tx->inflight_bytes + len <= zlp_lead(tx);
	if (nreq + zlp > tx->nr_free || tx->nr_free_msgs == 0)
		return -EAGAIN;

	now = pl__mono_ns();
	m = tx->free_msgs[--tx->nr_free_msgs];
	*m = (struct inflight_msg){ .submit_ns = now, .pending = nreq + zlp,
				    .frame_id = frame_id ? *frame_id : 0, .frame = frame_id != NULL };
	if (diag) {
		diag->bytes = len;
		diag->requests = nreq + zlp;
		diag->backlog_bytes = tx->inflight_bytes;
		diag->backlog_ns = tx->oldest ? now - tx->oldest->submit_ns : 0;
	}
	for (i = 0; i < nreq + zlp; i++) {
		struct iocb *cb = tx->free_iocbs[--tx->nr_free];
		struct iovec *riov = tx->req_iov[cb - tx->iocbs];
		int nriov = 0;

		if (i < nreq)
			cut_request(riov, &nriov, iov, iovcnt, &piece, &off, chunk);
		/* pwritev with no pieces is the zero-length request */
		io_prep_pwritev(cb, tx->ep_fd, riov, nriov, 0);
		io_set_eventfd(cb, tx->efd);
		cb->data = m;
		tx->batch[i] = cb;
	}
	append_inflight(tx, m);
	tx->inflight_bytes += len;

	start = pl__mono_ns();
	n = io_submit(tx->ctx, (long)(nreq + zlp), tx->batch);
	now = pl__mono_ns();
	if (n < (int)(nreq + zlp)) {
		int err = n < 0 ? n : -EIO;
		unsigned done = n < 0 ? 0 : (unsigned)n;

		/* What was not submitted is released at once; a partial
		 * message on the wire is skipped by the receiver, which
		 * resynchronises on the next header (docs/wire.md). The
		 * caller learns of the frame's loss from the error, so the
		 * requests that did go do not tell it again. */
		m->frame = false;
		for (i = done; i < nreq + zlp; i++)
			release_request(tx, tx->batch[i]);
		if (done) {
			tx->totals.partial_submits++;
			tx->zlp_owed = false; /* bytes followed the last message */
		}
		tx->totals.failed_submits++;
		pl__log_warnc(err, "link: io_submit of %u requests (%zu bytes) submitted %u",
			      nreq + zlp, len, done);
		return err;
	}
	tx->totals.messages++;
	tx->totals.bytes += len;
	tx->totals.requests += nreq + zlp;
	tx->totals.zero_length_requests += zlp;
	if (tx->zlp_owed)
		tx->totals.zlps_not_needed++;
	tx->zlp_owed = ends_packet && !zlp;
	if (now - start > tx->totals.max_submit_ns)
		tx->totals.max_submit_ns = now - start;
	if (diag) {
		diag->submit_ns = now - start;
		if (diag->backlog_bytes > tx->totals.max_backlog_bytes)
			tx->totals.max_backlog_bytes = diag->backlog_bytes;
		if (diag->backlog_ns > tx->totals.max_backlog_ns)
			tx->totals.max_backlog_ns = diag->backlog_ns;
	}
	return 0;
}

static int collect(struct pl_aio_tx *tx, long min_nr, struct timespec *timeout)
{
	int total = 0;

	for (;;) {
		int n = io_getevents(tx->ctx, min_nr, (long)tx->nr_iocbs, tx->events, timeout);
		int i;

		if (n == -EINTR)
			continue;
		if (n < 0)
			return n;
		for (i = 0; i < n; i++) {
			struct iocb *cb = tx->events[i].obj;
			struct inflight_msg *m = cb->data;
			long res = (long)tx->events[i].res;

			/* a frame with any request short, failed or cancelled
			 * did not reach the host whole */
			if (m && (size_t)res != iov_bytes(cb->u.v.vec, cb->u.v.nr))
				m->failed = true;
			if (res == -ESHUTDOWN || res == -ECANCELED || res == -ECONNRESET) {
				/* the endpoint went away under it: a disconnect,
				 * counted by the link, not a failed write */
				tx->totals.cancelled_requests++;
			} else if (res < 0) {
				tx->totals.failed_requests++;
				tx->totals.last_error = (int)res;
				pl__log_warnx_limited(&tx->error_rl, "link: a write request failed: %s",
						      strerror((int)-res));
			} else if ((size_t)res != iov_bytes(cb->u.v.vec, cb->u.v.nr)) {
				tx->totals.short_requests++;
			} else {
				tx->totals.completed_requests++;
			}
			release_request(tx, cb);
		}
		total += n;
		if (n < (int)tx->nr_iocbs || min_nr > 0)
			return total;
	}
}

/* The owed zero-length request, as a message of its own (zlp_lead()). */
static void send_owed_zlp(struct pl_aio_tx *tx)
{
	struct inflight_msg *m;
	struct iocb *cb;
	int n;

	if (tx->nr_free == 0 || tx->nr_free_msgs == 0)
		return; /* cannot happen below the lead; owed until the next reap */
	tx->zlp_owed = false;
	m = tx->free_msgs[--tx->nr_free_msgs];
	*m = (struct inflight_msg){ .submit_ns = pl__mono_ns(), .pending = 1 };
	cb = tx->free_iocbs[--tx->nr_free];
	io_prep_pwritev(cb, tx->ep_fd, tx->req_iov[cb - tx->iocbs], 0, 0);
	io_set_eventfd(cb, tx->efd);
	cb->data = m;
	append_inflight(tx, m);
	n = io_submit(tx->ctx, 1, &cb);
	if (n != 1) {
		release_request(tx, cb);
		tx->totals.failed_submits++;
		pl__log_warnc(n < 0 ? n : -EIO, "link: io_submit of a zero-length request");
		return;
	}
	tx->totals.requests++;
	tx->totals.zero_length_requests++;
}

int pl__aio_tx_reap(struct pl_aio_tx *tx)
{
	struct timespec zero = { 0, 0 };
	uint64_t count;
	int n;

	/* The eventfd only says "something completed"; the events are the
	 * truth, so its counter is just drained. */
	if (read(tx->efd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		return -errno;
	n = collect(tx, 0, &zero);
	if (n >= 0 && tx->zlp_owed && tx->ep_fd >= 0 && tx->inflight_bytes <= zlp_lead(tx))
		send_owed_zlp(tx);
	return n;
}

unsigned pl__aio_tx_detach(struct pl_aio_tx *tx)
{
	unsigned outstanding = tx->nr_iocbs - tx->nr_free;
	unsigned i;

	if (outstanding) {
		struct io_event ev;
		struct timespec wait = { 0, 200 * 1000 * 1000 };

		/* Cancel what is queued; -EINPROGRESS means the request is
		 * being cancelled and still has to be collected (adbd does
		 * the same). The endpoint going away completes the rest. */
		for (i = 0; i < tx->nr_iocbs; i++) {
			if (tx->iocbs[i].data)
				io_cancel(tx->ctx, &tx->iocbs[i], &ev);
		}
		while (tx->nr_free < tx->nr_iocbs) {
			if (collect(tx, 1, &wait) <= 0)
				break;
		}
		if (tx->nr_free < tx->nr_iocbs) {
			pl__log_warnx("link: %u write requests did not complete after cancel",
				      tx->nr_iocbs - tx->nr_free);
			/* their frames are lost all the same: told now, and
			 * not again if the requests complete after all */
			for (struct inflight_msg *m = tx->oldest; m; m = m->next) {
				if (m->frame && tx->nr_lost < tx->nr_iocbs)
					tx->lost_ids[tx->nr_lost++] = m->frame_id;
				m->frame = false;
			}
		}
	}
	tx->ep_fd = -1;
	tx->zlp_owed = false;
	return outstanding;
}

size_t pl__aio_tx_take_lost(struct pl_aio_tx *tx, const uint64_t **frame_ids)
{
	size_t n = tx->nr_lost;

	*frame_ids = tx->lost_ids;
	tx->nr_lost = 0;
	return n;
}

void pl__aio_tx_get_totals(const struct pl_aio_tx *tx, struct pl_aio_tx_totals *out)
{
	*out = tx->totals;
}

void pl__aio_tx_close(struct pl_aio_tx *tx)
{
	if (!tx)
		return;
	if (tx->ep_fd >= 0)
		pl__aio_tx_detach(tx);
	if (tx->ctx)
		io_destroy(tx->ctx);
	if (tx->efd >= 0)
		close(tx->efd);
	free(tx->iocbs);
	free(tx->req_iov);
	free(tx->free_iocbs);
	free(tx->batch);
	free(tx->events);
	free(tx->msgs);
	free(tx->free_msgs);
	free(tx->lost_ids);
	free(tx);
}
