/* A target for the preload tests: issues real ioctls in known numbers,
 * with and without the shim. Commands run in order:
 *
 *   peek N             N x FIONREAD on a pipe holding 3 bytes
 *   null N             N x FIONREAD on /dev/null (fails: ENOTTY)
 *   wait N PERIOD_US   N blocking waits (seccomp listener), one event per period
 *   copy NA NB BYTES   UFFDIO_COPY of BYTES, NA times from one call site and
 *                      NB times from another
 *   eagain K           K partial UFFDIO_COPY calls (EAGAIN)
 *   eintr K            K waits interrupted by a signal (EINTR)
 *   threads T N        two waves of T threads, each doing N peeks
 *   fork N1 N2 N3      N1 peeks, fork: the child does N2 and exits, then N3
 *   exec N1 N2         N1 peeks, then exec itself to do N2 peeks
 *   closeall HOW N     close every fd from 3 up (HOW: 0 close_range, 1
 *                      closefrom, 2 a close loop, 3 the close_range system
 *                      call made raw, which no hook sees), open files, a pipe and
 *                      sockets of its own, N peeks, then check them intact
 *   sleep MS           sleep MS milliseconds (lets the shim's reporter
 *                      write what is due before the next command)
 *
 * Prints "pid P" first, "child P" for a fork. Exits 0 when every call gave
 * the result the kernel is known to give, 1 otherwise, 77 when the kernel
 * lacks what a command needs. Exported symbols (-rdynamic) let the shim
 * name the call sites. */
#include "real_ioctls.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SKIP 77

static int pipe_fds[2] = { -1, -1 };
static const char *self_path;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "workload: %s\n", what);
		exit(1);
	}
}

static unsigned num(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	check(*s && !*end && v <= 1000000000ul, "bad number");
	return (unsigned)v;
}

static void open_pipe(void)
{
	if (pipe_fds[0] >= 0)
		return;
	check(pipe(pipe_fds) == 0, "pipe");
	check(write(pipe_fds[1], "abc", 3) == 3, "write");
}

void peek(unsigned n);
void peek(unsigned n)
{
	unsigned i;
	int avail;

	open_pipe();
	for (i = 0; i < n; i++) {
		avail = -1;
		check(ioctl(pipe_fds[0], FIONREAD, &avail) == 0 && avail == 3,
		      "FIONREAD on a pipe");
	}
}

/* Close every descriptor above stderr as daemons and sandboxes do (how:
 * 0 close_range, 1 closefrom, 2 a close loop, 3 syscall(SYS_close_range),
 * as a program with its own system call wrappers or a seccomp helper
 * does: the shim's hooks never see it), then take the numbers back
 * with three socket pairs, six files and a pipe of its own, do n more peeks (the shim reports
 * meanwhile) and check that every byte of its files and its pipe is as it
 * wrote it, and that nothing came on its sockets: prints "files intact" or "FILES CORRUPTED". */
static void close_all_then_files(unsigned how, unsigned n)
{
	int files[6], p[2], socks[3][2];
	char name[64], got[64], want[64];
	unsigned i;
	bool intact = true;

	if (how == 0) {
#ifdef PL_HAVE_CLOSE_RANGE
		check(close_range(3u, ~0u, 0) == 0, "close_range");
#else
		how = 2;
#endif
	}
	if (how == 1) {
#ifdef PL_HAVE_CLOSEFROM
		closefrom(3);
#else
		how = 2;
#endif
	}
	if (how == 3) {
#ifdef SYS_close_range
		/* ENOSYS before 5.9: the loop below, through the hooks */
		if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
			how = 2;
#else
		how = 2;
#endif
	}
	if (how == 2)
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	pipe_fds[0] = pipe_fds[1] = -1;
	/* sockets first, on the lowest numbers, where the shim's own socket
	 * was: a shim that sent to its old number would write into one */
	for (i = 0; i < 3; i++)
		check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, socks[i]) == 0,
		      "socketpair");
	for (i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "/tmp/pl-workload-%d-%u", (int)getpid(), i);
		files[i] = open(name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		check(files[i] >= 0, "open a data file");
		unlink(name);
		snprintf(want, sizeof(want), "data file %u of process %d\n", i, (int)getpid());
		check(write(files[i], want, strlen(want)) == (ssize_t)strlen(want), "write");
	}
	check(pipe2(p, O_CLOEXEC) == 0, "pipe2");
	check(write(p[1], "pipe data", 9) == 9, "write the pipe");
	peek(n);
	for (i = 0; i < 6; i++) {
		ssize_t r = pread(files[i], got, sizeof(got) - 1, 0);

		snprintf(want, sizeof(want), "data file %u of process %d\n", i, (int)getpid());
		got[r > 0 ? r : 0] = '\0';
		intact &= r == (ssize_t)strlen(want) && !strcmp(got, want);
		intact &= close(files[i]) == 0;
	}
	intact &= read(p[0], got, sizeof(got)) == 9 && !memcmp(got, "pipe data", 9);
	close(p[0]);
	close(p[1]);
	for (i = 0; i < 3; i++) /* nobody wrote into them */
		for (int e = 0; e < 2; e++)
			intact &= recv(socks[i][e], got, sizeof(got), MSG_DONTWAIT) < 0 &&
				  errno == EAGAIN;
	for (i = 0; i < 3; i++)
		intact &= close(socks[i][0]) == 0 && close(socks[i][1]) == 0;
	printf("%s\n", intact ? "files intact" : "FILES CORRUPTED");
}

