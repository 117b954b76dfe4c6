/* The D scan's read of a process's stat and io fields (dstate_fields.h)
 * against the kernel's own /proc files, on live processes: each field the
 * tracer takes from the scan's run must be what /proc/PID/stat and
 * /proc/PID/io say of the same process, and a process whose files the
 * record cannot say (more than one thread, a kernel thread, none) must be
 * left to /proc.
 *
 * The process compared sleeps in a pipe read, so that nothing moves between
 * the run and the reads of its files. Before it sleeps it has written and
 * read a file, and it has reaped a child that wrote one: /proc/PID/io counts
 * a reaped child's io in the parent's (its signal's), which the record must
 * add as /proc does. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dstate_scan.h"
#include "pid_state.h"
#include "procfile.h"
#include "tap.h"

static bool read_proc(int pid, const char *name, struct pl_procfile *pf)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "/proc/%d/%s", pid, name);
	return pl__procfile_read_once(pf, AT_FDCWD, rel) > 0;
}

static void write_file(const char *path, size_t bytes)
{
	static char block[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	for (size_t done = 0; fd >= 0 && done < bytes; done += sizeof(block)) {
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			_exit(1);
	}
	if (fd < 0 || close(fd) < 0)
		_exit(1);
}

/* A child that runs body, tells the parent it is done, and sleeps in a
 * pipe read until the parent closes *hold. */
