/* The TCP port of the link: perflinkd listens, perflink-host connects, and
 * the same padded wire messages flow both ways (docs/wire.md, "TCP").
 *
 * One host at a time. A new host replaces the current one, the way a
 * replugged cable does: a host that lost its connection without the device
 * noticing (a half-open socket) can always come back.
 *
 * Who may be the host: with a key (tcp-key-file), only a connection that
 * proved it holds the key (link_tcp_auth.c); until then it displaces
 * nobody and sees nothing. With TLS (tcp-tls-cert), that handshake and
 * everything after it run inside TLS 1.3; the connection's bytes go
 * through link_conn.h either way. Without a key, anyone who can connect,
 * so the port then listens on loopback addresses only.
 *
 * Sending never blocks the loop: a message goes out with one writev, and
 * what the socket did not take is copied into an output buffer flushed on
 * EPOLLOUT. The buffer is the port's budget (what the host has not taken
 * yet); the kernel's send buffer is kept small so that the budget, not the
 * kernel, decides when frames are held. */
#include "link.h"
#include "link_port.h"
#include "link_tcp_auth.h"
#include "link_tcp_drain.h"
#include "link_tls.h"
#include "clock.h"
#include "log.h"
#include "unix_listen.h" /* pl__accept_must_pause */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define TCP_PACKET_SIZE 64        /* the wire's padding on TCP */
#define TCP_SNDBUF (128 * 1024)   /* see the comment at the top */
#define TCP_READ_BYTES 16384

struct tcp_port {
	struct pl_link_port base;
	struct pl_loop *loop;
	struct pl_link_port_events ev;
	void *ctx;
	size_t budget;

	int listen_fd;
	struct pl_link_conn *conn; /* the host's (plain or TLS), NULL: none */
	unsigned bound_port;
	struct pl_loop_watch *listen_watch, *conn_watch;
	struct pl_loop_watch *resume_watch; /* accept paused after EMFILE and the like */
	/* what a peer makes happen as often as it likes (connecting, being
	 * replaced, failing to be accepted) is said at most once a second */
	struct pl__ratelimit conn_rl;
	uint32_t conn_events;

	uint8_t *out;             /* bytes the socket did not take yet */
	size_t out_cap, out_start, out_end;
	uint64_t out_since_ns;    /* when the buffer last became non-empty */
	uint8_t in[TCP_READ_BYTES];

	struct pl_tcp_auth *auth; /* NULL: no key, loopback only */
	struct pl_tls_server *tls; /* NULL: no TLS */
	/* the last read stopped because TLS must write first (link_conn.h) */
	bool read_wants_write;

	/* which frames of this connection reached the host (link_tcp_drain.h) */
	struct pl_tcp_ledger ledger;
	struct pl_tcp_drain *drain;
	uint64_t lost_ids[PL_TCP_LEDGER_FRAMES];

	struct pl_link_tx_totals tx;
	struct pl_link_rx_totals rx;
	uint64_t connections, replaced;
};

static size_t buffered(const struct tcp_port *p)
{
	return p->out_end - p->out_start;
}

/* EPOLLOUT while bytes wait to go, or while TLS must write before it can
 * read on. */
static void watch_out(struct tcp_port *p, bool want)
{
	uint32_t events = EPOLLIN | (want || p->read_wants_write ? EPOLLOUT : 0);

	if (p->conn_watch && events != p->conn_events && pl__loop_mod_fd(p->conn_watch, events) == 0)
		p->conn_events = events;
}

/* The connection ends: the frames still in the output buffer never reach
 * the host, and are said lost now; what the kernel holds is the drain's
 * (link_tcp_drain.h), which says later what of it was lost. */
static void drop_connection(struct tcp_port *p, const char *why)
{
	uint64_t kernel_end;
	size_t n;

	if (!p->conn)
		return;
	pl__loop_remove(p->conn_watch);
	p->conn_watch = NULL;
	kernel_end = p->ledger.stream_bytes - buffered(p);
	n = pl__tcp_ledger_between(&p->ledger, kernel_end, p->ledger.stream_bytes, p->lost_ids);
	if (n && p->ev.frames_lost)
		p->ev.frames_lost(p->ctx, p->lost_ids, n);
	pl__tcp_drain_start(p->drain, p->conn, &p->ledger, kernel_end, TCP_PACKET_SIZE,
			    p->ev.bytes_wanted ? p->ev.bytes_wanted(p->ctx) : 0);
	pl__tcp_ledger_reset(&p->ledger);
	p->conn = NULL;
	p->read_wants_write = false;
	p->out_start = p->out_end = 0;
	p->ev.down(p->ctx, why);
}

