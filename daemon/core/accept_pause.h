/* A listener's pause after accept failed for want of descriptors or memory
 * (pl__accept_must_pause): the listening socket stays readable then, and
 * watching it would spin the loop and log on every turn. The listener stops
 * watching it for PL_ACCEPT_PAUSE_NS, says so (rate-limited), and its sweep
 * timer watches it again once the pause is over. The control socket and the
 * collector's producer socket share this. */
#ifndef PL_DAEMON_ACCEPT_PAUSE_H
#define PL_DAEMON_ACCEPT_PAUSE_H

#include "event_loop.h"
#include "log.h"

#include <stdbool.h>
#include <stdint.h>

struct pl_accept_pause {
	uint64_t until_ns; /* 0: not paused */
	uint64_t pauses;   /* how many there were */
};

/* accept on the socket watched by w failed with err (an errno). When that
 * calls for a pause, stop watching, log "WHO: accept: ...; pausing" through
 * rl and return true; otherwise (a peer that left, a signal) false. */
bool pl__accept_pause_begin(struct pl_accept_pause *p, struct pl_loop_watch *w, int err,
			    const char *who, struct pl__ratelimit *rl);
/* From the listener's sweep: watch again once the pause is over. */
void pl__accept_pause_check(struct pl_accept_pause *p, struct pl_loop_watch *w, uint64_t now_ns);

#endif
