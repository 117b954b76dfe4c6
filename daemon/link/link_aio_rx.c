/* See link_aio_rx.h. */
#include "link_aio_rx.h"
#include "kernel_compat.h"
#include "log.h"
#include "probe.h"

#include <errno.h>
#include <libaio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pl_aio_rx {
	io_context_t ctx;
	int efd, ep_fd;
	unsigned depth;
	size_t read_bytes;     /* the largest read; each has a buffer this big */
	unsigned packet;       /* of the endpoint attached */
	size_t planned;        /* bytes this attach's queued reads ask for */
	unsigned gen;          /* attaches so far: a read of an earlier one is stale */
	bool failing;          /* a read failed: the endpoint is going away */
	uint8_t *bufs;
	struct iocb *iocbs;
	bool *queued;
	size_t *asked;         /* each queued read's length */
	unsigned *read_gen;    /* the attach each queued read belongs to */
	struct io_event *events;
	pl__aio_rx_cb cb;
	pl__aio_rx_want_cb want;
	void *cb_ctx;
	struct pl_aio_rx_totals totals;
	struct pl__ratelimit error_rl;
};

int pl__aio_rx_open(struct pl_aio_rx **out, unsigned depth, size_t read_bytes,
		    pl__aio_rx_cb cb, pl__aio_rx_want_cb want, void *ctx)
{
	struct pl_aio_rx *rx;
	int err;

	if (depth == 0 || read_bytes == 0)
		return -EINVAL;
	rx = calloc(1, sizeof(*rx));
	if (!rx)
		return -ENOMEM;
	rx->efd = rx->ep_fd = -1;
	rx->depth = depth;
	rx->read_bytes = read_bytes;
	rx->cb = cb;
	rx->want = want;
	rx->cb_ctx = ctx;
	rx->error_rl = (struct pl__ratelimit)PL_RATELIMIT_INIT(1000);
	rx->bufs = malloc((size_t)depth * read_bytes);
	rx->iocbs = calloc(depth, sizeof(*rx->iocbs));
	rx->queued = calloc(depth, sizeof(*rx->queued));
	rx->asked = calloc(depth, sizeof(*rx->asked));
	rx->read_gen = calloc(depth, sizeof(*rx->read_gen));
	rx->events = calloc(depth, sizeof(*rx->events));
	if (!rx->bufs || !rx->iocbs || !rx->queued || !rx->asked || !rx->read_gen ||
	    !rx->events) {
		err = -ENOMEM;
		goto fail;
	}
	if ((rx->efd = pl__eventfd_create(0)) < 0) {
		err = rx->efd;
		goto fail;
	}
	err = pl__probe_forced(PL_PROBE_FFS_AIO) ? -ENOSYS : io_setup((int)depth, &rx->ctx);
	if ((err = pl__aio_setup_result(err, "io_setup for OUT reads")) < 0)
		goto fail;
	*out = rx;
	return 0;
fail:
	pl__aio_rx_close(rx);
	return err;
}

int pl__aio_rx_eventfd(const struct pl_aio_rx *rx)
{
	return rx->efd;
}

static int queue_read(struct pl_aio_rx *rx, unsigned i, size_t len)
{
	struct iocb *cb = &rx->iocbs[i];
	struct iocb *one[1] = { cb };
	int n;

	io_prep_pread(cb, rx->ep_fd, rx->bufs + (size_t)i * rx->read_bytes, len, 0);
	io_set_eventfd(cb, rx->efd);
	cb->data = (void *)(uintptr_t)i;
	n = io_submit(rx->ctx, 1, one);
	if (n != 1)
		return n < 0 ? n : -EIO;
	rx->queued[i] = true;
	rx->asked[i] = len;
	rx->read_gen[i] = rx->gen;
	rx->planned += len;
	return 0;
}

static int free_slot(const struct pl_aio_rx *rx)
{
	for (unsigned i = 0; i < rx->depth; i++)
		if (!rx->queued[i])
			return (int)i;
	return -1;
}

/* Queue what the next bytes need (link_aio_rx.h): 0 or -errno. The queued
 * reads cover the bytes to come, in order, from where the stream is now:
 * first, up to the end of the message begun, reads of up to read_bytes
 * (never past its end); then, in every slot left, reads of one packet,
 * which complete with each packet whatever message it starts. */
