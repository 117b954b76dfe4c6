/* See link_tcp_auth.h. */
#include "link_tcp_auth.h"
#include "clock.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

struct pending {
	struct pl_tcp_auth *owner;
	int fd; /* -1: the slot is free */
	struct pl_loop_watch *watch, *timer;
	uint64_t since_ns;
	char who[64];
	uint8_t device_nonce[PL_AUTH_NONCE_BYTES];
	uint8_t in[PL_AUTH_RESPONSE_BYTES];
	size_t got;
};

struct pl_tcp_auth {
	struct pl_loop *loop;
	struct pl_link_key key;
	pl__tcp_auth_admit_cb admit;
	void *ctx;
	struct pending slot[PL_TCP_AUTH_PENDING];
	struct pl_tcp_auth_totals totals;
	/* a peer can fail as often as it likes: said at most once a second */
	struct pl__ratelimit rl;
};

static void release(struct pending *p, bool close_fd)
{
	pl__loop_remove(p->watch);
	pl__loop_remove(p->timer);
	p->watch = p->timer = NULL;
	if (close_fd && p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	p->got = 0;
}

static void refuse(struct pending *p, uint64_t *counter, const char *why)
{
	(*counter)++;
	pl__log_warnx_limited(&p->owner->rl, "link: tcp connection from %s refused: %s", p->who,
			      why);
	release(p, true);
}

static bool send_all(int fd, const uint8_t *b, size_t len)
{
	/* a fresh connection's send buffer takes these few bytes whole; if it
	 * does not, the peer is not a host worth waiting for */
	ssize_t n;

	do
		n = send(fd, b, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len;
}

static void on_response(void *ctx, int fd, uint32_t events)
{
	struct pending *p = ctx;
	struct pl_tcp_auth *a = p->owner;
	uint8_t host_nonce[PL_AUTH_NONCE_BYTES], proof[PL_AUTH_PROOF_BYTES];
	char who[sizeof(p->who)];
	ssize_t n;

	(void)events;
	/* read no further than the response: what the host sends after it
	 * is the link's, read there once the connection is admitted */
	do
		n = recv(fd, p->in + p->got, sizeof(p->in) - p->got, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n <= 0) {
		refuse(p, &a->totals.timed_out, n == 0 ? "closed before it answered the challenge"
						       : strerror(errno));
		return;
	}
	p->got += (size_t)n;
	if (p->got >= PL_AUTH_MAGIC_BYTES && memcmp(p->in, PL_AUTH_MAGIC, PL_AUTH_MAGIC_BYTES) != 0) {
		refuse(p, &a->totals.failed,
		       "it did not answer the challenge (no PLAUTH01: a host without the key?)");
		return;
	}
	if (p->got < sizeof(p->in))
		return;
	if (!pl__link_auth_read_response(p->in, &a->key, p->device_nonce, host_nonce)) {
		refuse(p, &a->totals.failed, "wrong key (its MAC does not check)");
		return;
	}
	if (pl__link_auth_mac(&a->key, PL_AUTH_DEVICE, p->device_nonce, host_nonce, proof) < 0 ||
	    !send_all(fd, proof, sizeof(proof))) {
		refuse(p, &a->totals.timed_out, "the device's proof could not be sent");
		return;
	}
	a->totals.passed++;
	snprintf(who, sizeof(who), "%s", p->who);
	release(p, false);
	a->admit(a->ctx, fd, who);
}

static void on_timeout(void *ctx, uint64_t expirations)
{
	struct pending *p = ctx;

	(void)expirations;
	refuse(p, &p->owner->totals.timed_out, "no answer to the challenge in time");
}

void pl__tcp_auth_start(struct pl_tcp_auth *a, int fd, const char *who)
{
	uint8_t challenge[PL_AUTH_CHALLENGE_BYTES];
	struct pending *p = NULL, *oldest = &a->slot[0];

	for (int i = 0; i < PL_TCP_AUTH_PENDING && !p; i++) {
		if (a->slot[i].fd < 0)
			p = &a->slot[i];
		else if (a->slot[i].since_ns < oldest->since_ns)
			oldest = &a->slot[i];
	}
	if (!p) {
		refuse(oldest, &a->totals.evicted, "a newer connection needs its place");
		p = oldest;
	}
	p->fd = fd;
	p->got = 0;
	p->since_ns = pl__mono_ns();
	snprintf(p->who, sizeof(p->who), "%s", who);
	if (pl__link_auth_nonce(p->device_nonce) < 0) {
		refuse(p, &a->totals.timed_out, "no random nonce");
		return;
	}
	pl__link_auth_challenge(challenge, p->device_nonce);
	if (!send_all(fd, challenge, sizeof(challenge))) {
		refuse(p, &a->totals.timed_out, "the challenge could not be sent");
		return;
	}
	if (pl__loop_add_fd(a->loop, fd, EPOLLIN, on_response, p, &p->watch) < 0 ||
	    pl__loop_add_timer(a->loop, (uint64_t)PL_AUTH_TIMEOUT_MS * 1000000u, 0, on_timeout, p,
			       &p->timer) < 0)
		refuse(p, &a->totals.timed_out, "cannot watch it");
}

int pl__tcp_auth_open(struct pl_tcp_auth **out, struct pl_loop *loop,
		      const struct pl_link_key *key, pl__tcp_auth_admit_cb admit, void *ctx)
{
	struct pl_tcp_auth *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->loop = loop;
	a->key = *key;
	a->admit = admit;
	a->ctx = ctx;
	a->rl = (struct pl__ratelimit)PL_RATELIMIT_INIT(1000);
	for (int i = 0; i < PL_TCP_AUTH_PENDING; i++) {
		a->slot[i].owner = a;
		a->slot[i].fd = -1;
	}
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
