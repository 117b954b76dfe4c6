/* The part of perflinkd that stays root when it runs as its own user: it
 * undoes, once perflinkd has exited, what only root may undo, and nothing
 * else (perflinkd.c names the tasks: removing the gadget it made, turning
 * kernel.task_delayacct back off).
 *
 * OpenSSH-style privilege separation, reduced to its smallest: started as
 * root, just before the drop, perflinkd forks this process. It closes every
 * descriptor but a pipe whose other end only perflinkd holds, stderr and the
 * ones its tasks need (opened before the fork), keeps uid 0 with only the
 * capabilities its tasks need, sets no_new_privs, and waits for the end of
 * that pipe. It takes no requests: the pipe carries nothing, and whatever is
 * written to it is read and ignored, so perflinkd, once it is an unprivileged
 * process someone may have taken over, can at most make it clean up early.
 * The end comes however perflinkd ends (a stop, a crash, SIGKILL), because
 * the kernel closes perflinkd's end of the pipe with its last descriptor.
 * SIGTERM, SIGINT and SIGHUP are ignored, so that a service manager that
 * stops the unit's whole group does not stop it before it has cleaned up. */
#ifndef PL_DAEMON_ROOT_CLEANUP_H
#define PL_DAEMON_ROOT_CLEANUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pl_root_cleanup {
	/* run in the cleanup process once perflinkd has exited, as root with
	 * the capabilities below; what it reads of memory is the fork's copy,
	 * as it was when pl__root_cleanup_start was called */
	void (*run)(void *ctx);
	void *ctx;
	/* descriptors run() uses, kept open across the fork (all others but
	 * stderr are closed there); the caller keeps its own copies */
	const int *keep_fds;
	size_t n_keep_fds;
	/* PL_CAP_BIT mask (privilege_drop.h) of what run() needs */
	uint64_t capabilities;
	/* the process's name in ps and in its log lines */
	const char *name;
};

/* Fork the cleanup process (pid in *pid). Call it as root, after everything
 * it is to undo was made and before the drop, while the process has one
 * thread. perflinkd keeps the pipe's end open (close-on-exec) for as long as
 * it runs: that end is returned in *pipe_fd, never to be written or closed
 * before exit. 0, or -errno (logged). */
int pl__root_cleanup_start(const struct pl_root_cleanup *c, pid_t *pid, int *pipe_fd);

#endif