static int top_up(struct pl_aio_rx *rx)
{
	size_t want;
	int i, err = 0;

	if (rx->ep_fd < 0 || rx->failing)
		return 0;
	if (!rx->want) {
		while (err == 0 && (i = free_slot(rx)) >= 0)
			err = queue_read(rx, (unsigned)i, rx->read_bytes);
		return err;
	}
	want = rx->want(rx->cb_ctx);
	while (err == 0 && rx->planned < want && (i = free_slot(rx)) >= 0) {
		size_t len = want - rx->planned; /* a whole number of packets: padded */

		err = queue_read(rx, (unsigned)i, len < rx->read_bytes ? len : rx->read_bytes);
	}
	while (err == 0 && (i = free_slot(rx)) >= 0)
		err = queue_read(rx, (unsigned)i, rx->packet);
	return err;
}

int pl__aio_rx_attach(struct pl_aio_rx *rx, int ep_fd, unsigned packet_size)
{
	int err;

	if (packet_size == 0 || packet_size > rx->read_bytes)
		return -EINVAL;
	rx->ep_fd = ep_fd;
	rx->packet = packet_size;
	/* reads a detach could not collect belong to the endpoint before:
	 * when they come back they are let go, not counted or delivered */
	rx->gen++;
	rx->planned = 0;
	rx->failing = false;
	if ((err = top_up(rx)) < 0)
		pl__log_warnc(err, "link: queueing OUT reads");
	return err;
}

static int collect(struct pl_aio_rx *rx, long min_nr, struct timespec *timeout, bool requeue)
{
	int n, i;

	do
		n = io_getevents(rx->ctx, min_nr, (long)rx->depth, rx->events, timeout);
	while (n == -EINTR);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		unsigned idx = (unsigned)(uintptr_t)rx->events[i].data;
		long res = (long)rx->events[i].res;

		if (idx >= rx->depth || !rx->queued[idx])
			continue;
		rx->queued[idx] = false;
		if (rx->read_gen[idx] != rx->gen)
			continue; /* stale: see pl__aio_rx_attach */
		rx->planned -= rx->asked[idx];
		if (res == 0) {
			rx->totals.zero_length_reads++;
		} else if (res > 0) {
			rx->totals.reads++;
			rx->totals.bytes += (uint64_t)res;
			rx->cb(rx->cb_ctx, rx->bufs + (size_t)idx * rx->read_bytes, (size_t)res);
		} else if (res == -EPIPE) {
			rx->totals.requeued_after_epipe++;
		} else if (res == -ESHUTDOWN || res == -ECANCELED || res == -ECONNRESET) {
			/* the endpoint was disabled or the read cancelled: the
			 * normal end of a connection, not a failure; nothing
			 * more is queued until the next attach */
			rx->failing = true;
		} else if (res < 0) {
			rx->totals.failed_reads++;
			rx->totals.last_error = (int)res;
			pl__log_warnx_limited(&rx->error_rl, "link: an OUT read failed: %s",
					      strerror((int)-res));
			/* a failing endpoint is going away: do not spin on it */
			rx->failing = true;
		}
	}
	if (requeue && top_up(rx) < 0)
		pl__log_warnx_limited(&rx->error_rl, "link: cannot queue OUT reads");
	return n;
}

int pl__aio_rx_reap(struct pl_aio_rx *rx)
{
	struct timespec zero = { 0, 0 };
	uint64_t count;

	if (read(rx->efd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		return -errno;
	return collect(rx, 0, &zero, true);
}

void pl__aio_rx_detach(struct pl_aio_rx *rx)
{
	struct timespec wait = { 0, 200 * 1000 * 1000 };
	struct io_event ev;
	unsigned i, left = 0;

	for (i = 0; i < rx->depth; i++) {
		if (rx->queued[i]) {
			io_cancel(rx->ctx, &rx->iocbs[i], &ev);
			left++;
		}
	}
	rx->ep_fd = -1;
	while (left > 0) {
		int n = collect(rx, 1, &wait, false);

		if (n <= 0)
			break;
		left = 0;
		for (i = 0; i < rx->depth; i++)
			left += rx->queued[i];
	}
}

void pl__aio_rx_get_totals(const struct pl_aio_rx *rx, struct pl_aio_rx_totals *out)
{
	*out = rx->totals;
}

void pl__aio_rx_close(struct pl_aio_rx *rx)
{
	if (!rx)
		return;
	if (rx->ep_fd >= 0)
		pl__aio_rx_detach(rx);
	if (rx->ctx)
		io_destroy(rx->ctx);
	if (rx->efd >= 0)
		close(rx->efd);
	free(rx->bufs);
	free(rx->iocbs);
	free(rx->queued);
	free(rx->asked);
	free(rx->read_gen);
	free(rx->events);
	free(rx);
}