static int start_child(void (*body)(const char *), const char *arg, int *hold)
{
	int p[2], ack[2], pid;
	char c = 'c';

	if (pipe(p) || pipe(ack))
		exit(99);
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		close(ack[0]);
		body(arg);
		if (write(ack[1], &c, 1) != 1)
			_exit(1);
		while (read(p[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(p[0]);
	close(ack[1]);
	if (pid < 0 || read(ack[0], &c, 1) != 1)
		exit(99);
	close(ack[0]);
	*hold = p[1];
	return pid;
}

/* Writes 64 KiB, reads them back, reaps a child that wrote 32 KiB. */
static void write_read_reap(const char *dir)
{
	char path[128], kid_path[128], buf[4096];
	int fd, kid;

	snprintf(path, sizeof(path), "%s/fields", dir);
	snprintf(kid_path, sizeof(kid_path), "%s/fields-kid", dir);
	prctl(PR_SET_NAME, "pl-fields", 0, 0, 0);
	write_file(path, 65536);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	kid = fork();
	if (kid == 0) {
		write_file(kid_path, 32768);
		_exit(0);
	}
	if (kid < 0 || waitpid(kid, NULL, 0) != kid)
		_exit(1);
}

static void *park(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* A second thread, asleep. */
static void start_thread(const char *unused)
{
	pthread_t t;

	(void)unused;
	if (pthread_create(&t, NULL, park, NULL) != 0)
		_exit(1);
}

int main(void)
{
	char dir[] = "pl-test-fields.XXXXXX", path[160];
	struct pl_procfile pf = PL_PROCFILE_INIT;
	struct pl_dscan_ran ran[4];
	struct pl_pid_stat st;
	struct pl_pid_io io;
	struct pl_dscan d;
	int pids[4], out[8], hold_s, hold_t, sleeper, threaded, err;
	bool overflow, walked, stat_ok, io_ok;

	if (getenv("MESON_EXE_WRAPPER") && *getenv("MESON_EXE_WRAPPER")) {
		TAP_SKIP("under an emulator: no BPF");
		return tap_done();
	}
	err = pl__dscan_open(&d);
	/* the program outgrowing its room is a bug, not a system without BPF */
	TAP_OK(err != -E2BIG, "the scan's program fits the room it is assembled in");
	if (err < 0 || !d.ran_check) {
		printf("# no D scan with its run-time read here: %s\n",
		       err < 0 ? strerror(-err) : "no gate");
		TAP_SKIP("no D scan on this system (not root, no BPF, a kernel before 6.7)");
		if (err == 0)
			pl__dscan_close(&d);
		return tap_done();
	}
	if (!d.fields) {
		TAP_SKIP("the scan reads no stat fields on this kernel (a field missing from its "
			 "BTF, or its self-check against /proc/self/stat differed)");
		pl__dscan_close(&d);
		return tap_done();
	}
	if (!mkdtemp(dir))
		return 99;
	sleeper = start_child(write_read_reap, dir, &hold_s);
	threaded = start_child(start_thread, NULL, &hold_t);
	while (state_of(sleeper) != 'S' || !off_runqueue(sleeper) || state_of(threaded) != 'S')
		usleep(1000);
	pids[0] = sleeper;
	pids[1] = threaded;
	pids[2] = 2; /* kthreadd */
	pids[3] = 0x3ffffff0; /* above any pid_max: no such process */
	for (int i = 0; i < 4; i++)
		ran[i].run_ns = ran[i].pcount = UINT64_MAX; /* read them whatever ran */
	if (pl__dscan_read(&d, NULL, 0, pids, 4, ran, out, 8, &overflow, &walked) < 0)
		return 99;

	stat_ok = read_proc(sleeper, "stat", &pf) && pl__parse_pid_stat(pf.buf, &st) == 0;
	TAP_OK(ran[0].ok && ran[0].fields && stat_ok, "a single-threaded sleeper's record is whole");
	TAP_OK(stat_ok && strcmp(ran[0].st.comm, st.comm) == 0 && ran[0].st.state == st.state &&
		       st.state == 'S' && ran[0].st.ppid == st.ppid && st.ppid == (int)getpid() &&
		       ran[0].st.num_threads == st.num_threads && ran[0].st.pid == st.pid,
	       "its comm (%s), state (%c), ppid and thread count are stat's (%s, %c)",
	       ran[0].st.comm, ran[0].st.state, stat_ok ? st.comm : "?", stat_ok ? st.state : '?');
	TAP_OK(stat_ok && ran[0].st.starttime_ticks == st.starttime_ticks &&
		       ran[0].st.has_blkio == st.has_blkio && ran[0].st.blkio_ticks == st.blkio_ticks,
	       "its start time (%llu) and block-I/O delay (%llu) are stat's (%llu, %llu)",
	       (unsigned long long)ran[0].st.starttime_ticks,
	       (unsigned long long)ran[0].st.blkio_ticks,
	       stat_ok ? (unsigned long long)st.starttime_ticks : 0ULL,
	       stat_ok ? (unsigned long long)st.blkio_ticks : 0ULL);
	io_ok = read_proc(sleeper, "io", &pf) && pl__parse_pid_io(pf.buf, &io) == 0;
	TAP_OK(io_ok && ran[0].io.wchar == io.wchar && ran[0].io.rchar == io.rchar &&
		       ran[0].io.syscr == io.syscr && ran[0].io.syscw == io.syscw &&
		       ran[0].io.read_bytes == io.read_bytes &&
		       ran[0].io.write_bytes == io.write_bytes &&
		       ran[0].io.cancelled_write_bytes == io.cancelled_write_bytes &&
		       ran[0].io.have == io.have,
	       "its io is /proc's, its reaped child's included: wchar %llu (%llu), write_bytes "
	       "%llu (%llu)",
	       (unsigned long long)ran[0].io.wchar, io_ok ? (unsigned long long)io.wchar : 0ULL,
	       (unsigned long long)ran[0].io.write_bytes,
	       io_ok ? (unsigned long long)io.write_bytes : 0ULL);
	TAP_OK(io_ok && io.wchar >= 65536 + 32768,
	       "which holds its own writes and its child's (%llu bytes written)",
	       io_ok ? (unsigned long long)io.wchar : 0ULL);
	TAP_OK(ran[1].ok && !ran[1].fields,
	       "a process with two threads has its run time read, and its fields left to /proc");
	TAP_OK(ran[2].ok && !ran[2].fields, "so has a kernel thread (kthreadd)");
	TAP_OK(!ran[3].ok && !ran[3].fields, "a pid no process has: nothing");

	/* asked again with what the run read: the sleeper has not run since,
	 * so its fields are not read, and the caller keeps what it knows */
	if (pl__dscan_read(&d, NULL, 0, pids, 1, ran, out, 8, &overflow, &walked) < 0)
		return 99;
	TAP_OK(ran[0].ok && !ran[0].fields,
	       "given its own run time and pcount back, a sleeper's fields are not read again");
	close(hold_s);
	close(hold_t);
	waitpid(sleeper, NULL, 0);
	waitpid(threaded, NULL, 0);
	snprintf(path, sizeof(path), "%s/fields", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/fields-kid", dir);
	unlink(path);
	rmdir(dir);
	pl__procfile_free(&pf);
	pl__dscan_close(&d);
	return tap_done();
}
