/* A device for host tests over TCP: listens on 127.0.0.1 as perflinkd
 * --link-tcp does, speaks the wire itself (HELLO on connection, PONGs to
 * the host's PINGs stamped with a device clock that runs offset_ns ahead of
 * the host's) and hands every other message from the host to the test.
 * Real sockets and the real wire code; only the device is played. */
#ifndef PL_TEST_FAKE_DEVICE_H
#define PL_TEST_FAKE_DEVICE_H

#include "clock.h"
#include "wire.h"

#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct fake_device;

/* A message from the host other than PING. */
typedef void (*fake_message_fn)(struct fake_device *d, const struct pl_wire_header *h,
				const uint8_t *payload);

struct fake_device {
	int fd;
	struct pl_wire_stream in;
	uint64_t seq;
	int64_t offset_ns; /* device clock = host clock + offset_ns */
	fake_message_fn on_message;
	void *ctx;
	/* for the test's on_message to count in */
	uint64_t pongs, replies, bad_replies;
	bool closed;
};

static inline uint64_t fake_now(const struct fake_device *d)
{
	return pl__mono_ns() + (uint64_t)d->offset_ns;
}

static inline int fake_write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One message, padded to 64 bytes as on the TCP link. 0 or -1. */
static inline int fake_send(struct fake_device *d, uint8_t type, uint64_t frame_id,
			    const void *payload, uint32_t len, uint64_t send_time)
{
	struct pl_wire_header h = {
		.type = type, .payload_len = len, .sequence = d->seq++,
		.send_time_ns = send_time, .frame_id = frame_id,
	};
	size_t total = pl__wire_message_size(len, 64);
	uint8_t *buf = calloc(1, total);
	int r;

	if (!buf)
		return -1;
	pl__wire_encode_header(buf, &h, payload);
	if (len)
		memcpy(buf + PL_WIRE_HEADER_SIZE, payload, len);
	r = fake_write_all(d->fd, buf, total);
	free(buf);
	return r;
}

/* Read and answer what the host sends for up to timeout_ms. */
static inline void fake_pump(struct fake_device *d, int timeout_ms)
{
	struct pollfd p = { .fd = d->fd, .events = POLLIN };
	static uint8_t buf[1 << 20];
	struct pl_wire_header h;
	const uint8_t *payload;
	size_t off;
	ssize_t n;

	if (d->closed || poll(&p, 1, timeout_ms) <= 0)
		return;
	n = read(d->fd, buf, sizeof(buf));
	if (n <= 0) {
		d->closed = true;
		return;
	}
	for (off = 0; off < (size_t)n;) {
		off += pl__wire_stream_feed(&d->in, buf + off, (size_t)n - off);
		while (pl__wire_stream_next(&d->in, &h, &payload) == 1) {
			if (h.type == PL_MSG_PING) {
				uint64_t now = fake_now(d);
				uint64_t times[2] = { htole64(h.send_time_ns), htole64(now) };

				if (fake_send(d, PL_MSG_PONG, 0, times, sizeof(times), now) == 0)
					d->pongs++;
			} else if (d->on_message) {
				d->on_message(d, &h, payload);
			}
		}
	}
}

/* A listening socket on 127.0.0.1:*port (0: any free port, written back),
 * or -1. */
static inline int fake_listen(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_port = htons((uint16_t)*port);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 4) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* The host's connection within timeout_ms, or -1. */
static inline int fake_accept(int lfd, int timeout_ms)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };

	if (poll(&p, 1, timeout_ms) <= 0)
		return -1;
	return accept(lfd, NULL, NULL);
}

/* Take over an accepted connection and say HELLO. 0 or -1. */
static inline int fake_start(struct fake_device *d, int fd, int64_t offset_ns,
			     fake_message_fn on_message, void *ctx)
{
	static const char hello[] = "{\"program\":\"fake_device\",\"version\":\"0\"}";

	memset(d, 0, sizeof(*d));
	d->fd = fd;
	d->offset_ns = offset_ns;
	d->on_message = on_message;
	d->ctx = ctx;
	if (pl__wire_stream_init(&d->in, 64, 1u << 20) < 0)
		return -1;
	return fake_send(d, PL_MSG_HELLO, 0, hello, sizeof(hello) - 1, fake_now(d));
}

static inline void fake_end(struct fake_device *d)
{
	close(d->fd);
	pl__wire_stream_free(&d->in);
}

#endif
