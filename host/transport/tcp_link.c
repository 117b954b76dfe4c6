/* See tcp_link.h. */
#include "tcp_link.h"
#include "clock.h"
#include "link_auth.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define READ_BYTES (64u * 1024)
/* reads per poll call, so that a fast sender cannot starve the caller's
 * timers (pings, progress, the end of the run) */
#define READS_PER_POLL 64

/* AUTHENTICATING: connected, the handshake not done yet (with a key) */
enum state { IDLE, CONNECTING, AUTHENTICATING, CONNECTED };

/* what was logged last, so each change is said once */
enum said { SAID_NOTHING, SAID_CONNECTING, SAID_CONNECTED, SAID_FAILED, SAID_LOST,
	    SAID_AUTH_FAILED };

struct pl_tcp_link {
	struct pl_tcp_link_config cfg;
	struct pl_tcp_link_handlers h;
	void *ctx;
	char *address;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	enum state state;
	int fd;
	uint64_t next_attempt_ns;
	int broken; /* an errno from a write inside a handler; acted on after it */
	enum said said;
	int said_errno;
	const char *said_auth; /* the reason of the last failed handshake said */
	bool have_key;
	struct pl_link_key key;
	/* the handshake: the challenge, then the device's proof */
	uint8_t auth_in[PL_AUTH_CHALLENGE_BYTES];
	size_t auth_got, auth_want;
	uint8_t device_nonce[PL_AUTH_NONCE_BYTES], host_nonce[PL_AUTH_NONCE_BYTES];
	uint64_t auth_deadline_ns;
	bool fresh; /* connected without a key; nothing read yet */
	uint8_t *in;
	uint8_t *out;
	size_t out_cap, out_off, out_len;
	struct pl_tcp_link_stats stats;
};

static int resolve(struct pl_tcp_link *l, const char *address)
{
	struct addrinfo hints, *res = NULL;
	char host[256];
	const char *colon = strrchr(address, ':'), *port, *h = address;
	size_t hlen;
	int r;

	if (!colon || colon == address || !colon[1])
		goto bad;
	port = colon + 1;
	hlen = (size_t)(colon - address);
	if (address[0] == '[') {
		if (hlen < 3 || address[hlen - 1] != ']')
			goto bad;
		h = address + 1;
		hlen -= 2;
	}
	if (hlen >= sizeof(host))
		goto bad;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	r = getaddrinfo(host, port, &hints, &res);
	if (r != 0) {
		pl__log_warnx("--tcp %s: %s", address, gai_strerror(r));
		return -EINVAL;
	}
	memcpy(&l->addr, res->ai_addr, res->ai_addrlen);
	l->addr_len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
bad:
	pl__log_warnx("--tcp %s: want HOST:PORT (or [IPV6]:PORT)", address);
	return -EINVAL;
}

int pl__tcp_link_open(struct pl_tcp_link **out, const struct pl_tcp_link_config *cfg,
		      const struct pl_tcp_link_handlers *h, void *ctx)
{
	struct pl_tcp_link *l = calloc(1, sizeof(*l));
	int err = -ENOMEM;

	if (!l)
		return -ENOMEM;
	l->cfg = *cfg;
	l->h = *h;
	l->ctx = ctx;
	l->fd = -1;
	l->address = strdup(cfg->address);
	l->in = malloc(READ_BYTES);
	if (!l->address || !l->in)
		goto fail;
	l->cfg.address = l->address;
	l->cfg.key_file = NULL;
	if ((err = resolve(l, cfg->address)) < 0)
		goto fail;
	if (cfg->key_file) {
		char why[512];

		if (!pl__link_auth_available()) {
			pl__log_warnx("--tcp-key: this perflink-host was built without libcrypto");
			err = -EINVAL;
			goto fail;
		}
		if (pl__link_key_load(&l->key, cfg->key_file, why, sizeof(why)) < 0) {
			pl__log_warnx("--tcp-key %s", why);
			err = -EINVAL;
			goto fail;
		}
		l->have_key = true;
	}
	*out = l;
	return 0;
fail:
	free(l->address);
	free(l->in);
	free(l);
	return err;
}

