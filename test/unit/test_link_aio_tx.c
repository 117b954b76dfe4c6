/* The link's AIO sender (daemon/link/link_aio_tx.c) against a pipe: real
 * io_submit, real completions on the eventfd. A pipe takes each request in
 * submission order inside io_submit, so what comes out of it shows how the
 * sender cut the message into requests and whether a byte was lost.
 *
 * Where native AIO is not there (qemu-user answers io_setup with ENOSYS;
 * a kernel without CONFIG_AIO does the same) the test reports a skip: it
 * never passes without having sent anything. The FunctionFS side is the vm
 * suite's. */
#include "link_aio_tx.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define PIPE_BYTES (1u << 20)

static uint8_t pattern_at(size_t i)
{
	return (uint8_t)(i * 131u + (i >> 9));
}

/* Read exactly len bytes from the pipe and compare with the pattern from
 * start; 1 when they match. */
static int drain_and_check(int fd, size_t start, size_t len)
{
	static uint8_t buf[64 * 1024];
	size_t got = 0;
	int same = 1;

	while (got < len) {
		size_t want = len - got < sizeof(buf) ? len - got : sizeof(buf);
		ssize_t n = read(fd, buf, want);
		size_t i;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		for (i = 0; i < (size_t)n; i++)
			same &= buf[i] == pattern_at(start + got + i);
		got += (size_t)n;
	}
	return same;
}

/* Nothing more in the pipe (the zero-length requests add no bytes). */
static int pipe_empty(int fd)
{
	uint8_t b;
	ssize_t n = read(fd, &b, 1);

	return n < 0 && errno == EAGAIN;
}

static int all_completed(struct pl_aio_tx *tx)
{
	struct pl_aio_tx_totals t;

	pl__aio_tx_get_totals(tx, &t);
	return pl__aio_tx_inflight_bytes(tx) == 0 &&
	       t.completed_requests + t.failed_requests + t.short_requests == t.requests;
}

/* Reap until every request submitted so far, zero-length ones included
 * (a reap can submit the owed one), has completed. */
static int wait_reaped(struct pl_aio_tx *tx)
{
	struct pollfd p = { .fd = pl__aio_tx_eventfd(tx), .events = POLLIN };
	int tries;

	for (tries = 0; tries < 50 && !all_completed(tx); tries++) {
		if (poll(&p, 1, 100) < 0 && errno != EINTR)
			return -errno;
		if (pl__aio_tx_reap(tx) < 0)
			return -EIO;
	}
	return all_completed(tx) ? 0 : -ETIMEDOUT;
}

/* Frames whose requests fail are told lost, once each, by id; a frame that
 * arrived and a message that is no frame are not. The pipe's reader is
 * closed, so every write request fails with EPIPE (as a cancelled or
 * disabled endpoint fails them on USB). */
static void test_frames_lost(struct pl_aio_tx *tx, int p[2], uint8_t *msg)
{
	struct iovec iov = { .iov_base = msg, .iov_len = 20000 };
	uint64_t delivered = 7, lost_a = 0x0003000000000011ull, lost_b = 0x0003000000000012ull;
	const uint64_t *ids;
	size_t n;

	signal(SIGPIPE, SIG_IGN);
	pl__aio_tx_attach(tx, p[1], 0);
	TAP_OK(pl__aio_tx_send(tx, &iov, 1, &delivered, NULL) == 0 && wait_reaped(tx) == 0 &&
		       drain_and_check(p[0], 0, iov.iov_len),
	       "a frame that arrives whole");
	close(p[0]);
	TAP_OK(pl__aio_tx_send(tx, &iov, 1, &lost_a, NULL) == 0, "a frame into a broken pipe");
	TAP_OK(pl__aio_tx_send(tx, &iov, 1, NULL, NULL) == 0, "a message that is no frame");
	TAP_OK(pl__aio_tx_send(tx, &iov, 1, &lost_b, NULL) == 0, "and another frame");
	wait_reaped(tx);
	n = pl__aio_tx_take_lost(tx, &ids);
	TAP_EQ_U64(n, 2, "the two frames whose requests failed are told lost");
	TAP_OK(n == 2 && ids[0] == lost_a && ids[1] == lost_b, "by their ids, in order");
	TAP_EQ_U64(pl__aio_tx_take_lost(tx, &ids), 0, "and only once");
	pl__aio_tx_detach(tx);
}