/* Write what is buffered. 1 when it all went, 0 when some is left, -errno;
 * *moved: whether any byte went. */
static int flush_out(struct tcp_port *p, bool *moved)
{
	*moved = false;
	while (buffered(p)) {
		ssize_t n = pl__conn_send(p->conn, p->out + p->out_start, buffered(p));

		if (n < 0)
			return n == -EAGAIN ? 0 : (int)n;
		p->out_start += (size_t)n;
		*moved = true;
	}
	p->out_start = p->out_end = 0;
	return 1;
}

static int tcp_send(struct pl_link_port *base, const struct iovec *iov, int iovcnt,
		    const uint64_t *frame_id, struct pl_link_send_diag *diag)
{
	struct tcp_port *p = (struct tcp_port *)base;
	size_t total = 0, sent = 0, left;
	uint64_t t0, now;
	ssize_t n = 0;

	if (!p->conn)
		return -ENOTCONN;
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	if (buffered(p) && buffered(p) + total > p->budget)
		return -EAGAIN;
	if (total > p->out_cap)
		return -EMSGSIZE;
	t0 = pl__mono_ns();
	if (!buffered(p)) {
		n = pl__conn_sendv(p->conn, iov, iovcnt);
		if (n < 0 && n != -EAGAIN) {
			int err = (int)n;

			p->tx.failed_sends++;
			p->tx.last_error = err;
			pl__log_warnc(err, "link: tcp send of %zu bytes", total);
			drop_connection(p, "send failed");
			return err;
		}
		sent = n > 0 ? (size_t)n : 0;
	}
	now = pl__mono_ns();
	if (diag) {
		diag->bytes = total;
		diag->requests = 1;
		diag->submit_ns = now - t0;
		diag->backlog_bytes = buffered(p);
		diag->backlog_ns = buffered(p) ? now - p->out_since_ns : 0;
	}
	left = total - sent;
	if (left) {
		/* Keep the rest; make room at the end of the buffer first. */
		if (p->out_end + left > p->out_cap) {
			memmove(p->out, p->out + p->out_start, buffered(p));
			p->out_end -= p->out_start;
			p->out_start = 0;
		}
		if (!buffered(p))
			p->out_since_ns = now;
		for (int i = 0; i < iovcnt && left; i++) {
			size_t len = iov[i].iov_len, skip = sent < len ? sent : len;

			sent -= skip;
			len -= skip;
			memcpy(p->out + p->out_end, (const uint8_t *)iov[i].iov_base + skip, len);
			p->out_end += len;
			left -= len;
		}
		watch_out(p, true);
	}
	pl__tcp_ledger_sent(&p->ledger, total, frame_id);
	p->tx.messages++;
	p->tx.bytes += total;
	if (diag && diag->submit_ns > p->tx.max_submit_ns)
		p->tx.max_submit_ns = diag->submit_ns;
	if (diag && diag->backlog_bytes > p->tx.max_backlog_bytes)
		p->tx.max_backlog_bytes = diag->backlog_bytes;
	if (diag && diag->backlog_ns > p->tx.max_backlog_ns)
		p->tx.max_backlog_ns = diag->backlog_ns;
	return 0;
}

static size_t tcp_room(const struct pl_link_port *base)
{
	const struct tcp_port *p = (const struct tcp_port *)base;

	return buffered(p) >= p->budget ? 0 : p->budget - buffered(p);
}

static uint64_t tcp_inflight(const struct pl_link_port *base)
{
	return buffered((const struct tcp_port *)base);
}

/* Read what the host sent: one read, and more while TLS holds decrypted
 * bytes that epoll cannot see. */
static void read_in(struct tcp_port *p, struct pl_link_conn *conn)
{
	for (int i = 0; i < 8 && p->conn == conn; i++) {
		ssize_t n = pl__conn_recv(conn, p->in, sizeof(p->in));

		if (n > 0) {
			p->rx.reads++;
			p->rx.bytes += (uint64_t)n;
			p->ev.bytes(p->ctx, p->in, (size_t)n);
			if (!pl__conn_pending(conn))
				return;
			continue;
		}
		if (n == -EAGAIN) {
			bool was = p->read_wants_write;

			p->read_wants_write = (conn->wants & PL_CONN_WANT_WRITE) != 0;
			if (was != p->read_wants_write)
				watch_out(p, buffered(p) > 0);
			return;
		}
		if (n < 0) {
			p->rx.failed_reads++;
			p->rx.last_error = (int)n;
		}
		drop_connection(p, n == 0 ? "the host closed the connection"
					  : "the connection failed");
		return;
	}
}

