/* See link_conn.h: the connection as a bare socket. */
#include "link_conn.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static int plain_handshake(struct pl_link_conn *c, char *why, size_t why_len)
{
	(void)c;
	(void)why;
	(void)why_len;
	return 1;
}

static ssize_t plain_recv(struct pl_link_conn *c, void *buf, size_t len)
{
	ssize_t n;

	do
		n = recv(c->fd, buf, len, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n >= 0)
		return n;
	if (errno == EAGAIN || errno == EWOULDBLOCK) {
		c->wants = PL_CONN_WANT_READ;
		return -EAGAIN;
	}
	return -errno;
}

static ssize_t plain_sendv(struct pl_link_conn *c, const struct iovec *iov, int iovcnt)
{
	struct msghdr mh = { .msg_iov = (struct iovec *)(uintptr_t)iov,
			     .msg_iovlen = (size_t)iovcnt };
	ssize_t n;

	do
		n = sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		return n;
	if (n == 0 || errno == EAGAIN || errno == EWOULDBLOCK) {
		c->wants = PL_CONN_WANT_WRITE;
		return -EAGAIN;
	}
	return -errno;
}

static bool plain_pending(const struct pl_link_conn *c)
{
	(void)c;
	return false; /* the kernel holds it all, where poll sees it */
}

static void plain_shutdown(struct pl_link_conn *c)
{
	shutdown(c->fd, SHUT_WR);
}

static void plain_free(struct pl_link_conn *c)
{
	close(c->fd);
	free(c);
}

static const struct pl_link_conn_ops plain_ops = {
	.name = "tcp",
	.handshake = plain_handshake,
	.recv = plain_recv,
	.sendv = plain_sendv,
	.pending = plain_pending,
	.shutdown = plain_shutdown,
	.free = plain_free,
};

struct pl_link_conn *pl__conn_plain(int fd)
{
	struct pl_link_conn *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		return NULL;
	}
	c->ops = &plain_ops;
	c->fd = fd;
	return c;
}
