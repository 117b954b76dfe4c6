/* The "bare AIO stream" of the link benchmark: the same gadget and the same
 * AIO sender as the link, but no messages, no headers, no replies, no held
 * frames: requests of --chunk bytes kept in flight up to --budget, as fast
 * as the host takes them, for --mib MiB. The link's own maximum throughput
 * is compared with this in the same boot (perflink-bench link).
 *
 *   bare_aio_writer [--chunk 8192] [--budget-kib 1024] [--mib 256] [--hash 1]
 *                   [--msg-chunks 16] [--zlp 1] [--offset 0] [--header 1]
 *                   [--out-reads 8]
 *
 * --hash 1 computes the XXH3-64 of every byte before it is submitted, as the
 * link must for its wire checksum, with the build the link would choose
 * (common/wire/payload_hash.c; PERFLINK_HASH_IMPL names one): under emulation the rig's "cable" is
 * the same two CPUs, so that cost shows in the throughput, and this run
 * separates it from the link's framing and scheduling. --msg-chunks sets how
 * many requests go in one io_submit (48: a 393,216-byte frame) and --zlp 1
 * ends each with a zero-length request when the link would (link_aio_tx.c:
 * not while the next message follows close behind): both tell which
 * of the link's structural choices costs throughput. --offset N sends from N
 * bytes past a page boundary (48: where a frame's payload sits relative to
 * the 8 KiB requests when it follows the wire header). --header 1 sends each
 * message as the link's three pieces, a 48-byte header, the payload and
 * zeros up to the packet size, so the first and last request of a message
 * are written from two buffers. --out-reads N keeps N reads of 16 KiB
 * queued on the OUT endpoint, as many as the link keeps at most for the
 * host's messages (it sizes them by the message, link_aio_rx.h).
 * Host side: perflink-host --drain. */
#include "clock.h"
#include "event_loop.h"
#include "gadget_configfs.h"
#include "link_aio_rx.h"
#include "link_aio_tx.h"
#include "link_ffs.h"
#include "log.h"
#include "payload_hash.h"
#include "stat_cpu.h"
#include "wire.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

struct bare {
	struct pl_aio_tx *tx;
	uint8_t *buf;
	size_t chunk, total, sent, msg_chunks, offset;
	bool up, hash, packet_for_zlp, header;
	struct pl_aio_rx *rx; /* --out-reads */
	uint64_t hashes; /* kept, so the work cannot be optimised away */
	uint64_t t0;
	struct pl_stat_cpu t0_system; /* the machine's CPU at t0 */
	unsigned packet;
};

static void fill(struct bare *b)
{
	while (b->up && b->sent < b->total) {
		static uint8_t header[PL_WIRE_HEADER_SIZE], zeros[4096];
		size_t payload = b->chunk * b->msg_chunks, pad = 0;
		struct iovec iov[3];
		int n = 0;

		if (b->header) {
			pad = b->packet ? (b->packet - (sizeof(header) + payload) % b->packet) % b->packet
					: 0;
			iov[n++] = (struct iovec){ header, sizeof(header) };
		}
		iov[n++] = (struct iovec){ b->buf + b->offset, payload };
		if (pad)
			iov[n++] = (struct iovec){ zeros, pad };
		if (b->hash && pl__aio_tx_room(b->tx) >= payload)
			b->hashes += pl__payload_hash(b->buf + b->offset, payload);
		if (pl__aio_tx_send(b->tx, iov, n, NULL, NULL) < 0)
			return;
		b->sent += payload;
	}
}

static void on_enable(void *ctx, int ep_in, int ep_out, unsigned packet)
{
	struct bare *b = ctx;

	b->packet = packet;
	if (b->rx && pl__aio_rx_attach(b->rx, ep_out, packet) < 0)
		pl__fatalx("cannot queue the OUT reads");
	pl__aio_tx_attach(b->tx, ep_in, b->packet_for_zlp ? packet : 0);
	b->up = true;
	b->t0 = pl__mono_ns();
	pl__stat_cpu_now(&b->t0_system);
	fill(b);
}

static void on_disable(void *ctx, const char *why)
{
	struct bare *b = ctx;

	(void)why;
	b->up = false;
	pl__aio_tx_detach(b->tx);
	if (b->rx)
		pl__aio_rx_detach(b->rx);
}

static void on_ep0(void *ctx, int fd, uint32_t ev)
{
	(void)fd;
	(void)ev;
	pl__ffs_handle_ep0(ctx);
}

static void on_rx_bytes(void *ctx, const uint8_t *data, size_t len)
{
	(void)ctx; /* the host sends nothing in these runs */
	(void)data;
	(void)len;
}

static void on_rx(void *ctx, int fd, uint32_t ev)
{
	(void)fd;
	(void)ev;
	pl__aio_rx_reap(((struct bare *)ctx)->rx);
}

static void on_tx(void *ctx, int fd, uint32_t ev)
{
	struct bare *b = ctx;

	(void)fd;
	(void)ev;
	pl__aio_tx_reap(b->tx);
	fill(b);
}

