/* The live stall's processes and their ledgers (stall_actors.h). */
#include "stall_actors.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "live_run.h"
#include "proc_parse.h"
#include "read_file.h"

#define VICTIM_WRITE_BYTES 8192 /* two pages: every tick it writes in has a row */
#define VICTIM_PAUSE_MS 300
#define NAPPER_NULL_BYTES (1 << 20)
#define NAPPER_DISK_BYTES 4096
/* fdatasyncs back to back in a disk phase: one that begins just before dd's
 * flush still waits in it */
#define NAPPER_BURST 4
#define NAPPER_VFORK_MS 300 /* three ticks of a tool at 10 Hz */

#define DONE_TIMEOUT_MS 20000 /* a last fdatasync under the stall can take seconds */

/* to_victim: "go"; from_actors: the victim's "ready" and "done", the
 * napper's "done". */
static int to_victim[2] = { -1, -1 }, from_actors[2] = { -1, -1 };

/* One byte from an actor, or -ETIMEDOUT: one that died holds no pipe end
 * the test could see close (its siblings inherited them). */
static int read_byte(char *c)
{
	struct pollfd pfd = { .fd = from_actors[0], .events = POLLIN };
	int n;

	while ((n = poll(&pfd, 1, DONE_TIMEOUT_MS)) < 0 && errno == EINTR)
		;
	return n == 1 && read(from_actors[0], c, 1) == 1 ? 0 : -ETIMEDOUT;
}

static double mono_s(void)
{
	return (double)pl__mono_ns() / 1e9;
}

/* The counters a tracer reads of this process, as it would read them. */
static int read_counters(struct actor_counters *c)
{
	char *io = test_read_file("/proc/self/io"), *st = test_read_file("/proc/self/stat");
	struct pl_pid_io pio;
	struct pl_pid_stat ps;
	int ok = io && st && pl__parse_pid_io(io, &pio) == 0 &&
		 pl__parse_pid_stat(st, &ps) == 0 && ps.has_blkio;

	free(io);
	free(st);
	if (!ok)
		return -EINVAL;
	c->mono = mono_s();
	c->wchar = pio.wchar;
	c->wbytes = pio.write_bytes;
	c->blkio_ticks = ps.blkio_ticks;
	return 0;
}

struct actors *actors_map(void)
{
	void *m = mmap(NULL, sizeof(struct actors), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return m == MAP_FAILED ? NULL : m;
}

static int open_in(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
}

static void victim_loop(struct actors *a, int fd)
{
	static char buf[VICTIM_WRITE_BYTES];
	unsigned n;

	memset(buf, 'v', sizeof(buf));
	for (n = 0; !a->stop; n++) {
		double t0 = mono_s();

		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || fdatasync(fd) != 0)
			break;
		if (n < VICTIM_WAITS_MAX) {
			a->victim_wait[n] = (struct actor_span){ t0, mono_s() };
			a->victim_waits = n + 1;
		}
		live_sleep_ms(VICTIM_PAUSE_MS);
	}
}

pid_t actors_victim(struct actors *a, const char *dir)
{
	char c;
	pid_t p;

	if (pipe(to_victim) != 0 || pipe(from_actors) != 0)
		return -1;
	if ((p = fork()) == 0) {
		int fd = open_in(dir, "victim.log");

		prctl(PR_SET_NAME, VICTIM_COMM, 0, 0, 0);
		/* Its one byte of wchar before any reading that counts. */
		if (fd < 0 || write(from_actors[1], "r", 1) != 1 ||
		    read(to_victim[0], &c, 1) != 1 || read_counters(&a->victim_begin) < 0)
			_exit(1);
		victim_loop(a, fd);
		if (read_counters(&a->victim_end) < 0)
			_exit(1);
		/* Its last byte: after the ledger's end, so it is in the tracers'
		 * last readings and not in victim_end (a rounding's worth). */
		if (write(from_actors[1], "d", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	if (p < 0 || read_byte(&c) < 0 || c != 'r')
		return -1;
	return p;
}

int actors_victim_go(void)
{
	return write(to_victim[1], "g", 1) == 1 ? 0 : -EPIPE;
}

int actors_wait_done(void)
{
	bool victim = false, napper = false;
	char c;

	while (!victim || !napper) {
		if (read_byte(&c) < 0)
			return -ETIMEDOUT;
		victim |= c == 'd';
		napper |= c == 'n';
	}
	return 0;
}

/* A D state of a set length, whatever the disk and the load: a vfork
 * parent waits in D until its child exits. The child only sleeps and exits,
 * on the parent's stack below this frame, which is all a vfork child may
 * do short of exec (exec would end the wait at once). */
static void vfork_wait(void)
{
	static const struct timespec ts = { 0, NAPPER_VFORK_MS * 1000000L };
	pid_t p = vfork();

	if (p == 0) {
		syscall(SYS_nanosleep, &ts, NULL);
		_exit(0);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
}

/* 4 kB written and synced a few times (block-I/O waits under the stall),
 * then a vfork wait. */
static int disk_phase(int fd)
{
	static char small[NAPPER_DISK_BYTES];

	memset(small, 'n', sizeof(small));
	for (int i = 0; i < NAPPER_BURST; i++) {
		if (write(fd, small, sizeof(small)) != (ssize_t)sizeof(small) || fdatasync(fd) != 0)
			return -1;
	}
	vfork_wait();
	return 0;
}

static void napper_loop(struct actors *a, int fd, int null_fd)
{
	static char big[NAPPER_NULL_BYTES];

	memset(big, 'n', sizeof(big));
	while (!a->stop && a->napper_phases < NAPPER_PHASES_MAX) {
		struct actor_phase *ph = &a->napper_phase[a->napper_phases];

		live_sleep_ms(500);
		if (write(null_fd, big, sizeof(big)) != (ssize_t)sizeof(big))
			return;
		live_sleep_ms(500);
		if (a->stop || read_counters(&ph->start) < 0 || disk_phase(fd) < 0 ||
		    read_counters(&ph->end) < 0)
			return;
		a->napper_phases++;
	}
}

pid_t actors_napper(struct actors *a, const char *dir)
{
	pid_t p = fork();

	if (p == 0) {
		int fd = open_in(dir, "napper.log"), null_fd = open("/dev/null", O_WRONLY);

		prctl(PR_SET_NAME, NAPPER_COMM, 0, 0, 0);
		if (fd >= 0 && null_fd >= 0)
			napper_loop(a, fd, null_fd);
		/* After its last phase: this byte's wchar is in no D row. */
		if (write(from_actors[1], "n", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	return p;
}

pid_t actors_bully(const char *dir, const char *err_path)
{
	char of[512];
	/* 3 GiB: with 1.5 the victim's longest wait stayed under 0.3 s in some
	 * runs of 40 s on a machine with a fast disk (24 GiB of memory) */
	char *argv[] = { "dd", "if=/dev/zero", of, "bs=1M", "count=3072", "conv=fdatasync", NULL };

	snprintf(of, sizeof(of), "of=%s/%s", dir, ACTORS_BULLY_FILE);
	return live_spawn(argv, err_path);
}

void actors_end(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}