int main(void)
{
	struct pl_aio_tx_config cfg;
	struct pl_aio_tx_totals tot;
	struct pl_aio_send_diag diag;
	struct pl_aio_tx *tx = NULL;
	struct iovec iov[3];
	uint8_t *msg;
	size_t len = 300 * 1024 + 100, big = 800 * 1024, next = 128 * 1024, small = 1024;
	uint64_t requests;
	int p[2], err;

	pl__aio_tx_config_default(&cfg);
	err = pl__aio_tx_open(&tx, &cfg);
	if (err == -ENOSYS) {
		printf("1..0 # SKIP native AIO is not available here (io_setup: ENOSYS, "
		       "as under qemu-user)\n");
		return 0;
	}
	TAP_OK(err == 0, "the sender opens (io_setup, eventfd): %d", err);
	if (err)
		return tap_done();

	msg = malloc(PIPE_BYTES);
	if (!msg || pipe2(p, O_CLOEXEC) < 0) {
		printf("Bail out! no memory or no pipe\n");
		return 1;
	}
	for (size_t i = 0; i < PIPE_BYTES; i++)
		msg[i] = pattern_at(i);
	/* one whole message must fit in the pipe: io_submit writes it inside */
	if (fcntl(p[0], F_SETPIPE_SZ, (int)PIPE_BYTES) < (int)PIPE_BYTES ||
	    fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) {
		printf("Bail out! cannot make a %u-byte pipe\n", PIPE_BYTES);
		return 1;
	}

	iov[0] = (struct iovec){ .iov_base = msg, .iov_len = 40 };
	TAP_OK(pl__aio_tx_send(tx, iov, 1, NULL, NULL) == -ENOTCONN, "nothing is sent before attach");
	pl__aio_tx_attach(tx, p[1], 512);

	/* Three pieces whose boundaries fall inside 8 KiB chunks. */
	iov[0] = (struct iovec){ .iov_base = msg, .iov_len = 40 };
	iov[1] = (struct iovec){ .iov_base = msg + 40, .iov_len = len - 40 - 1000 };
	iov[2] = (struct iovec){ .iov_base = msg + len - 1000, .iov_len = 1000 };
	err = pl__aio_tx_send(tx, iov, 3, NULL, &diag);
	TAP_OK(err == 0, "a %zu-byte message in three pieces is submitted: %d", len, err);
	TAP_EQ_U64(diag.requests, (len + 8191) / 8192, "one request per 8 KiB chunk, no ZLP "
						       "(not a multiple of 512)");
	TAP_EQ_U64(pl__aio_tx_inflight_bytes(tx), len, "it counts as in flight until reaped");
	TAP_OK(drain_and_check(p[0], 0, len) && pipe_empty(p[0]),
	       "the pipe holds exactly the message, in order");

	/* The budget: a second message that does not fit waits for the reap. */
	iov[0] = (struct iovec){ .iov_base = msg, .iov_len = big };
	TAP_OK(pl__aio_tx_send(tx, iov, 1, NULL, NULL) == -EAGAIN,
	       "a message past the budget is refused while one is in flight");
	TAP_OK(pipe_empty(p[0]), "and nothing of it was written");
	TAP_OK(wait_reaped(tx) == 0, "the completions arrive on the eventfd and are reaped");
	TAP_EQ_U64(pl__aio_tx_room(tx), cfg.budget_bytes, "the whole budget is free again");
	err = pl__aio_tx_send(tx, iov, 1, NULL, &diag);
	TAP_OK(err == 0, "then it is taken: %d", err);
	TAP_EQ_U64(diag.requests, big / 8192,
		   "a multiple of the packet size with more than a quarter of the budget in "
		   "flight: its zero-length request is owed, not sent");
	TAP_OK(drain_and_check(p[0], 0, big) && pipe_empty(p[0]), "all %zu bytes, in order", big);

	/* The next message follows before the owed ZLP is due: none is sent. */
	iov[0] = (struct iovec){ .iov_base = msg + big, .iov_len = next };
	err = pl__aio_tx_send(tx, iov, 1, NULL, &diag);
	TAP_OK(err == 0, "a message that follows while the first is in flight is taken: %d", err);
	TAP_EQ_U64(diag.requests, next / 8192, "it too ends on a packet with much in flight: "
					       "owed, not sent");
	TAP_OK(drain_and_check(p[0], big, next) && pipe_empty(p[0]),
	       "its bytes follow the first message's directly");
	pl__aio_tx_get_totals(tx, &tot);
	TAP_EQ_U64(tot.zlps_not_needed, 1, "the first message's ZLP was not needed");
	TAP_EQ_U64(tot.zero_length_requests, 0, "no zero-length request so far");
	requests = tot.requests;
	TAP_OK(wait_reaped(tx) == 0, "reaped, and the owed zero-length request with it");
	pl__aio_tx_get_totals(tx, &tot);
	TAP_EQ_U64(tot.zero_length_requests, 1,
		   "the reap that left little in flight sent the second message's ZLP");
	TAP_EQ_U64(tot.requests, requests + 1, "as one more request");
	TAP_OK(pipe_empty(p[0]), "which adds no byte");

	/* Sent with little in flight: the ZLP goes in the same io_submit. */
	iov[0] = (struct iovec){ .iov_base = msg, .iov_len = small };
	err = pl__aio_tx_send(tx, iov, 1, NULL, &diag);
	TAP_OK(err == 0, "a %zu-byte message to an idle sender: %d", small, err);
	TAP_EQ_U64(diag.requests, 2, "one request and its zero-length request at once");
	TAP_OK(drain_and_check(p[0], 0, small) && pipe_empty(p[0]), "its bytes, in order");
	TAP_OK(wait_reaped(tx) == 0, "reaped");
	pl__aio_tx_get_totals(tx, &tot);
	TAP_EQ_U64(tot.zero_length_requests, 2, "two zero-length requests in all");
	TAP_EQ_U64(tot.zlps_not_needed, 1, "the idle sender owed nothing when the small message came");

	iov[0] = (struct iovec){ .iov_base = msg, .iov_len = cfg.max_message_bytes + 1 };
	TAP_OK(pl__aio_tx_send(tx, iov, 1, NULL, NULL) == -EMSGSIZE, "past max_message_bytes: EMSGSIZE");
	iov[0].iov_len = 0;
	TAP_OK(pl__aio_tx_send(tx, iov, 1, NULL, NULL) == -EMSGSIZE, "an empty message: EMSGSIZE");

	pl__aio_tx_get_totals(tx, &tot);
	TAP_EQ_U64(tot.messages, 4, "four messages counted");
	TAP_EQ_U64(tot.bytes, len + big + next + small, "their bytes counted");
	TAP_EQ_U64(tot.completed_requests, tot.requests, "every request completed whole");
	TAP_EQ_U64(tot.failed_requests + tot.short_requests + tot.failed_submits, 0,
		   "no failed, short or unsubmitted request");

	TAP_EQ_U64(pl__aio_tx_detach(tx), 0, "detach finds nothing in flight");
	{
		const uint64_t *ids;

		TAP_EQ_U64(pl__aio_tx_take_lost(tx, &ids), 0, "every frame arrived: none lost");
	}
	test_frames_lost(tx, p, msg);
	pl__aio_tx_close(tx);
	close(p[1]);
	free(msg);
	return tap_done();
}
