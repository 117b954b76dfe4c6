/* The root cleanup process (daemon/core/root_cleanup.h), on this machine:
 * a stand-in for perflinkd starts it, as perflinkd does before its drop,
 * and is then killed with SIGKILL. The cleanup process must narrow itself
 * to uid 0 with only the capability asked for and no_new_privs, keep no
 * descriptor but stderr, its pipe and the one it was given, ignore SIGTERM
 * and bytes written to its pipe, and run its task once, only after the
 * stand-in is gone. Needs root (skipped otherwise). */
#include "privilege_drop.h"
#include "root_cleanup.h"
#include "tap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STRAY_FD 100 /* a descriptor of the stand-in's that must not be kept */

static char marker[256];

/* The task: what it can see of itself, into the marker file, through the
 * descriptor it was given. */
static void task(void *ctx)
{
	int fd = *(int *)ctx;

	dprintf(fd, "ran as uid %u euid %u\n", (unsigned)getuid(), (unsigned)geteuid());
	close(fd);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Running or sleeping: there, and not a zombie. */
static bool alive(pid_t pid)
{
	char path[64], buf[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* the state follows the last ')': the name may hold one */
	return strrchr(buf, ')') && strrchr(buf, ')')[1] == ' ' && strrchr(buf, ')')[2] != 'Z';
}

static int count_fds(pid_t pid, int *has_stray, int *has_kept, int kept)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if (!(d = opendir(path)))
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		n++;
		if (atoi(e->d_name) == STRAY_FD)
			*has_stray = 1;
		if (atoi(e->d_name) == kept)
			*has_kept = 1;
	}
	closedir(d);
	return n;
}

static int status_field(pid_t pid, const char *name, char *out, size_t len)
{
	char path[64], line[256];
	size_t n = strlen(name);
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, name, n) == 0 && line[n] == ':') {
			char *v = line + n + 1;

			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			snprintf(out, len, "%s", v);
			found = 1;
			break;
		}
	fclose(f);
	return found;
}

/* The stand-in for perflinkd: starts the cleanup process, tells the test
 * its pid, writes bytes into the pipe (not requests), and waits to be
 * killed. */
static _Noreturn void stand_in(int report_fd, int marker_fd)
{
	struct pl_root_cleanup c = {
		.run = task,
		.ctx = &marker_fd,
		.keep_fds = &marker_fd,
		.n_keep_fds = 1,
		.capabilities = PL_CAP_BIT(CAP_SYS_ADMIN),
		.name = "pl-test-root",
	};
	pid_t pid = 0;
	int pipe_fd = -1;

	if (dup2(STDIN_FILENO, STRAY_FD) < 0 || pl__root_cleanup_start(&c, &pid, &pipe_fd) < 0)
		_exit(1);
	close(marker_fd); /* the cleanup process has its own */
	if (write(report_fd, &pid, sizeof(pid)) != sizeof(pid))
		_exit(1);
	if (write(pipe_fd, "clean up now", 12) != 12)
		_exit(1);
	for (;;)
		pause();
}

int main(void)
{
	char val[128], buf[128] = "";
	int report[2], has_stray = 0, has_kept = 0, marker_fd, n, status;
	pid_t standin, cleanup = 0;
	bool reaped;
	ssize_t got;

	if (geteuid() != 0) {
		printf("1..0 # SKIP the root cleanup process is started by root\n");
		return 0;
	}
	snprintf(marker, sizeof(marker), "/tmp/pl-root-cleanup-%d", (int)getpid());
	unlink(marker);
	/* orphans come back to the test, which can wait for them */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	if (pipe(report) < 0 ||
	    (marker_fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
		return 1;
	/* the file exists from here on; the task fills it */
	if ((standin = fork()) == 0) {
		close(report[0]);
		stand_in(report[1], marker_fd);
	}
	close(report[1]);
	close(marker_fd);
	got = read(report[0], &cleanup, sizeof(cleanup));
	TAP_OK(got == (ssize_t)sizeof(cleanup) && cleanup > 0, "the cleanup process started (%d)",
	       (int)cleanup);
	if (got != (ssize_t)sizeof(cleanup))
		return tap_done();
	sleep_ms(100);

	TAP_OK(status_field(cleanup, "Name", val, sizeof(val)) && strcmp(val, "pl-test-root") == 0,
	       "it is named as asked: %s", val);
	TAP_OK(status_field(cleanup, "Uid", val, sizeof(val)) && strcmp(val, "0\t0\t0\t0") == 0,
	       "uid 0, every id");
	TAP_OK(status_field(cleanup, "CapEff", val, sizeof(val)) &&
		       strcmp(val, "0000000000200000") == 0,
	       "CapEff is CAP_SYS_ADMIN alone: %s", val);
	TAP_OK(status_field(cleanup, "CapPrm", val, sizeof(val)) &&
		       strcmp(val, "0000000000200000") == 0,
	       "so is CapPrm: %s", val);
	TAP_OK(status_field(cleanup, "CapBnd", val, sizeof(val)) &&
		       strcmp(val, "0000000000200000") == 0,
	       "and CapBnd: %s", val);
	TAP_OK(status_field(cleanup, "NoNewPrivs", val, sizeof(val)) && strcmp(val, "1") == 0,
	       "no_new_privs");
	n = count_fds(cleanup, &has_stray, &has_kept, marker_fd);
	TAP_OK(!has_stray, "the stand-in's other descriptor (%d) is not kept", STRAY_FD);
	TAP_OK(has_kept, "the one given for the task (%d) is", marker_fd);
	TAP_OK(n == 3, "three descriptors: stderr, its pipe and the one given (%d)", n);

	kill(cleanup, SIGTERM);
	sleep_ms(200);
	/* the stand-in's child still: alive unless it shows as a zombie */
	TAP_OK(status_field(cleanup, "State", val, sizeof(val)) && val[0] != 'Z',
	       "SIGTERM does not stop it (%s)", val);
	{
		struct stat st;

		TAP_OK(stat(marker, &st) == 0 && st.st_size == 0,
		       "bytes written to its pipe did not make it run its task");
	}

	kill(standin, SIGKILL);
	waitpid(standin, NULL, 0);
	/* reparented to the test (subreaper), which reaps it; under
	 * qemu-user the subreaper does not take, and init reaps it instead */
	status = -1;
	reaped = false;
	for (int i = 0; i < 100; i++) {
		pid_t w = waitpid(cleanup, &status, WNOHANG);

		if (w == cleanup)
			reaped = true;
		if (w == cleanup || (w < 0 && !alive(cleanup)))
			break;
		sleep_ms(100);
	}
	TAP_OK(!alive(cleanup), "after the stand-in's SIGKILL it exits");
	if (reaped)
		TAP_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "with 0");
	else
		printf("# reaped by init, not by the test (no subreaper under qemu-user): its "
		       "exit status is not seen here\n");
	{
		int fd = open(marker, O_RDONLY);

		got = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (got > 0)
			buf[got] = '\0';
		if (fd >= 0)
			close(fd);
	}
	TAP_OK(strcmp(buf, "ran as uid 0 euid 0\n") == 0, "its task ran once, as root: %s", buf);
	unlink(marker);
	return tap_done();
}
