/* See tcp_link.h. */
#include "tcp_link.h"
#include "clock.h"
#include "link_auth.h"
#include "link_conn.h"
#include "link_tls.h"
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

/* TLS_HANDSHAKE: connected, TLS not set up yet (with --tls-ca or a
 * fingerprint); AUTHENTICATING: the key's handshake not done yet (with a
 * key) */
enum state { IDLE, CONNECTING, TLS_HANDSHAKE, AUTHENTICATING, CONNECTED };

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
	int fd;                    /* the socket; conn owns it once connected */
	struct pl_link_conn *conn; /* plain or TLS, from the TCP connect on */
	struct pl_tls_client *tls; /* NULL: no TLS */
	char host_name[256];       /* what the certificate must name */
	bool read_wants_write;     /* TLS must write before it reads on */
	uint64_t next_attempt_ns;
	int broken; /* an errno from a write inside a handler; acted on after it */
	enum said said;
	int said_errno;
	char said_auth[320]; /* the reason of the last failed handshake said */
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
	snprintf(l->host_name, sizeof(l->host_name), "%s", host);
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
	if (cfg->tls_ca_file || cfg->tls_fingerprint) {
		const struct pl_tls_client_config tc = {
			.ca_file = cfg->tls_ca_file,
			.fingerprint = cfg->tls_fingerprint,
			.server_name = l->host_name,
		};
		char why[512];

		err = -EINVAL;
		/* the device runs TLS only with a key: TLS proves it, the key
		 * proves this host */
		if (!l->have_key) {
			pl__log_warnx("--tls-ca and --tls-fingerprint need --tcp-key: a device with "
				      "TLS still asks for the pre-shared key");
			goto fail;
		}
		if (!pl__link_tls_available()) {
			pl__log_warnx("--tls-ca: this perflink-host was built without libssl");
			goto fail;
		}
		if (pl__tls_client_open(&l->tls, &tc, why, sizeof(why)) < 0) {
			pl__log_warnx("TLS: %s", why);
			goto fail;
		}
	}
	l->cfg.tls_ca_file = l->cfg.tls_fingerprint = NULL;
	*out = l;
	return 0;
fail:
	pl__link_key_wipe(&l->key);
	free(l->address);
	free(l->in);
	free(l);
	return err;
}

static void close_fd(struct pl_tcp_link *l)
{
	if (l->conn)
		pl__conn_free(l->conn); /* closes the socket */
	else if (l->fd >= 0)
		close(l->fd);
	l->conn = NULL;
	l->fd = -1;
	l->read_wants_write = false;
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
			     l->tls ? " (TLS 1.3, the device proved its certificate and the key)"
			     : l->have_key ? " (the device proved the key)" : "");
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
	if (l->said != SAID_AUTH_FAILED || strcmp(l->said_auth, why) != 0)
		pl__log_warnx("%s: %s; retrying every %.1f s", l->address, why,
			      l->cfg.retry_ms / 1000.0);
	l->said = SAID_AUTH_FAILED;
	snprintf(l->said_auth, sizeof(l->said_auth), "%s", why);
	if (was_connected)
		l->h.disconnected(l->ctx);
}

static void start_auth(struct pl_tcp_link *l)
{
	l->state = AUTHENTICATING;
	l->auth_got = 0;
	l->auth_want = PL_AUTH_CHALLENGE_BYTES;
}

static void tls_step(struct pl_tcp_link *l)
{
	char why[256], line[400];
	int r = pl__conn_handshake(l->conn, why, sizeof(why));

	if (r == 0)
		return;
	if (r < 0) {
		/* a device without TLS speaks first, in the clear: TLS reads its
		 * challenge or HELLO as a broken record */
		snprintf(line, sizeof(line), "%s%s", why,
			 r == -EPROTO ? " (does the device have link-tcp-tls-cert?)" : "");
		auth_failed(l, line);
		return;
	}
	start_auth(l);
}

/* what a host without TLS sees of a device with it: silence, then the
 * connection closed at the device's deadline */
/* The TCP connection is made: TLS, then the key's handshake, or connected
 * at once; the device has PL_AUTH_TIMEOUT_MS for all of it. */
static void transport_up(struct pl_tcp_link *l)
{
	int fd = l->fd;

	l->conn = l->tls ? pl__tls_client_conn(l->tls, fd) : pl__conn_plain(fd);
	if (!l->conn) {
		l->fd = -1; /* closed there */
		connect_failed(l, ENOMEM);
		return;
	}
	l->auth_deadline_ns = pl__mono_ns() + (uint64_t)PL_AUTH_TIMEOUT_MS * 1000000u;
	if (l->tls) {
		l->state = TLS_HANDSHAKE;
		tls_step(l); /* the ClientHello goes now */
	} else if (l->have_key)
		start_auth(l);
	else
		now_connected(l);
}