static void on_conn(void *ctx, int fd, uint32_t events)
{
	struct tcp_port *p = ctx;
	struct pl_link_conn *conn = p->conn;

	(void)fd;
	/* TLS may need to read before it can write on, and the other way
	 * round: whichever way the socket became ready, both go on */
	if (buffered(p) && (events & (EPOLLOUT | EPOLLIN))) {
		bool moved;
		int r = flush_out(p, &moved);

		if (r < 0) {
			p->tx.failed_sends++;
			p->tx.last_error = r;
			drop_connection(p, "send failed");
			return;
		}
		if (r == 1)
			watch_out(p, false);
		/* the host took something, even if not all: progress */
		if (moved) {
			p->ev.progress(p->ctx);
			/* the link may have sent, failed and dropped this
			 * connection inside: it is no longer ours to read */
			if (p->conn != conn)
				return;
		}
	}
	if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) ||
	    (p->read_wants_write && (events & EPOLLOUT)))
		read_in(p, conn);
}

static void on_resume(void *ctx, uint64_t expirations)
{
	struct tcp_port *p = ctx;

	(void)expirations;
	pl__loop_remove(p->resume_watch);
	p->resume_watch = NULL;
	pl__loop_mod_fd(p->listen_watch, EPOLLIN);
}

/* Out of fds or memory: the listening socket stays readable, so it is not
 * watched for a second instead of spinning the loop. */
static void pause_accepts(struct tcp_port *p, int err)
{
	pl__log_warnx_limited(&p->conn_rl, "link: accept: %s; pausing for a second",
			      strerror(err));
	if (!p->resume_watch && pl__loop_mod_fd(p->listen_watch, 0) == 0 &&
	    pl__loop_add_timer(p->loop, PL_ACCEPT_PAUSE_NS, 0, on_resume, p, &p->resume_watch) < 0)
		pl__loop_mod_fd(p->listen_watch, EPOLLIN);
}

/* conn is the host from now on: it replaces the one before. */
static void admit(void *ctx, struct pl_link_conn *conn, const char *who)
{
	struct tcp_port *p = ctx;
	int one = 1, sndbuf = TCP_SNDBUF, c = conn->fd;

	if (p->conn) {
		p->replaced++;
		pl__log_info_limited(&p->conn_rl,
				     "link: a new host connection from %s replaces the current one",
				     who);
		drop_connection(p, "replaced by a new connection");
	}
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(c, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (pl__loop_add_fd(p->loop, c, EPOLLIN, on_conn, p, &p->conn_watch) < 0) {
		pl__log_warnx_limited(&p->conn_rl, "link: cannot watch the connection from %s", who);
		pl__conn_free(conn);
		return;
	}
	p->conn = conn;
	p->conn_events = EPOLLIN;
	p->read_wants_write = false;
	p->connections++;
	pl__log_info_limited(&p->conn_rl, "link: host connected over TCP from %s%s", who,
			     p->tls ? " (TLS, key proved)" : p->auth ? " (key proved)" : "");
	p->ev.up(p->ctx, TCP_PACKET_SIZE);
}

static void on_accept(void *ctx, int fd, uint32_t events)
{
	struct tcp_port *p = ctx;
	char who[INET6_ADDRSTRLEN + 8] = "?";
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int c;

	(void)events;
	c = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (c < 0) {
		if (pl__accept_must_pause(errno))
			pause_accepts(p, errno);
		return;
	}
	getnameinfo((struct sockaddr *)&ss, sl, who, sizeof(who), NULL, 0, NI_NUMERICHOST);
	if (p->auth) {
		pl__tcp_auth_start(p->auth, c, who);
	} else {
		struct pl_link_conn *conn = pl__conn_plain(c);

		if (conn)
			admit(p, conn, who);
	}
}

/* "HOST:PORT", "[V6]:PORT" or ":PORT" (all addresses). */
static int parse_listen(const char *spec, char *host, size_t host_len, char *port,
			size_t port_len)
{
	const char *colon = strrchr(spec, ':');
	size_t hl;

	if (!colon || !colon[1] || strlen(colon + 1) >= port_len)
		return -EINVAL;
	hl = (size_t)(colon - spec);
	if (hl >= 2 && spec[0] == '[' && spec[hl - 1] == ']') {
		spec++;
		hl -= 2;
	}
	if (hl >= host_len)
		return -EINVAL;
	memcpy(host, spec, hl);
	host[hl] = '\0';
	snprintf(port, port_len, "%s", colon + 1);
	return 0;
}

static bool is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

static int open_listener(struct tcp_port *p, const char *spec)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL, *ai;
	char host[256], port[16];
	int err, one = 1;

	if (parse_listen(spec, host, sizeof(host), port, sizeof(port)) < 0) {
		pl__log_warnx("link: tcp address \"%s\" is not HOST:PORT, [V6]:PORT or :PORT",
			      spec);
		return -EINVAL;
	}
	/* Without a key anyone who reaches the port gets the stream and may
	 * answer for the producers: only this machine may reach it then. */
	if (!p->auth && !host[0]) {
		snprintf(host, sizeof(host), "127.0.0.1");
		pl__log_warnx("link: no tcp-key-file: listening on loopback only (127.0.0.1), "
			      "not on every address; give the link a key to listen on others");
	}
	if ((err = getaddrinfo(host[0] ? host : NULL, port, &hints, &res)) != 0) {
		pl__log_warnx("link: tcp address \"%s\": %s", spec, gai_strerror(err));
		return -EINVAL;
	}
	for (ai = res; ai && !p->auth; ai = ai->ai_next)
		if (!is_loopback(ai->ai_addr)) {
			pl__log_warnx("link: tcp address \"%s\" is not a loopback address, and "
				      "without tcp-key-file only loopback is allowed: anyone who "
				      "reaches it would get the stream", spec);
			freeaddrinfo(res);
			return -EPERM;
		}
	err = -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
				ai->ai_protocol);

		if (fd < 0) {
			err = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 4) == 0) {
			struct sockaddr_storage ss;
			socklen_t sl = sizeof(ss);

			if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
				p->bound_port = ntohs(ss.ss_family == AF_INET6
						      ? ((struct sockaddr_in6 *)&ss)->sin6_port
						      : ((struct sockaddr_in *)&ss)->sin_port);
			p->listen_fd = fd;
			err = 0;
			break;
		}
		err = -errno;
		close(fd);
	}
	freeaddrinfo(res);
	if (err < 0)
		pl__log_warnc(err, "link: cannot listen on %s", spec);
	return err;
}