static void close_fd(struct pl_tcp_link *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	l->out_off = l->out_len = 0;
	l->broken = 0;
}

/* Closed, to connect again after retry_ms. */
static void retry_later(struct pl_tcp_link *l)
{
	close_fd(l);
	l->state = IDLE;
	l->next_attempt_ns = pl__mono_ns() + (uint64_t)l->cfg.retry_ms * 1000000u;
}

static void connect_failed(struct pl_tcp_link *l, int err)
{
	retry_later(l);
	l->stats.failed_connects++;
	if (l->said != SAID_FAILED || l->said_errno != err)
		pl__log_warnx("cannot connect to %s: %s; retrying every %.1f s", l->address,
			      strerror(err), l->cfg.retry_ms / 1000.0);
	l->said = SAID_FAILED;
	l->said_errno = err;
}

static void now_connected(struct pl_tcp_link *l)
{
	l->state = CONNECTED;
	l->stats.connects++;
	l->fresh = !l->have_key;
	/* a device that wants a key is said once, not "connected" each retry */
	if (l->said != SAID_AUTH_FAILED || l->have_key)
		pl__log_info("connected to %s%s", l->address,
			     l->have_key ? " (the device proved the key)" : "");
	l->said = SAID_CONNECTED;
	l->h.connected(l->ctx, PL_TCP_PACKET_SIZE);
}

/* The connection went away (read end, reset, write error). */
static void lost(struct pl_tcp_link *l, const char *why)
{
	retry_later(l);
	l->stats.disconnects++;
	pl__log_warnx("connection to %s lost (%s); reconnecting every %.1f s", l->address, why,
		      l->cfg.retry_ms / 1000.0);
	l->said = SAID_LOST;
	l->h.disconnected(l->ctx);
}

/* The handshake failed: close and try again later, like a refused
 * connection, saying each reason once. */
static void auth_failed(struct pl_tcp_link *l, const char *why)
{
	bool was_connected = l->state == CONNECTED;

	retry_later(l);
	l->stats.failed_auths++;
	if (l->said != SAID_AUTH_FAILED || l->said_auth != why)
		pl__log_warnx("%s: %s; retrying every %.1f s", l->address, why,
			      l->cfg.retry_ms / 1000.0);
	l->said = SAID_AUTH_FAILED;
	l->said_auth = why;
	if (was_connected)
		l->h.disconnected(l->ctx);
}

static void start_auth(struct pl_tcp_link *l)
{
	l->state = AUTHENTICATING;
	l->auth_got = 0;
	l->auth_want = PL_AUTH_CHALLENGE_BYTES;
	l->auth_deadline_ns = pl__mono_ns() + (uint64_t)PL_AUTH_TIMEOUT_MS * 1000000u;
}

/* Connected, or the handshake when there is a key. */
static void transport_up(struct pl_tcp_link *l)
{
	if (l->have_key)
		start_auth(l);
	else
		now_connected(l);
}

static const char *const auth_no_challenge =
	"the device sent no challenge: it has no link-tcp-key-file, and with --tcp-key only a "
	"device that proves the key is trusted";

