/* The device's side of the TCP link's authentication (common/auth/
 * link_auth.h, docs/wire.md "TCP authentication" and "TLS"): connections
 * that have not proved they hold the key yet.
 *
 * With TLS, a new connection first makes its TLS handshake; then (at once
 * without TLS) it gets the challenge. From its accept it has
 * PL_AUTH_TIMEOUT_MS for all of it: garbage instead of a ClientHello ends
 * it at once, a handshake that stalls ends at the deadline. Until it has
 * answered, it is nobody: it displaces no host, receives no frame and none
 * of its bytes reach the link. At most
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
#include "link_conn.h"
#include "link_tls.h"

#define PL_TCP_AUTH_PENDING 4

struct pl_tcp_auth;

/* conn is the caller's from now on (non-blocking); who is its address. */
typedef void (*pl__tcp_auth_admit_cb)(void *ctx, struct pl_link_conn *conn, const char *who);

struct pl_tcp_auth_totals {
	uint64_t passed;    /* proved the key */
	uint64_t failed;    /* answered with a wrong MAC or no magic */
	uint64_t timed_out; /* did not answer in time, or closed first */
	uint64_t evicted;   /* closed to make room for a newer connection */
	uint64_t tls_failed; /* its TLS handshake failed (not TLS, a wrong version...) */
};

/* key is copied; tls (NULL: none) stays the caller's, and must outlive a.
 * 0 or -errno. */
int pl__tcp_auth_open(struct pl_tcp_auth **out, struct pl_loop *loop,
		      const struct pl_link_key *key, struct pl_tls_server *tls,
		      pl__tcp_auth_admit_cb admit, void *ctx);
/* Take a just-accepted connection (fd is owned from here) and challenge it. */
void pl__tcp_auth_start(struct pl_tcp_auth *a, int fd, const char *who);
void pl__tcp_auth_get_totals(const struct pl_tcp_auth *a, struct pl_tcp_auth_totals *out);
/* Closes the pending connections and wipes the key. NULL is fine. */
void pl__tcp_auth_close(struct pl_tcp_auth *a);

#endif
