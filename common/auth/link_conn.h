/* One TCP connection of the link as both ends use it: plain, or inside TLS
 * (link_tls.h). The code that moves the link's bytes (perflinkd's TCP port,
 * its handshake and drain, perflink-host's TCP transport) calls these and
 * never asks which it is.
 *
 * Every call is non-blocking. When one cannot go on it returns -EAGAIN and
 * says in c->wants what it waits for: PL_CONN_WANT_READ or _WRITE. A plain
 * socket waits for what it was asked to do; TLS may need the other (a
 * record to read before it can write, or an answer to send while
 * reading), so a caller watches c->fd for what c->wants says, not for what
 * it asked. Bytes may also wait inside TLS, decrypted and not yet taken,
 * where poll cannot see them: pl__conn_pending says so. */
#ifndef PL_COMMON_LINK_CONN_H
#define PL_COMMON_LINK_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#define PL_CONN_WANT_READ 1u
#define PL_CONN_WANT_WRITE 2u

struct pl_link_conn;

struct pl_link_conn_ops {
	const char *name; /* "tcp", "tls" */
	/* 1 when the connection is ready for the link's bytes, 0 when the
	 * handshake goes on (c->wants set), -errno when it failed (the reason
	 * in why): -EPERM the peer's certificate is not trusted, -EPROTO what
	 * came was not TLS 1.3 as it should be, another the connection's. */
	int (*handshake)(struct pl_link_conn *c, char *why, size_t why_len);
	/* >0 bytes read, 0 at the end of the stream, -EAGAIN, -errno. */
	ssize_t (*recv)(struct pl_link_conn *c, void *buf, size_t len);
	/* Bytes taken from the pieces in order (>0), -EAGAIN when none, -errno.
	 * What was not taken must be offered again first, from wherever it was
	 * copied to (TLS holds a record it could not write whole). */
	ssize_t (*sendv)(struct pl_link_conn *c, const struct iovec *iov, int iovcnt);
	bool (*pending)(const struct pl_link_conn *c);
	/* Send no more (TLS: close_notify first); reading goes on. */
	void (*shutdown)(struct pl_link_conn *c);
	/* Closes the socket too. */
	void (*free)(struct pl_link_conn *c);
};

struct pl_link_conn {
	const struct pl_link_conn_ops *ops;
	int fd;
	unsigned wants;
};

/* A plain TCP connection on fd (owned from here, non-blocking). NULL when
 * out of memory (fd is then closed). */
struct pl_link_conn *pl__conn_plain(int fd);

static inline int pl__conn_handshake(struct pl_link_conn *c, char *why, size_t why_len)
{
	return c->ops->handshake(c, why, why_len);
}

static inline ssize_t pl__conn_recv(struct pl_link_conn *c, void *buf, size_t len)
{
	return c->ops->recv(c, buf, len);
}

static inline ssize_t pl__conn_sendv(struct pl_link_conn *c, const struct iovec *iov, int iovcnt)
{
	return c->ops->sendv(c, iov, iovcnt);
}

static inline ssize_t pl__conn_send(struct pl_link_conn *c, const void *buf, size_t len)
{
	struct iovec iov = { (void *)(uintptr_t)buf, len };

	return c->ops->sendv(c, &iov, 1);
}

static inline bool pl__conn_pending(const struct pl_link_conn *c)
{
	return c->ops->pending(c);
}

static inline void pl__conn_shutdown(struct pl_link_conn *c)
{
	c->ops->shutdown(c);
}

/* NULL is fine. */
static inline void pl__conn_free(struct pl_link_conn *c)
{
	if (c)
		c->ops->free(c);
}

#endif