/* Read what the handshake still needs, no more: what follows is the link's. */
static void auth_step(struct pl_tcp_link *l)
{
	uint8_t response[PL_AUTH_RESPONSE_BYTES];
	ssize_t n;

	do
		n = recv(l->fd, l->auth_in + l->auth_got, l->auth_want - l->auth_got, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		auth_failed(l, l->auth_want == PL_AUTH_CHALLENGE_BYTES
			       ? "the device closed the connection before its challenge"
			       : "the device refused this host's proof (wrong key?)");
		return;
	}
	l->auth_got += (size_t)n;
	if (l->auth_want == PL_AUTH_CHALLENGE_BYTES && l->auth_got >= PL_AUTH_MAGIC_BYTES &&
	    memcmp(l->auth_in, PL_AUTH_MAGIC, PL_AUTH_MAGIC_BYTES) != 0) {
		auth_failed(l, auth_no_challenge);
		return;
	}
	if (l->auth_got < l->auth_want)
		return;
	if (l->auth_want == PL_AUTH_CHALLENGE_BYTES) {
		pl__link_auth_read_challenge(l->auth_in, l->device_nonce);
		if (pl__link_auth_nonce(l->host_nonce) < 0 ||
		    pl__link_auth_response(response, &l->key, l->device_nonce, l->host_nonce) < 0 ||
		    send(l->fd, response, sizeof(response), MSG_DONTWAIT | MSG_NOSIGNAL) !=
			    (ssize_t)sizeof(response)) {
			auth_failed(l, "cannot answer the device's challenge");
			return;
		}
		l->auth_got = 0;
		l->auth_want = PL_AUTH_PROOF_BYTES;
		return;
	}
	if (!pl__link_auth_check(&l->key, PL_AUTH_DEVICE, l->device_nonce, l->host_nonce,
				 l->auth_in)) {
		auth_failed(l, "the device's proof does not check: it does not hold this key");
		return;
	}
	now_connected(l);
}

static void start_connect(struct pl_tcp_link *l)
{
	int one = 1, r;

	if (l->said == SAID_NOTHING) {
		pl__log_info("connecting to %s", l->address);
		l->said = SAID_CONNECTING;
	}
	l->fd = socket(l->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0) {
		connect_failed(l, errno);
		return;
	}
	/* a reply is one small message that must leave now, not wait for
	 * Nagle to gather more */
	if (setsockopt(l->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		pl__log_warn("TCP_NODELAY");
	do
		r = connect(l->fd, (struct sockaddr *)&l->addr, l->addr_len);
	while (r < 0 && errno == EINTR);
	if (r == 0) {
		transport_up(l);
	} else if (errno == EINPROGRESS) {
		l->state = CONNECTING;
	} else {
		connect_failed(l, errno);
	}
}

static void flush(struct pl_tcp_link *l)
{
	while (l->out_len > 0) {
		ssize_t n = send(l->fd, l->out + l->out_off, l->out_len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				l->broken = errno;
			return;
		}
		l->out_off += (size_t)n;
		l->out_len -= (size_t)n;
	}
	l->out_off = 0;
}

static int buffer(struct pl_tcp_link *l, const uint8_t *data, size_t len)
{
	if (l->out_off + l->out_len + len > l->out_cap) {
		size_t cap;
		uint8_t *p;

		/* move what is waiting to the front before growing */
		if (l->out_off) {
			memmove(l->out, l->out + l->out_off, l->out_len);
			l->out_off = 0;
		}
		if (l->out_len + len > l->out_cap) {
			cap = l->out_cap ? l->out_cap : 64 * 1024;
			while (cap < l->out_len + len)
				cap *= 2;
			p = realloc(l->out, cap);
			if (!p)
				return -ENOMEM;
			l->out = p;
			l->out_cap = cap;
		}
	}
	memcpy(l->out + l->out_off + l->out_len, data, len);
	l->out_len += len;
	if (l->out_len > l->stats.max_buffered)
		l->stats.max_buffered = l->out_len;
	return 0;
}

int pl__tcp_link_send(struct pl_tcp_link *l, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t sent = 0;
	int err;

	if (l->state != CONNECTED || l->broken) {
		l->stats.failed_sends++;
		return -ENOTCONN;
	}
	if (l->out_len == 0) {
		while (sent < len) {
			ssize_t n = send(l->fd, p + sent, len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);

			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN || errno == EWOULDBLOCK)
					break;
				l->broken = errno;
				l->stats.failed_sends++;
				return -errno;
			}
			sent += (size_t)n;
		}
		if (sent == len) {
			l->stats.sent_messages++;
			return 0;
		}
	}
	/* A message cut after its first byte must be finished, whatever the
	 * limit, or the stream loses its framing; one not started yet is
	 * dropped whole when it does not fit. */
	if (sent == 0 && l->out_len + len > l->cfg.out_limit_bytes) {
		l->stats.dropped_messages++;
		return -ENOBUFS;
	}
	if ((err = buffer(l, p + sent, len - sent)) < 0) {
		if (sent) {
			l->broken = ENOMEM; /* framing is lost: start again */
			l->stats.failed_sends++;
		} else {
			l->stats.dropped_messages++;
		}
		return err;
	}
	l->stats.sent_messages++;
	return 0;
}

