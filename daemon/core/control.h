/* perflinkd's control socket: a unix stream socket where `perflink status`
 * asks what the daemon is doing.
 *
 * Protocol: the client sends one request line ("status\n"); the daemon
 * answers with one line holding one JSON object and closes. A failed request
 * gets {"error":"..."} instead. Requests longer than PL_CONTROL_REQUEST_MAX,
 * with bytes that are not printable ASCII, or unknown, are errors.
 *
 * Who may connect: root, the daemon's own uid, and members of the configured
 * group (by primary or supplementary group, or listed in the group file).
 * The socket file is mode 0660 and owned by that group, so the file system
 * says the same; others get one refusal line and are closed.
 *
 * A client never blocks the loop: sockets are non-blocking, buffers are
 * bounded, at most max_clients are served at once (more get "busy"), and a
 * client that has not finished within timeout_ms is dropped. */
#ifndef PL_DAEMON_CONTROL_H
#define PL_DAEMON_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "pl_config.h"

#define PL_CONTROL_SOCKET_DEFAULT PL_RUNSTATEDIR "/perflink/control"
#define PL_CONTROL_REQUEST_MAX 256 /* bytes, the newline included */
#define PL_CONTROL_CLIENTS_MAX 16
#define PL_CONTROL_TIMEOUT_MS 2000
/* An answer larger than this is an internal error, not something to queue. */
#define PL_CONTROL_ANSWER_MAX (4u << 20)

struct pl_loop;
struct pl_json;
struct pl_control;

/* Write the status object (one complete object) into j. 0 or -errno. */
typedef int (*pl__control_status_fn)(void *ctx, struct pl_json *j);

struct pl_control_config {
	const char *path;     /* NULL: PL_CONTROL_SOCKET_DEFAULT */
	const char *group;    /* a group name or number; NULL or "": none */
	unsigned max_clients; /* 0: PL_CONTROL_CLIENTS_MAX */
	unsigned timeout_ms;  /* 0: PL_CONTROL_TIMEOUT_MS */
	pl__control_status_fn status;
	void *status_ctx;
};

struct pl_control_stats {
	uint64_t served;   /* answered with status */
	uint64_t refused;  /* peer credentials not allowed */
	uint64_t errors;   /* malformed, oversized or unknown requests */
	uint64_t timeouts; /* dropped for being slow */
	uint64_t busy;     /* turned away at max_clients */
	unsigned clients;  /* connected now */
};

/* Create the socket's directory if missing (0755), bind (a stale socket left
 * by a dead daemon is replaced; a live one is -EADDRINUSE), set mode and
 * group, and start accepting on loop. 0, or -errno with the reason logged. */
int pl__control_open(struct pl_control **out, struct pl_loop *loop,
		     const struct pl_control_config *cfg);
void pl__control_get_stats(const struct pl_control *c, struct pl_control_stats *out);
/* Drop all clients, close and unlink the socket. NULL is fine. */
void pl__control_close(struct pl_control *c);

#endif
