/* A pid file that is also a lock: for init scripts that cannot make one
 * themselves (a busybox without start-stop-daemon). The file stays open and
 * flock-ed while perflinkd runs, so a second perflinkd with the same pid file
 * refuses to start, and a file left by a crash is simply taken over. */
#ifndef PL_DAEMON_PIDFILE_H
#define PL_DAEMON_PIDFILE_H

#include <stddef.h>

struct pl_pidfile {
	int fd; /* -1: none */
	char *path;
};

#define PL_PIDFILE_INIT { -1, NULL }

/* Create or take over path and write our pid. -EAGAIN when another process
 * holds it, other -errno; either way the reason (with that pid) is logged. */
int pl__pidfile_open(struct pl_pidfile *pf, const char *path);
/* Unlink and close. Safe on a pidfile that was never opened. */
void pl__pidfile_remove(struct pl_pidfile *pf);

#endif