static void tcp_reset(struct pl_link_port *base, const char *why)
{
	struct tcp_port *p = (struct tcp_port *)base;

	pl__log_warnx("link: %s; closing the host's connection", why);
	drop_connection(p, why);
}

static void tcp_totals(const struct pl_link_port *base, struct pl_link_tx_totals *tx,
		       struct pl_link_rx_totals *rx, struct pl_link_usb_totals *usb)
{
	const struct tcp_port *p = (const struct tcp_port *)base;

	(void)usb; /* no AIO requests behind a socket */
	*tx = p->tx;
	*rx = p->rx;
	rx->replies_discarded = pl__tcp_drain_replies_discarded(p->drain);
}

static void tcp_close(struct pl_link_port *base)
{
	struct tcp_port *p = (struct tcp_port *)base;

	if (!p)
		return;
	p->ev.frames_lost = NULL; /* shutting down: nobody to tell any more */
	if (p->drain)
		drop_connection(p, "closing");
	pl__tcp_drain_close(p->drain);
	pl__tcp_auth_close(p->auth);
	pl__tls_server_close(p->tls);
	pl__loop_remove(p->resume_watch);
	pl__loop_remove(p->listen_watch);
	if (p->listen_fd >= 0)
		close(p->listen_fd);
	free(p->out);
	free(p);
}

static const struct pl_link_port_ops tcp_ops = {
	.name = "tcp",
	.send = tcp_send,
	.room = tcp_room,
	.inflight = tcp_inflight,
	.reset = tcp_reset,
	.totals = tcp_totals,
	.close = tcp_close,
};

/* What the drain found lost, to the link. p->ev.frames_lost is read at the
 * call, not when the drain was made: closing the port clears it, and a
 * drain ended by the close then tells nobody. */
static void drained_lost(void *ctx, const uint64_t *frame_ids, size_t n)
{
	struct tcp_port *p = ctx;

	if (p->ev.frames_lost)
		p->ev.frames_lost(p->ctx, frame_ids, n);
}

/* TLS: the certificate and its key, checked and loaded now, while
 * perflinkd may still read what only root may (before the drop). */
