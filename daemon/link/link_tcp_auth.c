/* See link_tcp_auth.h. */
#include "link_tcp_auth.h"
#include "clock.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

struct pending {
	struct pl_tcp_auth *owner;
	struct pl_link_conn *conn; /* NULL: the slot is free */
	struct pl_loop_watch *watch, *timer;
	uint32_t events;           /* what watch waits for */
	bool challenged;           /* past TLS (or without it): the challenge went */
	uint64_t since_ns;
	char who[64];
	uint8_t device_nonce[PL_AUTH_NONCE_BYTES];
	uint8_t in[PL_AUTH_RESPONSE_BYTES];
	size_t got;
};

struct pl_tcp_auth {
	struct pl_loop *loop;
	struct pl_link_key key;
	struct pl_tls_server *tls;
	pl__tcp_auth_admit_cb admit;
	void *ctx;
	struct pending slot[PL_TCP_AUTH_PENDING];
	struct pl_tcp_auth_totals totals;
	/* a peer can fail as often as it likes: said at most once a second */
	struct pl__ratelimit rl;
};

/* Stop watching p; close its connection unless it was handed on. */
static void release(struct pending *p, bool close_conn)
{
	pl__loop_remove(p->watch);
	pl__loop_remove(p->timer);
	p->watch = p->timer = NULL;
	if (close_conn)
		pl__conn_free(p->conn);
	p->conn = NULL;
	p->got = 0;
}

static void refuse(struct pending *p, uint64_t *counter, const char *why)
{
	(*counter)++;
	pl__log_warnx_limited(&p->owner->rl, "link: tcp connection from %s refused: %s", p->who,
			      why);
	release(p, true);
}

static bool send_all(struct pl_link_conn *c, const uint8_t *b, size_t len)
{
	/* a fresh connection's send buffer takes these few bytes whole (TLS:
	 * one record); if it does not, the peer is not a host worth waiting
	 * for */
	return pl__conn_send(c, b, len) == (ssize_t)len;
}

/* Watch for what the connection waits for (TLS may want to write while
 * its handshake goes on). */
static bool watch_for(struct pending *p, uint32_t events)
{
	if (events == p->events)
		return true;
	if (pl__loop_mod_fd(p->watch, events) < 0)
		return false;
	p->events = events;
	return true;
}

static void send_challenge(struct pending *p)
{
	struct pl_tcp_auth *a = p->owner;
	uint8_t challenge[PL_AUTH_CHALLENGE_BYTES];

	if (pl__link_auth_nonce(p->device_nonce) < 0) {
		refuse(p, &a->totals.timed_out, "no random nonce");
		return;
	}
	pl__link_auth_challenge(challenge, p->device_nonce);
	if (!send_all(p->conn, challenge, sizeof(challenge))) {
		refuse(p, &a->totals.timed_out, "the challenge could not be sent");
		return;
	}
	p->challenged = true;
	if (!watch_for(p, EPOLLIN))
		refuse(p, &a->totals.timed_out, "cannot watch it");
}

static void tls_step(struct pending *p)
{
	char why[256];
	int r = pl__conn_handshake(p->conn, why, sizeof(why));

	if (r == 0) {
		if (!watch_for(p, p->conn->wants & PL_CONN_WANT_WRITE ? EPOLLOUT : EPOLLIN))
			refuse(p, &p->owner->totals.timed_out, "cannot watch it");
		return;
	}
	if (r < 0) {
		refuse(p, &p->owner->totals.tls_failed, why);
		return;
	}
	send_challenge(p);
}