static void read_some(struct pl_tcp_link *l)
{
	int i;

	for (i = 0; i < READS_PER_POLL && l->state == CONNECTED && !l->broken; i++) {
		ssize_t n = read(l->fd, l->in, READ_BYTES);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				lost(l, strerror(errno));
			return;
		}
		if (n == 0) {
			lost(l, "closed by the device");
			return;
		}
		if (l->fresh && (size_t)n >= PL_AUTH_MAGIC_BYTES &&
		    memcmp(l->in, PL_AUTH_MAGIC, PL_AUTH_MAGIC_BYTES) == 0) {
			auth_failed(l, "the device asks for a key: give --tcp-key FILE");
			return;
		}
		l->fresh = false;
		l->stats.bytes += (uint64_t)n;
		l->h.data(l->ctx, l->in, (size_t)n);
	}
}

int pl__tcp_link_poll(struct pl_tcp_link *l, int timeout_ms)
{
	struct pollfd p = { .fd = -1 };
	uint64_t now = pl__mono_ns();
	int n;

	if (l->state == IDLE && now >= l->next_attempt_ns)
		start_connect(l);
	if (l->state == IDLE) {
		uint64_t wait_ms = (l->next_attempt_ns - now + 999999) / 1000000;

		if (l->next_attempt_ns > now && wait_ms < (uint64_t)timeout_ms)
			timeout_ms = (int)wait_ms;
	} else {
		if (l->state == AUTHENTICATING) {
			uint64_t wait_ms;

			if (now >= l->auth_deadline_ns) {
				auth_failed(l, "the device did not finish the handshake in time");
				return 0;
			}
			wait_ms = (l->auth_deadline_ns - now + 999999) / 1000000;
			if (timeout_ms < 0 || wait_ms < (uint64_t)timeout_ms)
				timeout_ms = (int)wait_ms;
		}
		p.fd = l->fd;
		p.events = l->state == CONNECTING ? POLLOUT : POLLIN;
		if (l->state == CONNECTED && l->out_len)
			p.events |= POLLOUT;
	}
	n = poll(&p, 1, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (n == 0 || p.fd < 0)
		return 0;
	if (l->state == CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (getsockopt(l->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err)
			connect_failed(l, err);
		else
			transport_up(l);
		return 0;
	}
	if (l->state == AUTHENTICATING) {
		if (p.revents & (POLLIN | POLLHUP | POLLERR))
			auth_step(l);
		return 0;
	}
	if (p.revents & POLLOUT)
		flush(l);
	if (p.revents & (POLLIN | POLLHUP | POLLERR))
		read_some(l);
	if (l->state == CONNECTED && l->broken)
		lost(l, strerror(l->broken));
	return 0;
}

bool pl__tcp_link_connected(const struct pl_tcp_link *l)
{
	return l->state == CONNECTED;
}

size_t pl__tcp_link_pending(const struct pl_tcp_link *l)
{
	return l->out_len;
}

void pl__tcp_link_get_stats(const struct pl_tcp_link *l, struct pl_tcp_link_stats *out)
{
	*out = l->stats;
}

void pl__tcp_link_close(struct pl_tcp_link *l)
{
	if (!l)
		return;
	close_fd(l);
	pl__link_key_wipe(&l->key);
	free(l->out);
	free(l->in);
	free(l->address);
	free(l);
}