static int open_tls(struct tcp_port *p, const struct pl_link_config *cfg)
{
	char why[512];
	int err;

	if (!cfg->tcp_tls_cert || !cfg->tcp_tls_key) {
		pl__log_warnx("link: TLS needs both tcp-tls-cert and tcp-tls-key");
		return -EINVAL;
	}
	/* the certificate proves the device; only the key proves the host,
	 * and without a host that proves itself TLS would let anyone in */
	if (!cfg->tcp_key_file) {
		pl__log_warnx("link: tcp-tls-cert needs tcp-key-file too: TLS proves the device "
			      "to the host, the key proves the host to the device");
		return -EINVAL;
	}
	if (!pl__link_tls_available()) {
		pl__log_warnx("link: tcp-tls-cert: this perflinkd was built without libssl");
		return -ENOTSUP;
	}
	if ((err = pl__tls_server_open(&p->tls, cfg->tcp_tls_cert, cfg->tcp_tls_key, why,
				       sizeof(why))) < 0)
		pl__log_warnx("link: TLS: %s", why);
	return err;
}

static int open_auth(struct tcp_port *p, const char *path)
{
	struct pl_link_key key;
	char why[512];
	int err;

	if (!pl__link_auth_available()) {
		pl__log_warnx("link: tcp-key-file: this perflinkd was built without libcrypto "
			      "and cannot authenticate hosts");
		return -ENOTSUP;
	}
	if ((err = pl__link_key_load(&key, path, why, sizeof(why))) < 0) {
		pl__log_warnx("link: tcp-key-file %s", why);
		return err;
	}
	err = pl__tcp_auth_open(&p->auth, p->loop, &key, p->tls, admit, p);
	pl__link_key_wipe(&key);
	return err;
}

int pl__link_port_tcp_open(struct pl_link_port **out, const struct pl_link_config *cfg,
			   struct pl_loop *loop, const struct pl_link_port_events *ev, void *ctx)
{
	struct tcp_port *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	p->base.ops = &tcp_ops;
	p->loop = loop;
	p->ev = *ev;
	p->ctx = ctx;
	p->listen_fd = -1;
	p->conn_rl = (struct pl__ratelimit)PL_RATELIMIT_INIT(1000);
	p->budget = cfg->budget_bytes;
	/* Room for the budget and, past it, one whole message: an idle port
	 * always takes one message, however large. */
	p->out_cap = cfg->budget_bytes + cfg->max_message_bytes + 1024;
	if (!(p->out = malloc(p->out_cap))) {
		err = -ENOMEM;
		goto fail;
	}
	if ((err = pl__tcp_drain_open(&p->drain, loop, drained_lost, p)) < 0)
		goto fail;
	if ((cfg->tcp_tls_cert || cfg->tcp_tls_key) && (err = open_tls(p, cfg)) < 0)
		goto fail;
	if (cfg->tcp_key_file && (err = open_auth(p, cfg->tcp_key_file)) < 0)
		goto fail;
	if ((err = open_listener(p, cfg->tcp_listen)) < 0)
		goto fail;
	if ((err = pl__loop_add_fd(loop, p->listen_fd, EPOLLIN, on_accept, p,
				   &p->listen_watch)) < 0)
		goto fail;
	pl__log_info("link: waiting for the host on tcp port %u%s", p->bound_port,
		     p->tls ? " (TLS 1.3; hosts must prove the key)"
			    : p->auth ? " (hosts must prove the key)" : "");
	*out = &p->base;
	return 0;
fail:
	tcp_close(&p->base);
	return err;
}

unsigned pl__link_port_tcp_bound_port(const struct pl_link_port *base)
{
	if (!base || base->ops != &tcp_ops)
		return 0;
	return ((const struct tcp_port *)base)->bound_port;
}

bool pl__link_port_tcp_totals(const struct pl_link_port *base, struct pl_link_tcp_totals *out)
{
	const struct tcp_port *p = (const struct tcp_port *)base;
	struct pl_tcp_auth_totals a = { 0 };

	if (!base || base->ops != &tcp_ops)
		return false;
	if (p->auth)
		pl__tcp_auth_get_totals(p->auth, &a);
	*out = (struct pl_link_tcp_totals){
		.keyed = p->auth != NULL,
		.tls = p->tls != NULL,
		.connections = p->connections,
		.replaced = p->replaced,
		.auth_passed = a.passed,
		.auth_failed = a.failed,
		.auth_timed_out = a.timed_out,
		.auth_evicted = a.evicted,
		.tls_failed = a.tls_failed,
	};
	return true;
}
