/* See link_tcp_drain.h. */
#include "link_tcp_drain.h"
#include "wire.h"

#include <errno.h>
#include <linux/sockios.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

void pl__tcp_ledger_reset(struct pl_tcp_ledger *l)
{
	l->next = l->count = 0;
	l->stream_bytes = 0;
}

void pl__tcp_ledger_sent(struct pl_tcp_ledger *l, size_t bytes, const uint64_t *frame_id)
{
	l->stream_bytes += bytes;
	if (!frame_id)
		return;
	l->frame[l->next] = (struct pl_tcp_ledger_frame){ l->stream_bytes, *frame_id };
	l->next = (l->next + 1) % PL_TCP_LEDGER_FRAMES;
	if (l->count < PL_TCP_LEDGER_FRAMES)
		l->count++;
}

size_t pl__tcp_ledger_between(const struct pl_tcp_ledger *l, uint64_t from, uint64_t to,
			      uint64_t *out)
{
	size_t n = 0;

	for (unsigned i = 0; i < l->count; i++) {
		const struct pl_tcp_ledger_frame *f =
			&l->frame[(l->next + PL_TCP_LEDGER_FRAMES - l->count + i) %
				  PL_TCP_LEDGER_FRAMES];

		if (f->end > from && f->end <= to)
			out[n++] = f->frame_id;
	}
	return n;
}

struct pl_tcp_drain {
	struct pl_loop *loop;
	pl__tcp_lost_cb lost;
	void *ctx;
	struct pl_link_conn *conn; /* NULL: nothing drains */
	uint32_t events;
	struct pl_loop_watch *watch, *timer;
	struct pl_tcp_ledger ledger;
	uint64_t kernel_end;
	uint64_t lost_ids[PL_TCP_LEDGER_FRAMES];
	/* what the host sends meanwhile, looked at only to count its REPLYs:
	 * a header being gathered, or the bytes of a message still to skip */
	uint32_t pad;
	uint8_t hdr[PL_WIRE_HEADER_SIZE];
	size_t hdr_got;
	uint64_t skip;
	uint64_t replies_discarded;
};

static void release(struct pl_tcp_drain *d)
{
	pl__loop_remove(d->watch);
	pl__loop_remove(d->timer);
	d->watch = d->timer = NULL;
	pl__conn_free(d->conn);
	d->conn = NULL;
}

/* The host did not take the rest in time: what its TCP has not
 * acknowledged is lost with the connection. (Under TLS the kernel counts
 * records, a little more than the bytes in them: a few more frames may be
 * counted lost than were, never fewer.) */
static void give_up(struct pl_tcp_drain *d)
{
	int outq = 0;
	size_t n;

	if (!d->conn)
		return;
	if (ioctl(d->conn->fd, SIOCOUTQ, &outq) < 0 || outq < 0)
		outq = 0;
	n = pl__tcp_ledger_between(&d->ledger,
				   (uint64_t)outq < d->kernel_end ? d->kernel_end - (uint64_t)outq : 0,
				   d->kernel_end, d->lost_ids);
	release(d);
	if (n && d->lost)
		d->lost(d->ctx, d->lost_ids, n);
}

/* Count the REPLYs among bytes read to be discarded: each is an answer that
 * will never reach its producer. Only headers are looked at (a body is
 * skipped by its length), so this costs nothing like the link's parser;
 * bytes that are no header are passed over to the next "PLNK". */
static void count_replies(struct pl_tcp_drain *d, const uint8_t *p, size_t n)
{
	while (n) {
		struct pl_wire_header h;
		const uint8_t *magic;
		size_t k;

		if (d->skip) {
			k = d->skip < n ? (size_t)d->skip : n;
			d->skip -= k;
			p += k;
			n -= k;
			continue;
		}
		k = sizeof(d->hdr) - d->hdr_got < n ? sizeof(d->hdr) - d->hdr_got : n;
		memcpy(d->hdr + d->hdr_got, p, k);
		d->hdr_got += k;
		p += k;
		n -= k;
		if (d->hdr_got < sizeof(d->hdr))
			return;
		if (pl__wire_decode_header(d->hdr, &h) == PL_WIRE_OK) {
			if (h.type == PL_MSG_REPLY)
				d->replies_discarded++;
			d->skip = pl__wire_message_size(h.payload_len, d->pad) - PL_WIRE_HEADER_SIZE;
			d->hdr_got = 0;
			continue;
		}
		/* the magic is "PLNK" in its little-endian bytes */
		magic = memchr(d->hdr + 1, 'P', sizeof(d->hdr) - 1);
		d->hdr_got = magic ? sizeof(d->hdr) - (size_t)(magic - d->hdr) : 0;
		if (magic)
			memmove(d->hdr, magic, d->hdr_got);
	}
}

static void on_input(void *ctx, int fd, uint32_t events)
{
	struct pl_tcp_drain *d = ctx;
	uint8_t sink[16384];

	(void)fd;
	(void)events;
	for (int i = 0; i < 8; i++) {
		ssize_t n = pl__conn_recv(d->conn, sink, sizeof(sink));

		if (n > 0) {
			count_replies(d, sink, (size_t)n);
			continue;
		}
		if (n == -EAGAIN) {
			/* TLS may want to write (it cannot: this side is shut) */
			uint32_t want = d->conn->wants & PL_CONN_WANT_WRITE ? EPOLLIN | EPOLLOUT
									     : EPOLLIN;

			if (want != d->events && pl__loop_mod_fd(d->watch, want) == 0)
				d->events = want;
			return;
		}
		/* the host closed (after reading to our end of stream: what it
		 * was sent, it has) or the connection failed */
		if (n == 0)
			release(d);
		else
			give_up(d);
		return;
	}
}

static void on_timeout(void *ctx, uint64_t expirations)
{
	(void)expirations;
	give_up(ctx);
}

int pl__tcp_drain_open(struct pl_tcp_drain **out, struct pl_loop *loop, pl__tcp_lost_cb lost,
		       void *ctx)
{
	struct pl_tcp_drain *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->loop = loop;
	d->lost = lost;
	d->ctx = ctx;
	d->conn = NULL;
	*out = d;
	return 0;
}

void pl__tcp_drain_start(struct pl_tcp_drain *d, struct pl_link_conn *conn,
			 const struct pl_tcp_ledger *ledger, uint64_t kernel_end, uint32_t pad,
			 uint64_t rest_of_message)
{
	give_up(d); /* one at a time: the one before ends now */
	d->conn = conn;
	d->events = EPOLLIN;
	d->ledger = *ledger;
	d->kernel_end = kernel_end;
	d->pad = pad;
	d->hdr_got = 0;
	d->skip = rest_of_message;
	pl__conn_shutdown(conn);
	if (pl__loop_add_fd(d->loop, conn->fd, EPOLLIN, on_input, d, &d->watch) < 0 ||
	    pl__loop_add_timer(d->loop, (uint64_t)PL_TCP_DRAIN_MS * 1000000u, 0, on_timeout, d,
			       &d->timer) < 0)
		give_up(d);
}

uint64_t pl__tcp_drain_replies_discarded(const struct pl_tcp_drain *d)
{
	return d->replies_discarded;
}

void pl__tcp_drain_close(struct pl_tcp_drain *d)
{
	if (!d)
		return;
	release(d);
	free(d);
}
