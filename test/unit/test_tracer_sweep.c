/* The sweep's gating on the live /proc, where fds are kept and the sleeping
 * processes are not all read every tick (a recorded tree always reads them
 * all: test_tracer's test_cost_split). A child sleeps on a pipe and writes
 * when told; the system counters' hints are given by the test, so that each
 * case is decided by the rule and not by what the machine happens to do:
 * the sleeping ones are read as well only when a task may have blocked or
 * written and what the first pass read does not account for it. And new
 * processes are looked up by pid, not by listing /proc, when few appeared;
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pid_state.h"
#include "tap.h"
#include "procs_plan.h"
#include "tracer_priv.h"

static const char *const watch[] = { "no-such-comm-watched" };
static struct pl_tprocs tp;
static uint64_t tick;
static int child;

/* The next tick that is not the child's slice, so that only the rule under
 * test can make the sweep read it. */
static uint64_t next_tick(void)
{
	do
		tick++;
	while (tick % 10 == (unsigned)child % 10);
	return tick;
}

static int run(bool maybe_blocked, int64_t procs_blocked, int64_t dirtied)
{
	struct pl_tprocs_hint h = { maybe_blocked, procs_blocked, dirtied };

	return pl__tprocs_tick(&tp, next_tick(), 0, &h);
}

static uint64_t loadavg_last_pid(void)
{
	char buf[128];
	FILE *f = fopen("/proc/loadavg", "r");
	const char *sp;

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	sp = strrchr(buf, ' ');
	return sp ? strtoull(sp + 1, NULL, 10) : 0;
}

static struct pl_tproc *rec_of(int pid)
{
	for (size_t i = 0; i < tp.n; i++) {
		if (tp.v[i].pid == pid)
			return &tp.v[i];
	}
	return NULL;
}

static struct pl_tproc *child_rec(void)
{
	return rec_of(child);
}

static bool known(int pid)
{
	return rec_of(pid) != NULL;
}

static int thread_fds[2]; /* the child's: go (read end), ready (write end) */

/* Says its tid, then waits until the pipe closes. */
static void *thread_main(void *arg)
{
	pid_t tid = gettid();
	char c;

	if (write(thread_fds[1], &tid, sizeof(tid)) != (ssize_t)sizeof(tid))
		return NULL;
	return read(thread_fds[0], &c, 1) < 0 ? NULL : arg;
}

/* New processes are looked up by pid when loadavg's last pid moved by a few,
 * and the directory is listed when it jumped; a new thread is no process. */
static void test_probe(void)
{
	struct pl_tprocs_hint h = { false, 0, 0 };
	int go[2], ready[2], b;
	uint64_t scans, probes, lp;
	pthread_t th;
	pid_t tid = 0;

	if (pipe(go) || pipe(ready))
		exit(99);
	lp = loadavg_last_pid();
	TAP_OK(lp > 0 && pl__tprocs_tick(&tp, next_tick(), lp, &h) == 0, "a tick at last pid %llu",
	       (unsigned long long)lp);
	b = fork();
	if (b == 0) {
		close(go[1]);
		close(ready[0]);
		thread_fds[0] = go[0];
		thread_fds[1] = ready[1];
		if (pthread_create(&th, NULL, thread_main, NULL) != 0)
			_exit(1);
		pthread_join(th, NULL);
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	TAP_OK(b > 0 && read(ready[0], &tid, sizeof(tid)) == (ssize_t)sizeof(tid) && tid > b,
	       "a new process with a second thread (%d)", (int)tid);
	scans = tp.dir_scans;
	probes = tp.probes;
	lp = loadavg_last_pid();
	TAP_OK(pl__tprocs_tick(&tp, next_tick(), lp, &h) == 0 && known(b),
	       "the new process is found");
	TAP_OK(tp.dir_scans == scans && tp.probes == probes + 1,
	       "by looking its pid up, without listing /proc (scans %llu, probes %llu)",
	       (unsigned long long)(tp.dir_scans - scans), (unsigned long long)(tp.probes - probes));
	TAP_OK(tid > 0 && (uint64_t)tid <= lp && !known(tid),
	       "its thread, whose pid was probed too, is not taken for a process");
	TAP_OK(pl__tprocs_tick(&tp, next_tick(), lp + 1000, &h) == 0 && tp.dir_scans == scans + 1,
	       "a jump of 1000 pids: /proc is listed instead");
	h.maybe_blocked = true; /* and procs_blocked unknown: every process read */
	h.procs_blocked = -1;
	TAP_OK(pl__tprocs_tick(&tp, next_tick(), lp + 1000, &h) == 0 && rec_of(b) &&
		       rec_of(b)->ss_ok && !rec_of(b)->ss_clock && rec_of(b)->ss_fd >= 0,
	       "two threads: whether the leader ran is its schedstat's to say (the process's "
	       "CPU clock counts the other thread too)");
	close(go[1]);
	waitpid(b, NULL, 0);
	close(ready[0]);
}

/* write_bytes of a process from its /proc io, 0 when unreadable. */
static int64_t write_bytes_of(int pid)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	struct pl_pid_io io = { 0 };
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/io", pid);
	if (pl__procfile_read_once(&pf, AT_FDCWD, path) < 0 || pl__parse_pid_io(pf.buf, &io) < 0)
		io.write_bytes = 0;
	pl__procfile_free(&pf);
	return (int64_t)io.write_bytes;
}

