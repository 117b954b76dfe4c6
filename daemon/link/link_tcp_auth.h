/* The device's side of the TCP link's authentication (common/auth/
 * link_auth.h, docs/wire.md "TCP authentication"): connections that have
 * not proved they hold the key yet.
 *
 * Each new connection gets the challenge at once and has PL_AUTH_TIMEOUT_MS
 * to answer it. Until it has, it is nobody: it displaces no host, receives
 * no frame and none of its bytes reach the link. At most
 * PL_TCP_AUTH_PENDING connections wait at once; one more closes the one
 * that has waited longest, so a flood of silent connections cannot lock a
 * real host out for longer than it takes to connect again.
 *
 * A connection that proves itself gets the device's proof and is handed to
 * admit(); one that answers wrongly or not at all is closed, counted, and
 * said in a rate-limited log line. */
#ifndef PL_DAEMON_LINK_TCP_AUTH_H
#define PL_DAEMON_LINK_TCP_AUTH_H

#include <stdint.h>

#include "event_loop.h"
#include "link_auth.h"

#define PL_TCP_AUTH_PENDING 4

struct pl_tcp_auth;

/* fd is the caller's from now on, non-blocking; who is its address. */
typedef void (*pl__tcp_auth_admit_cb)(void *ctx, int fd, const char *who);

struct pl_tcp_auth_totals {
	uint64_t passed;    /* proved the key */
	uint64_t failed;    /* answered with a wrong MAC or no magic */
	uint64_t timed_out; /* did not answer in time, or closed first */
	uint64_t evicted;   /* closed to make room for a newer connection */
};

/* key is copied. 0 or -errno. */
int pl__tcp_auth_open(struct pl_tcp_auth **out, struct pl_loop *loop,
		      const struct pl_link_key *key, pl__tcp_auth_admit_cb admit, void *ctx);
/* Take a just-accepted connection (fd is owned from here) and challenge it. */
void pl__tcp_auth_start(struct pl_tcp_auth *a, int fd, const char *who);
void pl__tcp_auth_get_totals(const struct pl_tcp_auth *a, struct pl_tcp_auth_totals *out);
/* Closes the pending connections and wipes the key. NULL is fine. */
void pl__tcp_auth_close(struct pl_tcp_auth *a);

#endif
