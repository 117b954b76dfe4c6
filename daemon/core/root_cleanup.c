/* See root_cleanup.h. */
#include "root_cleanup.h"
#include "log.h"
#include "options.h" /* PL_ERRBUF */
#include "privilege_drop.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#define MAX_KEPT 16

static int compare_fds(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Close [lo, hi]: one close_range where the kernel has it (5.9), else each
 * number up to the descriptor limit. */
static void close_stretch(unsigned lo, unsigned hi)
{
	struct rlimit rl;
	unsigned fd, end;

	if (lo > hi)
		return;
#ifdef SYS_close_range
	if (syscall(SYS_close_range, lo, hi, 0) == 0)
		return;
#endif
	end = hi;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur <= end)
		end = rl.rlim_cur ? (unsigned)rl.rlim_cur - 1 : 0;
	for (fd = lo; fd <= end && fd >= lo; fd++)
		close((int)fd);
}

/* Every descriptor but the KEPT ones (KEPT is sorted in place). */
static void close_all_but(int *kept, size_t n)
{
	unsigned next = 0;

	qsort(kept, n, sizeof(*kept), compare_fds);
	for (size_t i = 0; i < n; i++) {
		if (kept[i] < 0 || (unsigned)kept[i] < next)
			continue;
		if ((unsigned)kept[i] > next)
			close_stretch(next, (unsigned)kept[i] - 1);
		next = (unsigned)kept[i] + 1;
	}
	close_stretch(next, ~0u);
}

static void ignore_stop_signals(void)
{
	static const int ignored[] = { SIGTERM, SIGINT, SIGHUP, SIGPIPE };
	struct sigaction sa = { .sa_handler = SIG_IGN };
	sigset_t none;

	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		sigaction(ignored[i], &sa, NULL);
	/* perflinkd blocks the signals its loop reads from a signalfd */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Until perflinkd's end of the pipe is gone. Bytes are not requests. */
static void wait_for_exit(int fd)
{
	char buf[256];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n == 0 || (n < 0 && errno != EINTR))
			return;
	}
}

static _Noreturn void cleanup_process(const struct pl_root_cleanup *c, int exit_fd,
				      int ready_fd)
{
	struct pl_privilege_user root = { .spec = "root", .uid = 0, .gid = 0 };
	int kept[MAX_KEPT + 3];
	size_t n = 0;
	char err[PL_ERRBUF];
	bool to_stderr = pl__log_to_stderr();

	ignore_stop_signals();
	prctl(PR_SET_NAME, c->name, 0, 0, 0);
	/* syslog's socket goes with the rest; opened again under this name */
	closelog();
	kept[n++] = STDERR_FILENO;
	kept[n++] = exit_fd;
	kept[n++] = ready_fd;
	for (size_t i = 0; i < c->n_keep_fds; i++)
		kept[n++] = c->keep_fds[i];
	close_all_but(kept, n);
	pl__log_init(c->name, to_stderr, 0);
	/* uid 0 with no supplementary group and only what run() needs */
	if (pl__privilege_drop(&root, c->capabilities, err, sizeof(err)) < 0) {
		pl__log_warnx("cannot narrow its privileges: %s", err);
		_exit(1);
	}
	if (write(ready_fd, "", 1) != 1)
		_exit(1);
	close(ready_fd);
	wait_for_exit(exit_fd);
	c->run(c->ctx);
	_exit(0);
}

int pl__root_cleanup_start(const struct pl_root_cleanup *c, pid_t *pid, int *pipe_fd)
{
	int exit_pipe[2], ready_pipe[2], err;
	char byte;
	ssize_t n;
	pid_t child;

	if (c->n_keep_fds > MAX_KEPT)
		return -EINVAL;
	if (pipe2(exit_pipe, O_CLOEXEC) < 0) {
		err = -errno;
		pl__log_warnc(err, "root cleanup: pipe");
		return err;
	}
	if (pipe2(ready_pipe, O_CLOEXEC) < 0) {
		err = -errno;
		pl__log_warnc(err, "root cleanup: pipe");
		close(exit_pipe[0]);
		close(exit_pipe[1]);
		return err;
	}
	child = fork();
	if (child < 0) {
		err = -errno;
		pl__log_warnc(err, "root cleanup: fork");
		close(exit_pipe[0]);
		close(exit_pipe[1]);
		close(ready_pipe[0]);
		close(ready_pipe[1]);
		return err;
	}
	if (child == 0)
		cleanup_process(c, exit_pipe[0], ready_pipe[1]);
	close(exit_pipe[0]);
	close(ready_pipe[1]);
	/* It says it is ready once its privileges are narrowed: a cleanup
	 * process that could not do that is not left running as full root. */
	do
		n = read(ready_pipe[0], &byte, 1);
	while (n < 0 && errno == EINTR);
	close(ready_pipe[0]);
	if (n != 1) {
		close(exit_pipe[1]);
		while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
			;
		pl__log_warnx("root cleanup: the cleanup process did not start (its message "
			      "above says why)");
		return -EPERM;
	}
	*pid = child;
	*pipe_fd = exit_pipe[1];
	return 0;
}