static void read_response(struct pending *p)
{
	struct pl_tcp_auth *a = p->owner;
	uint8_t host_nonce[PL_AUTH_NONCE_BYTES], proof[PL_AUTH_PROOF_BYTES];
	struct pl_link_conn *conn;
	char who[sizeof(p->who)];
	ssize_t n;

	/* read no further than the response: what the host sends after it
	 * is the link's, read there once the connection is admitted */
	n = pl__conn_recv(p->conn, p->in + p->got, sizeof(p->in) - p->got);
	if (n == -EAGAIN) {
		if (!watch_for(p, p->conn->wants & PL_CONN_WANT_WRITE ? EPOLLOUT : EPOLLIN))
			refuse(p, &a->totals.timed_out, "cannot watch it");
		return;
	}
	if (n <= 0) {
		refuse(p, &a->totals.timed_out, n == 0 ? "closed before it answered the challenge"
						       : strerror((int)-n));
		return;
	}
	p->got += (size_t)n;
	if (p->got >= PL_AUTH_MAGIC_BYTES && memcmp(p->in, PL_AUTH_MAGIC, PL_AUTH_MAGIC_BYTES) != 0) {
		refuse(p, &a->totals.failed,
		       a->tls ? "it did not answer the challenge (no PLAUTH01: a host without the key?)"
			      : "it did not answer the challenge (no PLAUTH01: a host without the "
				"key, or one that speaks TLS to a port without it?)");
		return;
	}
	if (p->got < sizeof(p->in))
		return;
	if (!pl__link_auth_read_response(p->in, &a->key, p->device_nonce, host_nonce)) {
		refuse(p, &a->totals.failed, "wrong key (its MAC does not check)");
		return;
	}
	if (pl__link_auth_mac(&a->key, PL_AUTH_DEVICE, p->device_nonce, host_nonce, proof) < 0 ||
	    !send_all(p->conn, proof, sizeof(proof))) {
		refuse(p, &a->totals.timed_out, "the device's proof could not be sent");
		return;
	}
	a->totals.passed++;
	snprintf(who, sizeof(who), "%s", p->who);
	conn = p->conn;
	release(p, false);
	a->admit(a->ctx, conn, who);
}

static void on_event(void *ctx, int fd, uint32_t events)
{
	struct pending *p = ctx;

	(void)fd;
	(void)events;
	if (!p->challenged)
		tls_step(p);
	else
		read_response(p);
}

static void on_timeout(void *ctx, uint64_t expirations)
{
	struct pending *p = ctx;

	(void)expirations;
	refuse(p, &p->owner->totals.timed_out,
	       p->challenged ? "no answer to the challenge in time"
			     : "no TLS handshake in time (a plain TCP host, or one that stalled)");
}

void pl__tcp_auth_start(struct pl_tcp_auth *a, int fd, const char *who)
{
	struct pending *p = NULL, *oldest = &a->slot[0];

	for (int i = 0; i < PL_TCP_AUTH_PENDING && !p; i++) {
		if (!a->slot[i].conn)
			p = &a->slot[i];
		else if (a->slot[i].since_ns < oldest->since_ns)
			oldest = &a->slot[i];
	}
	if (!p) {
		refuse(oldest, &a->totals.evicted, "a newer connection needs its place");
		p = oldest;
	}
	p->conn = a->tls ? pl__tls_server_conn(a->tls, fd) : pl__conn_plain(fd);
	p->got = 0;
	p->challenged = false;
	p->since_ns = pl__mono_ns();
	snprintf(p->who, sizeof(p->who), "%s", who);
	if (!p->conn) {
		a->totals.timed_out++;
		pl__log_warnx_limited(&a->rl, "link: tcp connection from %s refused: out of memory",
				      who);
		return;
	}
	p->events = EPOLLIN;
	if (pl__loop_add_fd(a->loop, fd, EPOLLIN, on_event, p, &p->watch) < 0 ||
	    pl__loop_add_timer(a->loop, (uint64_t)PL_AUTH_TIMEOUT_MS * 1000000u, 0, on_timeout, p,
			       &p->timer) < 0) {
		refuse(p, &a->totals.timed_out, "cannot watch it");
		return;
	}
	/* the device speaks first: without TLS the challenge, with it nothing
	 * until the ClientHello (the step reads it when it comes) */
	if (!a->tls)
		send_challenge(p);
}

int pl__tcp_auth_open(struct pl_tcp_auth **out, struct pl_loop *loop,
		      const struct pl_link_key *key, struct pl_tls_server *tls,
		      pl__tcp_auth_admit_cb admit, void *ctx)
{
	struct pl_tcp_auth *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->loop = loop;
	a->key = *key;
	a->tls = tls;
	a->admit = admit;
	a->ctx = ctx;
	a->rl = (struct pl__ratelimit)PL_RATELIMIT_INIT(1000);
	for (int i = 0; i < PL_TCP_AUTH_PENDING; i++)
		a->slot[i].owner = a;
	*out = a;
	return 0;
}

void pl__tcp_auth_get_totals(const struct pl_tcp_auth *a, struct pl_tcp_auth_totals *out)
{
	*out = a->totals;
}

void pl__tcp_auth_close(struct pl_tcp_auth *a)
{
	if (!a)
		return;
	for (int i = 0; i < PL_TCP_AUTH_PENDING; i++)
		release(&a->slot[i], true);
	pl__link_key_wipe(&a->key);
	free(a);
}