static const char *const auth_no_challenge_tls_hint =
	" (a device with link-tcp-tls-cert says nothing until a TLS client speaks: give "
	"--tls-ca or --tls-fingerprint)";

static const char *const auth_no_challenge =
	"the device sent no challenge: it has no link-tcp-key-file, and with --tcp-key only a "
	"device that proves the key is trusted";

/* Read what the handshake still needs, no more: what follows is the link's. */
static void auth_step(struct pl_tcp_link *l)
{
	uint8_t response[PL_AUTH_RESPONSE_BYTES];
	ssize_t n;

	n = pl__conn_recv(l->conn, l->auth_in + l->auth_got, l->auth_want - l->auth_got);
	if (n == -EAGAIN)
		return;
	if (n <= 0) {
		char why[300];

		snprintf(why, sizeof(why), "%s%s",
			 l->auth_want == PL_AUTH_CHALLENGE_BYTES
				 ? "the device closed the connection before its challenge"
				 : "the device refused this host's proof (wrong key?)",
			 l->auth_want == PL_AUTH_CHALLENGE_BYTES && l->auth_got == 0 && !l->tls
				 ? auth_no_challenge_tls_hint : "");
		auth_failed(l, why);
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
		    pl__conn_send(l->conn, response, sizeof(response)) != (ssize_t)sizeof(response)) {
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
		ssize_t n = pl__conn_send(l->conn, l->out + l->out_off, l->out_len);

		if (n < 0) {
			if (n != -EAGAIN)
				l->broken = (int)-n;
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
			ssize_t n = pl__conn_send(l->conn, p + sent, len - sent);

			if (n < 0) {
				if (n == -EAGAIN)
					break;
				l->broken = (int)-n;
				l->stats.failed_sends++;
				return (int)n;
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
		ssize_t n = pl__conn_recv(l->conn, l->in, READ_BYTES);

		if (n < 0) {
			l->read_wants_write = n == -EAGAIN && (l->conn->wants & PL_CONN_WANT_WRITE);
			if (n != -EAGAIN)
				lost(l, strerror((int)-n));
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

/* What to wait for on the socket now: what the connection said it waits
 * for while it is set up, else input, and output while something waits to
 * go (or TLS must write before it reads on). */
static short poll_events(const struct pl_tcp_link *l)
{
	short ev;

	if (l->state == CONNECTING)
		return POLLOUT;
	if (l->state == TLS_HANDSHAKE)
		return l->conn->wants & PL_CONN_WANT_WRITE ? POLLOUT : POLLIN;
	ev = POLLIN;
	if (l->state == CONNECTED && (l->out_len || l->read_wants_write))
		ev |= POLLOUT;
	return ev;
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
		if (l->state == TLS_HANDSHAKE || l->state == AUTHENTICATING) {
			uint64_t wait_ms;

			if (now >= l->auth_deadline_ns) {
				auth_failed(l, l->state == TLS_HANDSHAKE
					       ? "the device did not finish the TLS handshake in time"
					       : l->tls ? "the device did not finish the handshake in time"
					       : "the device did not finish the handshake in time (a "
						 "device with link-tcp-tls-cert waits for a TLS client: "
						 "give --tls-ca or --tls-fingerprint)");
				return 0;
			}
			wait_ms = (l->auth_deadline_ns - now + 999999) / 1000000;
			if (timeout_ms < 0 || wait_ms < (uint64_t)timeout_ms)
				timeout_ms = (int)wait_ms;
		}
		p.fd = l->fd;
		p.events = poll_events(l);
		/* bytes TLS decrypted already are not on the socket any more */
		if (l->conn && pl__conn_pending(l->conn))
			timeout_ms = 0;
	}
	n = poll(&p, 1, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (p.fd >= 0 && l->conn && pl__conn_pending(l->conn))
		p.revents |= POLLIN;
	if (n == 0 && !(p.revents & POLLIN))
		return 0;
	if (p.fd < 0)
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
	if (l->state == TLS_HANDSHAKE) {
		if (p.revents & (POLLIN | POLLOUT | POLLHUP | POLLERR))
			tls_step(l);
		return 0;
	}
	if (l->state == AUTHENTICATING) {
		if (p.revents & (POLLIN | POLLHUP | POLLERR))
			auth_step(l);
		return 0;
	}
	/* TLS may need to read before it can write on, and the other way round */
	if (l->out_len && (p.revents & (POLLOUT | POLLIN)))
		flush(l);
	if ((p.revents & (POLLIN | POLLHUP | POLLERR)) ||
	    (l->read_wants_write && (p.revents & POLLOUT)))
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
	pl__tls_client_close(l->tls);
	pl__link_key_wipe(&l->key);
	free(l->out);
	free(l->in);
	free(l->address);
	free(l);
}