static void null_peek(unsigned n)
{
	int fd = open("/dev/null", O_RDONLY), avail, r;
	unsigned i;

	check(fd >= 0, "open /dev/null");
	for (i = 0; i < n; i++) {
		r = ioctl(fd, FIONREAD, &avail);
		check(r == -1 && errno == ENOTTY, "FIONREAD on /dev/null is ENOTTY");
	}
	close(fd);
}

static void wait_events(unsigned n, unsigned period_us)
{
	struct rt_events e;
	unsigned i;
	int r = rt_events_start(&e, n, period_us);

	if (r < 0) {
		fprintf(stderr, "workload: no seccomp listener: %s\n", strerror(-r));
		exit(SKIP);
	}
	for (i = 0; i < n; i++)
		check(rt_events_wait(&e) == 0, "a wait");
	rt_events_stop(&e);
}

static struct rt_copy copier;

static void open_copier(size_t bytes)
{
	int r;

	if (copier.len == bytes)
		return;
	if (copier.len)
		rt_copy_close(&copier);
	r = rt_copy_open(&copier, bytes);
	if (r < 0) {
		fprintf(stderr, "workload: no userfaultfd: %s\n", strerror(-r));
		exit(SKIP);
	}
}

void copy_site_a(void);
__attribute__((noinline)) void copy_site_a(void)
{
	struct uffdio_copy arg;

	rt_copy_reset(&copier);
	rt_copy_arg(&copier, &arg);
	check(ioctl(copier.uffd, RT_REQ(UFFDIO_COPY), &arg) == 0 && arg.copy == (int64_t)copier.len,
	      "UFFDIO_COPY (a)");
}

void copy_site_b(void);
__attribute__((noinline)) void copy_site_b(void)
{
	struct uffdio_copy arg;

	rt_copy_reset(&copier);
	rt_copy_arg(&copier, &arg);
	check(ioctl(copier.uffd, RT_REQ(UFFDIO_COPY), &arg) == 0 && arg.copy == (int64_t)copier.len,
	      "UFFDIO_COPY (b)");
}

void copy_partial(void);
__attribute__((noinline)) void copy_partial(void)
{
	struct uffdio_copy arg;
	int r;

	rt_copy_arg_partial(&copier, &arg);
	r = ioctl(copier.uffd, RT_REQ(UFFDIO_COPY), &arg);
	check(r == -1 && errno == EAGAIN, "a partial UFFDIO_COPY is EAGAIN");
}

/* eintr: the waiter blocks with no event coming; signals go to it until
 * its wait returns. */
static pthread_t waiter;

static void on_signal(int sig)
{
	(void)sig;
}

struct eintr_round {
	struct rt_events *e;
	int result;
	int done;
};

static void *signaller_main(void *arg)
{
	struct eintr_round *round = arg;
	struct timespec ms = { 0, 1000000 };

	while (!__atomic_load_n(&round->done, __ATOMIC_ACQUIRE)) {
		pthread_kill(waiter, SIGUSR1);
		nanosleep(&ms, NULL);
	}
	return NULL;
}