/* A process started since the last tick that wrote 1 MiB is found by its pid,
 * and what it wrote before its first reading is this tick's. The tick's
 * dirtied pages are weighed with its writes in: they explain them, and no
 * process is read for them. */
static void test_birth_writes(const char *path)
{
	struct pl_tprocs_hint h = { false, 0, 0 };
	static char block[65536];
	const int blocks = 16;
	int go[2], done[2], w;
	uint64_t lp, probes, full, wb = 0, wc = 0;
	int64_t dirtied;
	struct pl_tproc *p;
	char c = 0;

	if (pipe(go) || pipe(done))
		exit(99);
	lp = loadavg_last_pid();
	TAP_OK(pl__tprocs_tick(&tp, next_tick(), lp, &h) == 0, "a tick at last pid %llu",
	       (unsigned long long)lp);
	w = fork();
	if (w == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		close(go[1]);
		memset(block, 'y', sizeof(block));
		for (int i = 0; i < blocks; i++)
			if (fd < 0 || write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
				_exit(1);
		if (write(done[1], &c, 1) != 1)
			_exit(1);
		_exit(read(go[0], &c, 1) < 0);
	}
	TAP_OK(w > 0 && read(done[0], &c, 1) == 1, "a new process wrote 1 MiB and sleeps");
	/* the pages it dirtied, as the tick's vmstat would say, with PSI up */
	dirtied = write_bytes_of(w);
	h.maybe_blocked = true;
	h.dirtied_bytes = dirtied;
	tp.dirty_balance = 0;
	tp.dirty_excess = 0;
	probes = tp.probes;
	full = tp.full_sweeps;
	TAP_OK(pl__tprocs_tick(&tp, next_tick(), loadavg_last_pid(), &h) == 0 && rec_of(w),
	       "it is found");
	p = rec_of(w);
	if (p)
		pl__writes_sum(&p->writes, tick, tick, &wb, &wc);
	if (tp.probes != probes + 1) {
		TAP_SKIP("over 256 pids were handed out meanwhile: a scan, which cannot tell "
			 "a new process from an old one");
		TAP_SKIP("(the same)");
	} else {
		TAP_OK(wc >= blocks * sizeof(block), "found by its pid, what it wrote before its "
						     "first reading is this tick's (%llu bytes "
						     "passed to write)",
		       (unsigned long long)wc);
		if (dirtied < blocks * (int64_t)sizeof(block))
			TAP_SKIP("this file system counts no write_bytes when pages are dirtied");
		else
			TAP_OK(tp.full_sweeps == full,
			       "its %lld bytes of dirtied pages are weighed with it: no process "
			       "is read for them (full sweeps %llu, then %llu)",
			       (long long)dirtied, (unsigned long long)full,
			       (unsigned long long)tp.full_sweeps);
	}
	close(go[1]);
	waitpid(w, NULL, 0);
	close(go[0]);
	close(done[0]);
	close(done[1]);
	unlink(path);
}

/* Tasks in an I/O wait that the first pass did not find in D: a full sweep
 * at once when nothing read explains them, else a tick later at most. */
static void test_blocked_rule(void)
{
	struct pl_blocked_rule r = { 0, 0, 0 };

	TAP_OK(!pl__blocked_rule_sweep(&r, 10, 2, 2, 0) && !pl__blocked_rule_sweep(&r, 11, 1, 3, 0),
	       "no more blocked than found in D: no sweep");
	TAP_OK(pl__blocked_rule_sweep(&r, 12, 2, 1, 0),
	       "one blocked task that nothing read explains: a sweep at once");
	pl__blocked_rule_swept(&r, 12, 2, 1);
	TAP_OK(!pl__blocked_rule_sweep(&r, 13, 2, 1, 0),
	       "the same excess a tick after a sweep that could not find it: put off");
	TAP_OK(pl__blocked_rule_sweep(&r, 14, 2, 1, 0),
	       "still there the next tick: never put off twice in a row");
	pl__blocked_rule_swept(&r, 14, 2, 1);
	TAP_OK(pl__blocked_rule_sweep(&r, 15, 3, 1, 0),
	       "more than the last sweep could not find: a sweep at once");
	pl__blocked_rule_swept(&r, 15, 3, 3);
	TAP_OK(!pl__blocked_rule_sweep(&r, 20, 1, 0, 1),
	       "one excess, and one process read that was in D lately and ran: put off");
	TAP_OK(pl__blocked_rule_sweep(&r, 21, 1, 0, 1), "and not twice in a row");
	TAP_OK(pl__blocked_rule_sweep(&r, 30, 2, 0, 1), "two excess, one flicker: a sweep at once");
}

/* The state letter in /proc/PID/stat, '?' when unreadable. */
/* A parent waiting in vfork is in D, and no I/O wait (neither PSI nor
 * procs_blocked says so): it is read when its new child is found, not in
 * its slice up to a second later. */
/* Run by an emulator (meson's exe wrapper: qemu-user in the cross suites),
 * which runs vfork as fork and cannot read another process's CPU clock:
 * what the kernel does there is not what these tests are about. */
static bool under_emulator(void)
{
	const char *w = getenv("MESON_EXE_WRAPPER");

	return w && *w;
}

/* /proc/PID/wchan as a path open reads it now: the project's one-shot
 * reader, its buffer for the caller to free. */
static bool wchan_now(int pid, struct pl_procfile *pf)
{
	char path[48];

	snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
	return pl__procfile_read_once(pf, AT_FDCWD, path) > 0;
}

/* p in its vfork wait: the wchan a victim's D samples read comes through
 * one fd kept open, and each read is the kernel's answer of the moment. */
static void wchan_kept(struct pl_tproc *p)
{
	struct pl_procfile now = PL_PROCFILE_INIT, in_d = PL_PROCFILE_INIT;
	int fd;

	TAP_OK(pl__tproc_read_wchan(&tp, p) > 0 && p->wchan_fd >= 0 && wchan_now(p->pid, &in_d) &&
		       strcmp(tp.scratch.buf, in_d.buf) == 0,
	       "in its vfork wait, its wchan is read through an fd kept open: %s",
	       in_d.buf ? in_d.buf : "");
	fd = p->wchan_fd;
	wait_state(p->pid, 'S'); /* the child exited: on its way to the pipe */
	/* S from the moment it sleeps anywhere: compare where it stays (the
	 * same wchan by path before and after the kept fd's read) */
	for (int i = 0; i < 200; i++) {
		struct pl_procfile again = PL_PROCFILE_INIT;
		bool stable = wchan_now(p->pid, &now) && pl__tproc_read_wchan(&tp, p) > 0 &&
			      wchan_now(p->pid, &again) && strcmp(now.buf, again.buf) == 0;

		pl__procfile_free(&again);
		if (stable)
			break;
		usleep(10000);
	}
	TAP_OK(p->wchan_fd == fd && now.buf && strcmp(tp.scratch.buf, now.buf) == 0 && in_d.buf &&
		       strcmp(now.buf, in_d.buf) != 0,
	       "asleep on its pipe, the same fd reads where it sleeps now: %s",
	       now.buf ? now.buf : "");
	pl__procfile_free(&now);
	pl__procfile_free(&in_d);
}

static void test_vfork_parent(void)
{
	struct pl_tprocs_hint h = { false, 0, 0 };
	int go[2], ready[2], par;
	struct pl_tproc *p;
	char c = 0;

	if (pipe(go) || pipe(ready))
		exit(99);
	par = fork();
	if (par == 0) {
		pid_t k;

		close(go[1]);
		close(ready[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		k = vfork();
		if (k == 0) {
			/* the parent stays in its vfork wait until this exits */
			if (write(ready[1], &c, 1) != 1)
				_exit(1);
			usleep(500000);
			_exit(0);
		}
		/* then asleep on the pipe until the test closes it */
		(void)!read(go[0], &c, 1);
		_exit(k < 0);
	}
	close(go[0]);
	close(ready[1]);
	if (par > 0)
		wait_state(par, 'S'); /* until it waits on the pipe */
	TAP_OK(par > 0 && pl__tprocs_tick(&tp, next_tick(), loadavg_last_pid(), &h) == 0 &&
		       rec_of(par),
	       "a new process, asleep on a pipe, is found");
	/* the next tick must not be its slice's */
	if ((unsigned)par % 10 == (tick + 1) % 10)
		pl__tprocs_tick(&tp, next_tick(), loadavg_last_pid(), &h);
	TAP_OK(rec_of(par) && rec_of(par)->state == 'S', "asleep when last read (%c)",
	       rec_of(par) ? rec_of(par)->state : '?');
	TAP_OK(write(go[1], &c, 1) == 1 && read(ready[0], &c, 1) == 1,
	       "now it vforks a child that sleeps 500 ms");
	if (!wait_state(par, 'D') && under_emulator()) {
		TAP_SKIP("the parent is in no vfork wait under the emulator (qemu-user runs vfork "
			 "as fork)");
		TAP_SKIP("so no tick can find it in D");
		close(go[1]);
		close(ready[0]);
		waitpid(par, NULL, 0);
		return;
	}
	TAP_OK(state_of(par) == 'D', "the parent is in D (%c)", state_of(par));
	TAP_OK(pl__tprocs_tick(&tp, next_tick(), loadavg_last_pid(), &h) == 0 &&
		       (p = rec_of(par)) != NULL && p->seen_tick == tick && p->state == 'D',
	       "the tick that finds the child reads its sleeping parent: in D (%c)",
	       rec_of(par) ? rec_of(par)->state : '?');
	if ((p = rec_of(par)) != NULL)
		wchan_kept(p);
	close(go[1]);
	close(ready[0]);
	waitpid(par, NULL, 0);
	TAP_OK((p = rec_of(par)) && pl__tproc_read_wchan(&tp, p) == -ESRCH,
	       "once it exited, its kept wchan fails with ESRCH, whatever the pid's next owner");
}

/* Pages dirtied that the processes read do not account for. */
static void test_dirty_balance(void)
{
	int64_t b = 0, mb = (int64_t)1 << 20;

	TAP_OK(!pl__dirty_balance_add(&b, 400 * mb, 399 * mb) && b == mb,
	       "400 MB dirtied, 399 MB by the writers read: the skew between the reads");
	TAP_OK(!pl__dirty_balance_add(&b, 400 * mb, 402 * mb) && b == -mb, "and back the next tick");
	TAP_OK(pl__dirty_balance_add(&b, 400 * mb, 370 * mb),
	       "30 MB of 400 that no process read wrote: a writer to find");
	b = 0;
	TAP_OK(!pl__dirty_balance_add(&b, 32 << 10, 0), "32 KiB by nobody: under the slack");
	TAP_OK(pl__dirty_balance_add(&b, 64 << 10, 0), "96 KiB over two ticks: over it");
	b = 0;
	pl__dirty_balance_add(&b, 0, 100 * mb);
	TAP_OK(b == -mb, "direct I/O (write_bytes, no dirty page) floors the balance at -1 MiB (%lld)",
	       (long long)b);
	pl__dirty_balance_add(&b, 400 * mb, 300 * mb);
	TAP_OK(b == 99 * mb,
	       "so a writer no process read is not hidden for more than a tick (%lld MB)",
	       (long long)(b / mb));
	b = 0;
	pl__dirty_balance_add(&b, 400 * mb, 600 * mb);
	TAP_OK(b == -101 * mb, "a skew the other way floors at a MB and a quarter of the tick (%lld MB)",
	       (long long)(b / mb));
}

/* The skew between the reads of vmstat and of a writer moves MBs from one
 * tick's balance into the next's and back: an excess sweeps when the next
 * tick has one too, not under a quarter of it, or at once when both the
 * balance and the tick's excess are over a MB and a quarter of the tick. */
static void test_dirty_sweep_due(void)
{
	const int64_t mb = 1 << 20;
	int64_t b = 0, last = 0;

	TAP_OK(!pl__dirty_sweep_due(&b, &last, 30 * mb, 28 * mb) && last == 2 * mb,
	       "2 of 30 MB dirtied unexplained for a tick: not yet");
	TAP_OK(!pl__dirty_sweep_due(&b, &last, 30 * mb, 32 * mb) && last == 0 && b == 0,
	       "and back the next tick: no sweep");
	TAP_OK(!pl__dirty_sweep_due(&b, &last, 30 * mb, 28 * mb), "2 MB again: not yet");
	TAP_OK(pl__dirty_sweep_due(&b, &last, 30 * mb, 28 * mb),
	       "2 MB more the next tick: a writer no process read, every process read");
	b = last = 0;
	TAP_OK(!pl__dirty_sweep_due(&b, &last, 800 * mb, 760 * mb) && last == 40 * mb,
	       "40 of 800 MB unexplained (a writer read 5 ms after vmstat): not yet");
	TAP_OK(!pl__dirty_sweep_due(&b, &last, 0, 0) && b == 40 * mb && last == 0,
	       "and nothing dirtied the next tick (the writer stopped): the balance is still "
	       "over, but no writer is at work, no sweep");
	TAP_OK(!pl__dirty_sweep_due(&b, &last, 20 * mb, 20 * mb),
	       "nor the tick after, which its readings explain");
	b = last = 0;
	pl__dirty_sweep_due(&b, &last, 800 * mb, 760 * mb);
	TAP_OK(!pl__dirty_sweep_due(&b, &last, 100 << 10, 0),
	       "100 KiB by nobody (a journal) the tick after a 40 MB skew: under a quarter of "
	       "it, no sweep");
	b = last = 0;
	pl__dirty_sweep_due(&b, &last, 800 * mb, 795 * mb);
	TAP_OK(last == 0 && !pl__dirty_sweep_due(&b, &last, 100 << 10, 0) && b > mb,
	       "5 MB of skew carried, under that tick's slack, then a journal's 100 KiB: the "
	       "balance is over a MB but the tick's excess is not, no sweep");
	b = last = 0;
	pl__dirty_sweep_due(&b, &last, 800 * mb, 980 * mb);
	TAP_OK(b == -180 * mb, "180 of 800 MB read before vmstat counted them: kept whole (%lld MB)",
	       (long long)(b / mb));
	TAP_OK(!pl__dirty_sweep_due(&b, &last, 800 * mb, 620 * mb) && b == 0,
	       "and given back whole the next tick");
	TAP_OK(!pl__dirty_sweep_due(&b, &last, 800 * mb, 800 * mb) &&
		       !pl__dirty_sweep_due(&b, &last, 100 << 10, 0),
	       "so a journal's 100 KiB after it is no writer to find");
	b = last = 0;
	TAP_OK(pl__dirty_sweep_due(&b, &last, 30 * mb, 0),
	       "30 MB dirtied by no process read: at once");
	b = last = 0;
	TAP_OK(!pl__dirty_sweep_due(&b, &last, 90 << 10, 0) && last == 90 << 10,
	       "90 KiB by nobody: over the slack, but under a MB: not at once");
	TAP_OK(pl__dirty_sweep_due(&b, &last, 90 << 10, 0),
	       "90 KiB again the next tick: every process read");
	b = last = 0;
	TAP_OK(!pl__dirty_sweep_due(&b, &last, 32 << 10, 0) && last == 0,
	       "32 KiB by nobody: under the slack, not even counted as over");
}



/* Was the child read this tick? A process kept as it was has no io
 * figures for the tick; one read has them (read, or known unchanged). */
static bool child_read(void)
{
	struct pl_tproc *p = child_rec();

	return p && pl__tproc_read_now(&tp, p) && p->io_now;
}

static void child_loop(int cmd, int ack, int out)
{
	static char block[65536];
	char c;

	memset(block, 'x', sizeof(block));
	while (read(cmd, &c, 1) == 1) {
		if (c == 'w' && write(out, block, sizeof(block)) != (ssize_t)sizeof(block))
			_exit(1);
		if (write(ack, &c, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

/* Have the child do c ('w': write 64 KiB, anything else: only answer) and
 * wait until it has and sleeps again on its pipe. Its answer comes before
 * it goes back to its read: on a busy machine it may still be running. */
static bool child_does(int cmd, int ack, char c)
{
	return write(cmd, &c, 1) == 1 && read(ack, &c, 1) == 1 && wait_state(child, 'S');
}

/* Every tick up to and including the child's next slice, each listing
 * /proc (last_pid 0 asks for a scan). 0, or the first tick's error. */
static int to_slice(void)
{
	struct pl_tprocs_hint h = { false, 0, 0 };
	int err = 0;

	do
		err = err ? err : pl__tprocs_tick(&tp, ++tick, 0, &h);
	while (tick % 10 != (unsigned)child % 10);
	return err;
}

/* A sleeper that did not run since its last reading has written nothing
 * since: its slice reads its CPU clock, not its io, even though every tick
 * here listed /proc in between (last_pid 0 asks for a scan each tick). The
 * io fd kept for it is swapped for an empty file's, whose read would be a
 * read error: the tracer reading it cannot go unseen. */
static void test_sleeper_io(int cmd, int ack)
{
	struct pl_tproc *p = child_rec();
	uint64_t errors, scans;
	int empty, saved = -1;

	if (under_emulator() && p && (!p->ss_ok || p->num_threads > 1)) {
		/* under qemu-user the child has the emulator's own threads,
		 * and another process's CPU clock may not be readable: one
		 * task's not running then says nothing of the others' writes,
		 * so its io is read each time */
		printf("# the child has %lld threads, its clock read: %d\n",
		       (long long)p->num_threads, p->ss_ok);
		TAP_SKIP("under the emulator the child has its threads too, or no clock read");
		TAP_SKIP("so every reading reads io");
		return;
	}
	empty = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (p && p->io_fd >= 0 && empty >= 0)
		saved = dup(p->io_fd);
	if (saved < 0 || dup2(empty, p->io_fd) < 0) {
		TAP_SKIP("no kept io fd to swap (fd budget, or not readable)");
		TAP_SKIP("so no read to tell");
		if (empty >= 0)
			close(empty);
		return;
	}
	/* past the hot ticks of its last write, read once in a slice */
	for (int i = 0; i < 3; i++)
		to_slice();
	errors = tp.read_errors;
	scans = tp.dir_scans;
	TAP_OK(to_slice() == 0 && child_read() && tp.read_errors == errors &&
		       tp.dir_scans >= scans + 10,
	       "asleep and not run since: its slice knows its io without reading it, "
	       "/proc listed every tick in between (errors %llu, then %llu)",
	       (unsigned long long)errors, (unsigned long long)tp.read_errors);
	/* it runs (answers a ping) and sleeps again: now its io is read */
	if (!child_does(cmd, ack, 'p'))
		exit(99);
	errors = tp.read_errors;
	TAP_OK(to_slice() == 0 && tp.read_errors > errors,
	       "once it ran, its slice reads its io (the empty file: a read error)");
	p = child_rec();
	if (p && p->io_fd >= 0)
		dup2(saved, p->io_fd);
	close(saved);
	close(empty);
}

int main(void)
{
	struct pl_tprocs_cfg cfg = { watch, 1, true, false, 100, false, 0, 100.0 };
	char dir[] = "pl-test-sweep.XXXXXX", file[64];
	int cmd[2], ack[2], out, rootfd;
	uint64_t wb, wc, full;
	struct pl_tproc *p;

	pl__log_init("test_tracer_sweep", true, 0);
	/* in the build tree, not /tmp: tmpfs dirties no page it would count */
	if (!mkdtemp(dir) || pipe(cmd) || pipe(ack)) {
		perror("setup");
		return 99;
	}
	snprintf(file, sizeof(file), "%s/written", dir);
	out = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	rootfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (out < 0 || rootfd < 0) {
		perror("open");
		return 99;
	}
	child = fork();
	if (child == 0) {
		close(cmd[1]);
		close(ack[0]);
		child_loop(cmd[0], ack[1], out);
	}
	close(cmd[0]);
	close(ack[1]);
	if (!child_does(cmd[1], ack[0], 'p')) /* asleep on its pipe once it answered */
		return 99;
	TAP_OK(pl__tprocs_init(&tp, &cfg) == 0 && pl__tprocs_set_root(&tp, rootfd, true) == 0,
	       "a table on the live /proc, fds kept");
	TAP_OK(run(false, -1, -1) == 0 && child_rec() != NULL, "the first tick finds the child");
	TAP_OK(child_rec() && child_rec()->state == 'S', "asleep on its pipe (%c)",
	       child_rec() ? child_rec()->state : '?');
	if (under_emulator() && child_rec() && !child_rec()->ss_ok)
		/* qemu-user takes the probe of its own CPU clock but cannot
		 * read another process's */
		TAP_SKIP("the emulator reads no other process's CPU clock");
	else
		TAP_OK(tp.cpuclock && child_rec() && child_rec()->ss_ok && child_rec()->ss_clock &&
			       child_rec()->ss_fd < 0,
		       "one thread: whether it ran is its CPU clock's to say, no schedstat kept "
		       "open (clock probe %d, read %d, by the clock %d, schedstat fd %d)",
		       tp.cpuclock, child_rec() ? child_rec()->ss_ok : -1,
		       child_rec() ? child_rec()->ss_clock : -1, child_rec() ? child_rec()->ss_fd : -1);
	full = tp.full_sweeps;

	TAP_OK(run(false, 1000, 0) == 0 && !child_read() && tp.full_sweeps == full,
	       "nothing grew: the sleeping child is not read, whatever the counts say");
	TAP_OK(run(true, 0, 0) == 0 && !child_read() && tp.full_sweeps == full,
	       "PSI grew, but nobody is blocked and no page was dirtied: not read");
	TAP_OK(run(true, 1000, 0) == 0 && child_read() && tp.full_sweeps == full + 1,
	       "more tasks in an I/O wait than the first pass found in D: all read");
	TAP_OK(run(true, -1, 0) == 0 && child_read() && tp.full_sweeps == full + 2,
	       "procs_blocked unknown: all read");
	TAP_OK(run(true, 0, -1) == 0 && child_read() && tp.full_sweeps == full + 3,
	       "nr_dirtied unknown (a kernel before 2.6.37), naming writers: all read");
	TAP_OK(run(true, 0, 32 << 10) == 0 && !child_read() && tp.full_sweeps == full + 3,
	       "32 KiB dirtied by nobody read: under the slack, left to the slices");

	TAP_OK(child_does(cmd[1], ack[0], 'w'), "the child writes 64 KiB and sleeps again");
	TAP_OK(run(false, 0, 0) == 0 && !child_read(), "no hint: not read at once");
	/* a GiB: more than any other process read can have written since */
	TAP_OK(run(true, 0, (int64_t)1 << 30) == 0 && child_read() && tp.full_sweeps == full + 4,
	       "pages dirtied that the processes read do not account for: all read");
	p = child_rec();
	if (p)
		pl__writes_sum(&p->writes, tick, tick, &wb, &wc);
	TAP_OK(p && wc >= 65536, "its 64 KiB land in this tick's history for the bully (%llu)",
	       p ? (unsigned long long)wc : 0ull);
	if (p && wb > 0) {
		TAP_OK(run(false, 0, 0) == 0 && child_read(),
		       "it dirtied pages: read every tick for a while, asleep or not");
	} else {
		TAP_SKIP("this file system counts no write_bytes when pages are dirtied");
	}

	test_blocked_rule();
	test_dirty_balance();
	test_dirty_sweep_due();
	test_vfork_parent();
	test_probe();
	snprintf(file, sizeof(file), "%s/born", dir);
	test_birth_writes(file);
	snprintf(file, sizeof(file), "%s/written", dir);
	test_sleeper_io(cmd[1], ack[0]);
	close(cmd[1]);
	waitpid(child, NULL, 0);
	TAP_OK(run(true, -1, -1) == 0 && child_rec() == NULL,
	       "the child's exit is seen when it is read");
	pl__tprocs_free(&tp);
	close(rootfd);
	close(out);
	unlink(file);
	rmdir(dir);
	return tap_done();
}
