/* See accept_pause.h. */
#include "accept_pause.h"
#include "clock.h"
#include "unix_listen.h"

#include <string.h>
#include <sys/epoll.h>

bool pl__accept_pause_begin(struct pl_accept_pause *p, struct pl_loop_watch *w, int err,
			    const char *who, struct pl__ratelimit *rl)
{
	if (!pl__accept_must_pause(err))
		return false;
	pl__log_warnx_limited(rl, "%s: accept: %s; pausing for a second", who, strerror(err));
	if (pl__loop_mod_fd(w, 0) == 0) {
		p->until_ns = pl__mono_ns() + PL_ACCEPT_PAUSE_NS;
		p->pauses++;
	}
	return true;
}

void pl__accept_pause_check(struct pl_accept_pause *p, struct pl_loop_watch *w, uint64_t now_ns)
{
	if (p->until_ns && now_ns >= p->until_ns && pl__loop_mod_fd(w, EPOLLIN) == 0)
		p->until_ns = 0;
}