static void eintr(unsigned k)
{
	struct sigaction sa;
	struct rt_events e;
	unsigned i;
	int r = rt_events_start(&e, 1, 0);

	if (r < 0) {
		fprintf(stderr, "workload: no seccomp listener: %s\n", strerror(-r));
		exit(SKIP);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: the wait must return */
	sigaction(SIGUSR1, &sa, NULL);
	waiter = pthread_self();
	for (i = 0; i < k; i++) {
		struct eintr_round round = { &e, 0, 0 };
		pthread_t sig;

		check(pthread_create(&sig, NULL, signaller_main, &round) == 0, "pthread_create");
		round.result = rt_events_wait(&e);
		__atomic_store_n(&round.done, 1, __ATOMIC_RELEASE);
		pthread_join(sig, NULL);
		check(round.result == -EINTR, "a signal interrupts the wait with EINTR");
	}
	rt_events_stop(&e);
	signal(SIGUSR1, SIG_DFL);
}

static void *peeker_main(void *arg)
{
	peek(*(unsigned *)arg);
	return NULL;
}

static void threads(unsigned t, unsigned n)
{
	pthread_t tid[64];
	unsigned wave, i;

	check(t <= 64, "at most 64 threads");
	open_pipe();
	for (wave = 0; wave < 2; wave++) {
		for (i = 0; i < t; i++)
			check(pthread_create(&tid[i], NULL, peeker_main, &n) == 0,
			      "pthread_create");
		for (i = 0; i < t; i++)
			pthread_join(tid[i], NULL);
	}
}

static void fork_peek(unsigned n1, unsigned n2, unsigned n3)
{
	pid_t child;
	int status;

	peek(n1);
	fflush(stdout);
	child = fork();
	check(child >= 0, "fork");
	if (child == 0) {
		printf("child %d\n", (int)getpid());
		peek(n2);
		fflush(stdout);
		exit(0); /* exit, not _exit: a report that is due gets written */
	}
	check(waitpid(child, &status, 0) == child && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0,
	      "the child succeeded");
	peek(n3);
}

static void exec_peek(unsigned n1, const char *n2)
{
	char *argv[] = { (char *)"workload", (char *)"peek", (char *)n2, NULL };

	peek(n1);
	fflush(stdout);
	execv(self_path, argv);
	check(0, "execv");
}

int main(int argc, char **argv)
{
	int i = 1;

	self_path = "/proc/self/exe";
	printf("pid %d\n", (int)getpid());
	while (i < argc) {
		const char *cmd = argv[i];
		int left = argc - i - 1;

		if (strcmp(cmd, "peek") == 0 && left >= 1) {
			peek(num(argv[i + 1]));
			i += 2;
		} else if (strcmp(cmd, "null") == 0 && left >= 1) {
			null_peek(num(argv[i + 1]));
			i += 2;
		} else if (strcmp(cmd, "wait") == 0 && left >= 2) {
			check(num(argv[i + 2]) > 0, "wait: the period is at least 1 us");
			wait_events(num(argv[i + 1]), num(argv[i + 2]));
			i += 3;
		} else if (strcmp(cmd, "copy") == 0 && left >= 3) {
			unsigned a = num(argv[i + 1]), b = num(argv[i + 2]), k;

			open_copier(num(argv[i + 3]));
			for (k = 0; k < a; k++)
				copy_site_a();
			for (k = 0; k < b; k++)
				copy_site_b();
			i += 4;
		} else if (strcmp(cmd, "eagain") == 0 && left >= 1) {
			unsigned k, n = num(argv[i + 1]);

			open_copier(copier.len ? copier.len : 1 << 20);
			for (k = 0; k < n; k++)
				copy_partial();
			i += 2;
		} else if (strcmp(cmd, "closeall") == 0 && left >= 2) {
			close_all_then_files(num(argv[i + 1]), num(argv[i + 2]));
			i += 3;
		} else if (strcmp(cmd, "sleep") == 0 && left >= 1) {
			struct timespec ts = { num(argv[i + 1]) / 1000,
					       (long)(num(argv[i + 1]) % 1000) * 1000000 };

			while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
				;
			i += 2;
		} else if (strcmp(cmd, "eintr") == 0 && left >= 1) {
			eintr(num(argv[i + 1]));
			i += 2;
		} else if (strcmp(cmd, "threads") == 0 && left >= 2) {
			threads(num(argv[i + 1]), num(argv[i + 2]));
			i += 3;
		} else if (strcmp(cmd, "fork") == 0 && left >= 3) {
			fork_peek(num(argv[i + 1]), num(argv[i + 2]), num(argv[i + 3]));
			i += 4;
		} else if (strcmp(cmd, "exec") == 0 && left >= 2) {
			num(argv[i + 2]);
			exec_peek(num(argv[i + 1]), argv[i + 2]);
			i += 3;
		} else {
			fprintf(stderr, "workload: bad command at '%s'\n", cmd);
			return 2;
		}
	}
	return 0;
}