int main(int argc, char **argv)
{
	static const struct pl_ffs_events ev = { .enable = on_enable, .disable = on_disable };
	struct pl_gadget_config g;
	struct pl_aio_tx_config tc;
	struct pl_aio_tx_totals tt;
	struct pl_loop *loop;
	struct pl_ffs *ffs;
	struct bare b;
	long mib = 256, budget_kib = 1024;
	int i, out_reads = 0;

	memset(&b, 0, sizeof(b));
	b.chunk = 8192;
	b.msg_chunks = 16;
	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--chunk") == 0)
			b.chunk = (size_t)atol(argv[i + 1]);
		else if (strcmp(argv[i], "--mib") == 0)
			mib = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--budget-kib") == 0)
			budget_kib = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--hash") == 0)
			b.hash = atoi(argv[i + 1]) != 0;
		else if (strcmp(argv[i], "--msg-chunks") == 0)
			b.msg_chunks = (size_t)atol(argv[i + 1]);
		else if (strcmp(argv[i], "--offset") == 0)
			b.offset = (size_t)atol(argv[i + 1]) % 4096;
		else if (strcmp(argv[i], "--zlp") == 0)
			b.packet_for_zlp = atoi(argv[i + 1]) != 0;
		else if (strcmp(argv[i], "--header") == 0)
			b.header = atoi(argv[i + 1]) != 0;
		else if (strcmp(argv[i], "--out-reads") == 0)
			out_reads = atoi(argv[i + 1]);
	}
	pl__log_init("bare_aio_writer", true, 0);
	if (b.hash)
		pl__payload_hash_choose();
	b.total = (size_t)mib << 20;
	/* one submit of 16 requests at a time: a "message" of 16 chunks with
	 * no header, padding or zero-length packet */
	if (b.msg_chunks < 1 || b.msg_chunks > 256)
		pl__fatalx("--msg-chunks takes 1 to 256");
	if (posix_memalign((void **)&b.buf, 4096, b.msg_chunks * b.chunk + 4096) == 0)
		memset(b.buf, 0, b.msg_chunks * b.chunk + 4096);
	else
		b.buf = NULL;
	pl__aio_tx_config_default(&tc);
	tc.chunk_bytes = b.chunk;
	tc.budget_bytes = (size_t)budget_kib << 10;
	tc.packet_size = 0;
	pl__gadget_config_default(&g);
	if (!b.buf || pl__aio_tx_open(&b.tx, &tc) < 0 || pl__loop_new(&loop) < 0 ||
	    pl__gadget_setup(&g) < 0 || pl__ffs_open(&ffs, g.mount_dir, &ev, &b) < 0)
		pl__fatalx("set-up failed");
	pl__loop_add_fd(loop, pl__ffs_ep0_fd(ffs), EPOLLIN, on_ep0, ffs, NULL);
	pl__loop_add_fd(loop, pl__aio_tx_eventfd(b.tx), EPOLLIN, on_tx, &b, NULL);
	/* the link's default read size (link.c) */
	if (out_reads > 0 && (pl__aio_rx_open(&b.rx, (unsigned)out_reads, 16384, on_rx_bytes, NULL, &b) < 0 ||
			      pl__loop_add_fd(loop, pl__aio_rx_eventfd(b.rx), EPOLLIN, on_rx, &b, NULL) < 0))
		pl__fatalx("cannot set up the OUT reads");
	if (pl__gadget_bind(&g, true) < 0)
		pl__fatalx("cannot bind the gadget");
	for (;;) {
		pl__aio_tx_get_totals(b.tx, &tt);
		if (b.sent >= b.total && tt.completed_requests + tt.failed_requests +
						 tt.cancelled_requests >= tt.requests)
			break;
		if (pl__loop_run_once(loop, 1000) < 0)
			break;
	}
	{
		double secs = (double)(pl__mono_ns() - b.t0) / 1e9;
		struct pl_stat_cpu end_system;

		struct pl_payload_hash_choice hash = { .name = "none" };

		pl__stat_cpu_now(&end_system);
		if (b.hash)
			pl__payload_hash_describe(&hash);
		printf("bare_aio chunk %zu msg_chunks %zu zlp %d bytes %zu seconds %.3f MB/s %.1f "
		       "failed %llu cpu_pct %.1f hash %d (%016llx) hash_impl %s system_busy_pct %.1f\n",
		       b.chunk, b.msg_chunks, b.packet_for_zlp, b.sent, secs,
		       (double)b.sent / 1e6 / secs,
		       (unsigned long long)tt.failed_requests,
		       100.0 * (double)pl__process_cpu_ns() / 1e9 / secs, b.hash,
		       (unsigned long long)b.hashes, hash.name,
		       pl__stat_cpu_busy_pct(&b.t0_system, &end_system));
	}
	pl__ffs_close(ffs);
	pl__loop_free(loop);
	pl__aio_tx_close(b.tx);
	pl__gadget_teardown(&g);
	free(b.buf);
	return 0;
}
