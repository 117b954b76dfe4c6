/* The D watch (dstate_watch.h) in the sweep, on the live /proc: a process
 * asleep at its last reading that then waits in D on a lock, not on I/O (no
 * PSI, no procs_blocked, no new child to give it away), is read in D at the
 * next tick; without the watch (refused, through PERFLINK_PROBE_FAIL's
 * sched_bpf) it is read only in its slice, up to a second later, as before.
 *
 * The lock is a file's inode lock, held by a helper's thread whose write(2)
 * copies from a page that userfaultfd leaves missing until the test lets it
 * go; the waiter's own write to that file then waits for the lock in D. */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pid_state.h"
#include "probe_force.h"
#include "tap.h"
#include "tracer_priv.h"

/* musl declares ioctl(int, int, ...): a request above INT_MAX is passed as
 * the int it becomes there (as test/preload/hooks_probe.c does) */
#ifdef __GLIBC__
#define REQ(r) (r)
#else
#define REQ(r) ((int)(r))
#endif

static const char *const watch[] = { "no-such-comm-watched" };
static uint64_t tick;
/* the watch under test: NULL for the scan, "task_iter" for the switch one */
static const char *watch_force;
static enum pl_dwatch_kind watch_kind;

/* Where the kernel has both ways the watch starts as the switch one: the
 * scan is steered to as under a load that switches a billion times a tick. */
static void use_kind(struct pl_dwatch *w)
{
	if (watch_kind == PL_DWATCH_SCAN)
		pl__dwatch_steer(w, 1000000000, 1);
}

static struct pl_tproc *rec_of(struct pl_tprocs *tp, int pid)
{
	for (size_t i = 0; i < tp->n; i++) {
		if (tp->v[i].pid == pid)
			return &tp->v[i];
	}
	return NULL;
}

/* A tick that is not pid's slice: only the rule under test can read it. */
static int tick_not_slice_of(struct pl_tprocs *tp, int pid)
{
	struct pl_tprocs_hint h = { false, 0, 0 };

	do
		tick++;
	while (tick % 10 == (unsigned)pid % 10);
	return pl__tprocs_tick(tp, tick, 0, &h);
}

struct holder {
	int pid, cmd, ack; /* tell it to let go; it says it holds the lock */
};

static int file_fd;
static void *page;

static void *copy_from_missing_page(void *arg)
{
	/* takes the inode lock, then faults on the page inside it */
	return write(file_fd, page, 4096) == 4096 ? arg : NULL;
}

/* The helper: holds path's inode lock until told, then exits. */
static void holder_main(const char *path, int cmd, int ack)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffdio_zeropage zp;
	struct uffd_msg msg;
	pthread_t th;
	char c = 'h';
	int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);

	if (uffd < 0 || ioctl(uffd, REQ(UFFDIO_API), &api) < 0)
		_exit(2); /* no userfaultfd here, or not allowed */
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)page;
	reg.range.len = 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	file_fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (page == MAP_FAILED || ioctl(uffd, REQ(UFFDIO_REGISTER), &reg) < 0 || file_fd < 0 ||
	    pthread_create(&th, NULL, copy_from_missing_page, NULL) != 0)
		_exit(2);
	if (read(uffd, &msg, sizeof(msg)) != (ssize_t)sizeof(msg) ||
	    write(ack, &c, 1) != 1 || read(cmd, &c, 1) < 0)
		_exit(1);
	memset(&zp, 0, sizeof(zp));
	zp.range = reg.range;
	if (ioctl(uffd, REQ(UFFDIO_ZEROPAGE), &zp) < 0)
		_exit(1);
	pthread_join(th, NULL);
	_exit(0);
}

/* Started and holding the lock, or pid 0 when this system cannot. */
static struct holder start_holder(const char *path)
{
	struct holder h = { 0, -1, -1 };
	int cmd[2], ack[2];
	char c;

	if (pipe(cmd) || pipe(ack))
		exit(99);
	h.pid = fork();
	if (h.pid == 0) {
		close(cmd[1]);
		close(ack[0]);
		holder_main(path, cmd[0], ack[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	h.cmd = cmd[1];
	h.ack = ack[0];
	if (h.pid < 0 || read(h.ack, &c, 1) != 1) {
		close(h.cmd);
		close(h.ack);
		if (h.pid > 0)
			waitpid(h.pid, NULL, 0);
		h.pid = 0;
	}
	return h;
}

static void stop_holder(struct holder *h)
{
	close(h->cmd); /* lets go: the waiter then gets the lock and writes */
	close(h->ack);
	waitpid(h->pid, NULL, 0);
}

/* The waiter: asleep on its pipe until told to write to path. */
static int start_waiter(const char *path, int *cmd)
{
	int p[2], pid;
	char c;

	if (pipe(p))
		exit(99);
	pid = fork();
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_CLOEXEC);

		close(p[1]);
		if (fd < 0 || read(p[0], &c, 1) != 1 || write(fd, &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(p[0]);
	*cmd = p[1];
	return pid;
}

/* One run of the case: with the watch or without. Returns the ticks it took
 * to read the waiter in D, 0 when none did in 12, -1 when the lock could not
 * be held here. */
static int lock_wait_case(int rootfd, const char *path, bool watch_on)
{
	struct pl_tprocs_cfg cfg = { watch, 1, true, false, 100, false, 0, 100.0, false };
	struct pl_tprocs tp;
	struct holder h;
	int waiter, wcmd, ticks = 0;
	struct pl_tproc *w;
	char c = 'x';

	probe_force(watch_on ? watch_force : "sched_bpf");
	waiter = start_waiter(path, &wcmd);
	if (waiter < 0 || !wait_state(waiter, 'S') || pl__tprocs_init(&tp, &cfg) < 0 ||
	    pl__tprocs_set_root(&tp, rootfd, true) < 0)
		exit(99);
	use_kind(&tp.dwatch);
	TAP_OK(tp.dwatch.on == watch_on && (!watch_on || tp.dwatch.kind == watch_kind),
	       "the D watch is %s", pl__dwatch_kind_name(&tp.dwatch));
	tick_not_slice_of(&tp, waiter);
	tick_not_slice_of(&tp, waiter);
	w = rec_of(&tp, waiter);
	TAP_OK(w && w->state == 'S', "the waiter is asleep on its pipe when read (%c)",
	       w ? w->state : '?');
	h = start_holder(path);
	if (!h.pid) {
		TAP_SKIP("no userfaultfd to hold a lock with (or not allowed)");
		TAP_SKIP("so no lock wait to find");
		close(wcmd);
		waitpid(waiter, NULL, 0);
		pl__tprocs_free(&tp);
		return -1;
	}
	TAP_OK(write(wcmd, &c, 1) == 1 && wait_state(waiter, 'D'),
	       "told to write, it waits in D for the file's lock (%c)", state_of(waiter));
	/* the first tick is not its slice, the next ones may be */
	while (ticks < 12 && state_of(waiter) == 'D') {
		if (ticks++ == 0)
			tick_not_slice_of(&tp, waiter);
		else
			pl__tprocs_tick(&tp, ++tick, 0, &(struct pl_tprocs_hint){ false, 0, 0 });
		if ((w = rec_of(&tp, waiter)) && w->seen_tick == tick && w->state == 'D')
			break;
	}
	w = rec_of(&tp, waiter);
	if (!(w && w->seen_tick == tick && w->state == 'D'))
		ticks = 0;
	stop_holder(&h);
	close(wcmd);
	waitpid(waiter, NULL, 0);
	pl__tprocs_free(&tp);
	return ticks;
}

/* A process in one long D wait (the file's lock) has its wchan read at its
 * first D sample, and at the samples after, while it has not run, the
 * same name is taken again without a read (pl__tproc_wchan_now). */
static void wchan_kept_case(int rootfd, const char *path)
{
	struct pl_tprocs_cfg cfg = { watch, 1, true, false, 100, false, 0, 100.0, false };
	struct pl_tprocs tp;
	struct holder h;
	int waiter, wcmd, samples = 0, kept = 0, wrong = 0;
	uint64_t reads = 0;
	struct pl_tproc *w;
	const char *name;
	char c = 'x', first[PL_WCHAN_MAX] = "";
	bool same = true;

	probe_force(watch_force);
	waiter = start_waiter(path, &wcmd);
	if (waiter < 0 || !wait_state(waiter, 'S') || pl__tprocs_init(&tp, &cfg) < 0 ||
	    pl__tprocs_set_root(&tp, rootfd, true) < 0)
		exit(99);
	use_kind(&tp.dwatch);
	tick_not_slice_of(&tp, waiter);
	h = start_holder(path);
	if (!h.pid) {
		TAP_SKIP("no userfaultfd to hold a lock with: no long D wait for the wchan");
		TAP_SKIP("nor for its name kept");
		close(wcmd);
		waitpid(waiter, NULL, 0);
		pl__tprocs_free(&tp);
		probe_force(NULL);
		return;
	}
	if (write(wcmd, &c, 1) != 1 || !wait_state(waiter, 'D'))
		exit(99);
	for (int i = 0; i < 8; i++) {
		uint64_t r0 = tp.wchan_reads, k0 = tp.wchan_kept;
		bool idle;

		pl__tprocs_tick(&tp, ++tick, 0, &(struct pl_tprocs_hint){ false, 0, 0 });
		w = rec_of(&tp, waiter);
		if (!w || w->seen_tick != tick || w->state != 'D')
			continue;
		/* not run since the last sample: it is known so (its first
		 * run time from another source than the last says nothing) */
		idle = w->idle_now;
		name = pl__tproc_wchan_now(&tp, w);
		if (samples == 0) {
			reads = tp.wchan_reads - r0;
			snprintf(first, sizeof(first), "%.*s", (int)strcspn(name ? name : "", "\n"),
				 name ? name : "");
		} else {
			same &= name && strncmp(name, first, strlen(first)) == 0;
			wrong += idle ? tp.wchan_kept != k0 + 1 || tp.wchan_reads != r0
				      : tp.wchan_reads != r0 + 1;
			kept += idle;
		}
		samples++;
	}
	TAP_OK(samples >= 6 && reads == 1 && first[0] && strcmp(first, "0") != 0,
	       "wchan: at its first D sample the waiter's wchan is read (%s, %d samples)", first,
	       samples);
	TAP_OK(samples >= 6 && same && wrong == 0 && kept >= samples - 3,
	       "and at the %d after, the same name, kept without a read at the %d known not to "
	       "have run since (%d against that rule)",
	       samples - 1, kept, wrong);
	stop_holder(&h);
	close(wcmd);
	waitpid(waiter, NULL, 0);
	pl__tprocs_free(&tp);
	probe_force(NULL);
}

/* A parent in a vfork wait is in D, no I/O wait; its child renames itself
 * at once, as nothing the tracer reads of the child can tell it from an
 * exec. With the watch, the parent is read in D at the next tick all the
 * same; without, only when its new child is found unexec'd
 * (test_tracer_sweep). */
static void vfork_case(int rootfd)
{
	struct pl_tprocs_cfg cfg = { watch, 1, true, false, 100, false, 0, 100.0, false };
	struct pl_tprocs tp;
	int go[2], par;
	struct pl_tproc *p;
	char c = 'v';

	probe_force(watch_force);
	if (pipe(go) || pl__tprocs_init(&tp, &cfg) < 0 ||
	    pl__tprocs_set_root(&tp, rootfd, true) < 0)
		exit(99);
	use_kind(&tp.dwatch);
	par = fork();
	if (par == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		if (vfork() == 0) {
			prctl(PR_SET_NAME, "renamed", 0, 0, 0);
			usleep(500000); /* the parent waits until this exits */
			_exit(0);
		}
		_exit(0);
	}
	close(go[0]);
	wait_state(par, 'S');
	tick_not_slice_of(&tp, par);
	tick_not_slice_of(&tp, par);
	p = rec_of(&tp, par);
	TAP_OK(p && p->state == 'S', "a process asleep on a pipe when read (%c)", p ? p->state : '?');
	TAP_OK(write(go[1], &c, 1) == 1 && wait_state(par, 'D'),
	       "it vforks a child that renames itself and sleeps 500 ms: in D (%c)", state_of(par));
	tick_not_slice_of(&tp, par);
	p = rec_of(&tp, par);
	TAP_OK(p && p->seen_tick == tick && p->state == 'D',
	       "with the watch: read in D at the next tick (%c)", p ? p->state : '?');
	close(go[1]);
	waitpid(par, NULL, 0);
	pl__tprocs_free(&tp);
}

/* With the watch, a writer read for the bully's history between its slices
 * is read for its io alone: what it wrote lands in the tick, and a new name
 * (which only stat shows) waits for its slice. */
static void writer_case(int rootfd, const char *path)
{
	struct pl_tprocs_cfg cfg = { watch, 1, true, false, 100, false, 0, 100.0, false };
	struct pl_tprocs_hint dirtied = { true, 0, (int64_t)1 << 30 };
	static char block[65536];
	struct pl_tprocs tp;
	int go[2], ack[2], pid;
	struct pl_tproc *p;
	uint64_t wb = 0, wc = 0;
	char c = 'n';

	probe_force(watch_force);
	if (pipe(go) || pipe(ack) || pl__tprocs_init(&tp, &cfg) < 0 ||
	    pl__tprocs_set_root(&tp, rootfd, true) < 0)
		exit(99);
	use_kind(&tp.dwatch);
	pid = fork();
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_CLOEXEC);

		close(go[1]);
		close(ack[0]);
		memset(block, 'w', sizeof(block));
		if (fd < 0 || read(go[0], &c, 1) != 1)
			_exit(1);
		prctl(PR_SET_NAME, "renamed-writer", 0, 0, 0);
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block) ||
		    write(ack[1], &c, 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	close(ack[1]);
	wait_state(pid, 'S');
	tick_not_slice_of(&tp, pid);
	tick_not_slice_of(&tp, pid);
	p = rec_of(&tp, pid);
	TAP_OK(p && p->state == 'S' && p->io_fd >= 0, "a process asleep, its io kept open");
	TAP_OK(write(go[1], &c, 1) == 1 && read(ack[0], &c, 1) == 1,
	       "it renames itself, writes 64 KiB and sleeps again");
	do
		tick++;
	while (tick % 10 == (unsigned)pid % 10);
	pl__tprocs_tick(&tp, tick, 0, &dirtied);
	p = rec_of(&tp, pid);
	if (p)
		pl__writes_sum(&p->writes, tick, tick, &wb, &wc);
	TAP_OK(p && p->seen_tick == tick && wc >= sizeof(block),
	       "pages dirtied that nobody read explains: read, its 64 KiB in this tick (%llu)",
	       (unsigned long long)wc);
	if (watch_kind == PL_DWATCH_SWITCH)
		TAP_OK(p && strcmp(p->comm, "renamed-writer") != 0,
		       "switch: from its io alone: its new name is not read yet (%s)",
		       p ? p->comm : "?");
	else
		TAP_OK(p && strcmp(p->comm, "renamed-writer") == 0,
		       "scan: read whole, as a wait between two scans is not seen: its new name "
		       "read (%s)", p ? p->comm : "?");
	for (int i = 0; i < 50 && p && (unsigned)pid % 50 != tick % 50; i++) {
		pl__tprocs_tick(&tp, ++tick, 0, &(struct pl_tprocs_hint){ false, 0, 0 });
		p = rec_of(&tp, pid);
	}
	TAP_OK(p && strcmp(p->comm, "renamed-writer") == 0,
	       "its slice reads stat, though it has not run since: %s",
	       p ? p->comm : "?");
	close(go[1]);
	close(ack[0]);
	waitpid(pid, NULL, 0);
	pl__tprocs_free(&tp);
}

/* More leaders go into D between two ticks than the ring holds (4096
 * notes): some were not noted, so that tick reads every process. A vfork
 * leaves its parent in D until the child exits: 6000 of them in a row. */
static void overflow_case(int rootfd)
{
	struct pl_tprocs_cfg cfg = { watch, 1, true, false, 100, false, 0, 100.0, false };
	struct pl_tprocs_hint none = { false, 0, 0 };
	struct pl_tprocs tp;
	uint64_t full, overflows;
	int pid;

	probe_force(watch_force);
	if (pl__tprocs_init(&tp, &cfg) < 0 || pl__tprocs_set_root(&tp, rootfd, true) < 0)
		exit(99);
	use_kind(&tp.dwatch);
	pl__tprocs_tick(&tp, ++tick, 0, &none);
	pl__tprocs_tick(&tp, ++tick, 0, &none);
	full = tp.full_sweeps;
	overflows = tp.note_overflows;
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 6000; i++) {
			if (vfork() == 0)
				_exit(0);
		}
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	pl__tprocs_tick(&tp, ++tick, 0, &none);
	TAP_OK(tp.note_overflows == overflows + 1 && tp.full_sweeps == full + 1,
	       "6000 D states between two ticks: the ring overflowed, every process read "
	       "(overflows %llu, full sweeps %llu)",
	       (unsigned long long)(tp.note_overflows - overflows),
	       (unsigned long long)(tp.full_sweeps - full));
	pl__tprocs_tick(&tp, ++tick, 0, &none);
	TAP_OK(tp.full_sweeps == full + 1, "and the next tick, the ring drained, reads as before");
	pl__tprocs_free(&tp);
}

/* A process in D for 400 ms from now: the parent of a vfork child that
 * sleeps before it exits. */
static int fork_vfork_parent(void)
{
	int par = fork();

	if (par == 0) {
		if (vfork() == 0) {
			usleep(400000);
			_exit(0);
		}
		_exit(0);
	}
	return par;
}

/* Steering between the two ways: to the scan when the machine switches
 * often, back to the switch watch when it does not; a leader that went
 * into D while the switch watch was detached is named at the drain after
 * it is attached again, by one more scan. */
static void steer_case(void)
{
	struct pl_dwatch w;
	int par, out[16];
	bool overflow, found = false;
	uint64_t quiet;
	size_t n;

	probe_force(NULL);
	if (pl__dwatch_open(&w, false) < 0)
		exit(99);
	TAP_OK(w.kind == PL_DWATCH_SWITCH && pl__dwatch_steerable(&w),
	       "steer: both ways loaded, the switch watch first (%s)", pl__dwatch_kind_name(&w));
	/* a third of what a scan costs (its gate's answer, a few us, when no
	 * task is blocked) in switches of ~130 ns */
	quiet = w.scan_ns / 130 / 3;
	pl__dwatch_steer(&w, quiet, 1);
	TAP_OK(w.kind == PL_DWATCH_SWITCH && w.scan_ns > 0 && quiet > 0,
	       "steer: %llu switches a tick stay with it (a scan costs %.1f us)",
	       (unsigned long long)quiet, w.scan_ns / 1e3);
	pl__dwatch_steer(&w, 50000, 1);
	TAP_OK(w.kind == PL_DWATCH_SCAN && w.link_fd < 0 && w.steers == 1,
	       "steer: 50,000 a tick take the scan at once, the tracepoint detached");
	pl__dwatch_steer(&w, 0, 1);
	pl__dwatch_steer(&w, 50000, 1);
	pl__dwatch_steer(&w, 0, 1);
	pl__dwatch_steer(&w, 0, 1);
	TAP_OK(w.kind == PL_DWATCH_SCAN && w.steers == 1,
	       "steer: quiet counts broken by a busy one start again");
	pl__dwatch_steer(&w, 50000, 1);
	par = fork_vfork_parent();
	wait_state(par, 'D');
	pl__dwatch_steer(&w, 0, 1);
	pl__dwatch_steer(&w, 0, 1);
	TAP_OK(w.kind == PL_DWATCH_SCAN && w.steers == 1,
	       "steer: two quiet counts in a row keep the scan (a bursty load)");
	pl__dwatch_steer(&w, 0, 1);
	TAP_OK(w.kind == PL_DWATCH_SWITCH && w.link_fd >= 0 && w.steers == 2,
	       "steer: the third takes the switch watch again, attached");
	n = pl__dwatch_drain(&w, out, 16, &overflow);
	for (size_t k = 0; k < n; k++)
		found |= out[k] == par;
	TAP_OK(found && !overflow,
	       "steer: the vfork parent that went into D while it was detached is named once more");
	{
		uint64_t scans = w.scans;

		for (int i = 0; i < 4; i++)
			pl__dwatch_steer(&w, 10, 1);
		pl__dwatch_drain(&w, out, 16, &overflow);
		TAP_OK(w.kind == PL_DWATCH_SWITCH && w.scans == scans,
		       "steer: four counts with the switch watch run no scan");
		pl__dwatch_steer(&w, 10, 1);
		pl__dwatch_drain(&w, out, 16, &overflow);
		TAP_OK(w.kind == PL_DWATCH_SWITCH && w.scans == scans + 1,
		       "steer: the fifth has the next drain scan once, to keep its cost current");
	}
	waitpid(par, NULL, 0);
	pl__dwatch_close(&w);
}

/* The scan names the leaders in D at the moment it runs: three vfork
 * parents, and more than the caller has room for is an overflow. */
static void scan_case(void)
{
	struct pl_dwatch w;
	int par[3], out[8];
	size_t n, found = 0;
	bool overflow = false;

	probe_force(watch_force);
	if (pl__dwatch_open(&w, false) < 0)
		exit(99);
	use_kind(&w);
	for (int i = 0; i < 3; i++) {
		par[i] = fork_vfork_parent();
	}
	for (int i = 0; i < 3; i++)
		wait_state(par[i], 'D');
	n = pl__dwatch_drain(&w, out, 8, &overflow);
	for (size_t k = 0; k < n; k++) {
		for (int i = 0; i < 3; i++)
			found += out[k] == par[i];
	}
	TAP_OK(!overflow && found == 3, "scan: the three vfork parents in D are named (%zu of %zu)",
	       found, n);
	if (w.scan.gate) {
		uint64_t walks = w.walks;
		int tries = 0;

		/* two of the three given: the runqueues count three blocked,
		 * more than the two: the list is walked, and the third named */
		pl__dwatch_candidates(&w, par, 2);
		n = pl__dwatch_drain(&w, out, 8, &overflow);
		found = 0;
		for (size_t k = 0; k < n; k++)
			found += out[k] == par[2];
		TAP_OK(w.walks == walks + 1 && found == 1,
		       "scan gate: a leader blocked in D that is no candidate has the list walked, "
		       "and is named");
		/* all three: no walk, unless another task of the machine is
		 * blocked (tests run side by side): a few tries */
		pl__dwatch_candidates(&w, par, 3);
		do {
			walks = w.walks;
			n = pl__dwatch_drain(&w, out, 8, &overflow);
			found = 0;
			for (size_t k = 0; k < n; k++) {
				for (int i = 0; i < 3; i++)
					found += out[k] == par[i];
			}
		} while (w.walks != walks && ++tries < 50 && usleep(20000) == 0);
		TAP_OK(w.walks == walks && found == 3 && n == 3,
		       "scan gate: the three given, and no other task blocked, they are the answer "
		       "without a walk (%d tries)", tries + 1);
		pl__dwatch_candidates(&w, NULL, 0);
	} else {
		TAP_SKIP("no scan gate on this kernel (no CONFIG_FAIR_GROUP_SCHED, or a verifier "
			 "that refuses it)");
		TAP_SKIP("so no gate to test");
	}
	n = pl__dwatch_drain(&w, out, 2, &overflow);
	TAP_OK(n == 2 && overflow, "scan: more in D than the room given is an overflow (%zu)", n);
	for (int i = 0; i < 3; i++)
		waitpid(par[i], NULL, 0);
	n = pl__dwatch_drain(&w, out, 8, &overflow);
	found = 0;
	for (size_t k = 0; k < n; k++) {
		for (int i = 0; i < 3; i++)
			found += out[k] == par[i];
	}
	TAP_OK(!overflow && found == 0, "scan: gone, they are not named again");
	pl__dwatch_close(&w);
}

/* loadavg's last pid: what the tracer gives pl__tprocs_tick, so that new
 * processes are looked up by pid (the probe) rather than by a scan. */
static uint64_t last_pid_now(void)
{
	unsigned long long pid = 0;
	FILE *f = fopen("/proc/loadavg", "r");

	if (!f || fscanf(f, "%*s %*s %*s %*s %llu", &pid) != 1)
		pid = 0;
	if (f)
		fclose(f);
	return pid;
}

/* Each entry's wrote_until, kept apart for the stall events, is its
 * history's, through adds, reads, reaps and drops: checked at every tick
 * of these cases, said once at the end. */
static unsigned long mirror_ticks, mirror_bad;

static void check_mirror(const struct pl_tprocs *tp)
{
	mirror_ticks++;
	for (size_t i = 0; i < tp->n; i++)
		mirror_bad += tp->wrote_until[i] != tp->v[i].writes.wrote_until;
}

static void probe_tick(struct pl_tprocs *tp)
{
	struct pl_tprocs_hint none = { false, 0, 0 };

	if (pl__tprocs_tick(tp, ++tick, last_pid_now(), &none) < 0)
		exit(99);
	check_mirror(tp);
}

/* A child asleep on the pipe p until its write end is closed: every write
 * end the test holds is closed in the child. */
static int fork_reader(const int *p, int other_write_end)
{
	int pid = fork();
	char c;

	if (pid == 0) {
		close(p[1]);
		close(other_write_end);
		_exit(read(p[0], &c, 1) < 0);
	}
	return pid;
}

/* A sleeper that loops reading a byte from its pipe: poked, it runs. */
static int fork_poked(int *poke)
{
	int p[2], pid;
	char c;

	if (pipe(p))
		exit(99);
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		while (read(p[0], &c, 1) == 1)
			;
		_exit(0);
	}
	close(p[0]);
	*poke = p[1];
	return pid;
}

/* The walk of every leader at each rescan gives their run times: a process
 * read in its slice that did not run between two walks has its slice
 * moved past the next walk (settle_slices), and one that ran is read at
 * the tick after the walk. */
static void settle_case(int rootfd)
{
	struct pl_tprocs_cfg cfg = { watch, 1, true, false, 100, false, 0, 100.0, false };
	struct pl_tprocs tp;
	uint64_t lists, walk[2] = { 0, 0 }, settled = 0;
	int still, poked, poke, hold, walks = 0;
	struct pl_tproc *ps, *pp;
	char c = 'p';

	probe_force(watch_force);
	if (pl__tprocs_init(&tp, &cfg) < 0 || pl__tprocs_set_root(&tp, rootfd, true) < 0)
		exit(99);
	use_kind(&tp.dwatch);
	if (!tp.dwatch.scan.ran_check) {
		TAP_SKIP("no run times in the walk on this kernel (no gate)");
		TAP_SKIP("so no slices settled by it");
		pl__tprocs_free(&tp);
		probe_force(NULL);
		return;
	}
	still = fork_poked(&hold);
	poked = fork_poked(&poke);
	wait_state(still, 'S');
	wait_state(poked, 'S');
	lists = tp.leader_lists;
	/* two rescans: the first gives their run times, the second compares;
	 * the poked one runs between them */
	for (int i = 0; i < 3 * PL_TRESCAN_TICKS && walks < 2; i++) {
		probe_tick(&tp);
		if (tp.leader_lists == lists)
			continue;
		lists = tp.leader_lists;
		walk[walks++] = tick;
		if (walks == 1) {
			if (write(poke, &c, 1) != 1)
				exit(99);
			wait_state(poked, 'S');
		} else {
			settled = tp.slices_settled;
		}
	}
	ps = rec_of(&tp, still);
	TAP_OK(walks == 2 && settled > 0 && ps &&
		       (tp.due[ps - tp.v].tick == walk[1] + PL_TRESCAN_TICKS + 1 ||
			ps->seen_tick == walk[1]),
	       "settle: a sleeper that did not run between two walks has its slice moved past the "
	       "next walk (due at %llu, the walk at %llu; %llu settled)",
	       ps ? (unsigned long long)tp.due[ps - tp.v].tick : 0ULL,
	       (unsigned long long)walk[1], (unsigned long long)settled);
	probe_tick(&tp);
	pp = rec_of(&tp, poked);
	TAP_OK(walks == 2 && pp && tick == walk[1] + 1 && pp->seen_tick == tick,
	       "and one that ran between them is read at the tick after the walk (%llu, %llu)",
	       pp ? (unsigned long long)pp->seen_tick : 0ULL, (unsigned long long)walk[1]);
	close(hold);
	close(poke);
	waitpid(still, NULL, 0);
	waitpid(poked, NULL, 0);
	pl__tprocs_free(&tp);
	probe_force(NULL);
}

/* Births (tracer_procs.c): with the watch, a new process the probe finds
 * alive is opened at the next tick only if it still lives, so one that
 * exits first is never opened, while one the watch noted in D (a vfork
 * parent) is opened at once; without the watch every one is opened at
 * once. Three new processes: two asleep on pipes, one in a vfork wait;
 * after crowd that are gone, so many new pids that the probe lists the
 * live ones from /proc instead of looking each up. The probe needs no
 * more than 256 pids handed out between two ticks: a tick that had to scan
 * instead is tried again. */
static void births_case(int rootfd, bool watch_on, int crowd)
{
	struct pl_tprocs_cfg cfg = { watch, 1, true, false, 100, false, 0, 100.0, false };
	struct pl_tprocs tp;
	int lives[2], quits[2], a, b, c, tries = 0;
	uint64_t scans, lists, unopened, scan_stats;
	struct pl_tproc *pa, *pb, *pc;

	probe_force(watch_on ? watch_force : "sched_bpf");
	if (pl__tprocs_init(&tp, &cfg) < 0 || pl__tprocs_set_root(&tp, rootfd, true) < 0)
		exit(99);
	use_kind(&tp.dwatch);
	TAP_OK(tp.dwatch.on == watch_on && (!watch_on || tp.dwatch.kind == watch_kind),
	       "births: the D watch is %s", pl__dwatch_kind_name(&tp.dwatch));
	do {
		if (pipe(lives) || pipe(quits))
			exit(99);
		probe_tick(&tp);
		probe_tick(&tp);
		scans = tp.dir_scans;
		lists = tp.pid_lists;
		/* crowd processes gone before the tick: the pids a tick hands
		 * out under churn, which a listing passes over */
		for (int i = 0; i < crowd; i++) {
			int gone = fork();

			if (gone == 0)
				_exit(0);
			waitpid(gone, NULL, 0);
		}
		a = fork_reader(lives, quits[1]);
		b = fork_reader(quits, lives[1]);
		c = fork();
		if (c == 0) {
			close(lives[1]);
			close(quits[1]);
			if (vfork() == 0) {
				usleep(500000); /* the parent waits in D until this exits */
				_exit(0);
			}
			_exit(0);
		}
		wait_state(a, 'S');
		wait_state(b, 'S');
		wait_state(c, 'D');
		probe_tick(&tp);
		if (tp.dir_scans == scans)
			break;
		close(lives[1]);
		close(quits[1]);
		waitpid(a, NULL, 0);
		waitpid(b, NULL, 0);
		waitpid(c, NULL, 0);
		close(lives[0]);
		close(quits[0]);
	} while (++tries < 3);
	TAP_OK(tp.dir_scans == scans && tp.pid_lists == lists + (crowd ? 1 : 0),
	       "%d new pids %s, no scan (scans %llu, lists %llu, tries %d)", crowd + 4,
	       crowd ? "listed from their place in /proc" : "looked up one by one",
	       (unsigned long long)(tp.dir_scans - scans),
	       (unsigned long long)(tp.pid_lists - lists), tries + 1);
	pa = rec_of(&tp, a);
	pb = rec_of(&tp, b);
	pc = rec_of(&tp, c);
	if (watch_on) {
		TAP_OK(!pa && !pb && tp.births_deferred >= 2,
		       "with the watch: two new processes asleep are not opened at the tick that "
		       "finds them (put off %llu)", (unsigned long long)tp.births_deferred);
		TAP_OK(pc && pc->seen_tick == tick && pc->state == 'D',
		       "one the watch noted going into D is opened at once, in D (%c)",
		       pc ? pc->state : '-');
	} else {
		TAP_OK(pa && pb && pc && pc->state == 'D' && tp.births_deferred == 0,
		       "without the watch: every new process is opened at once, the vfork parent in "
		       "D (%c)", pc ? pc->state : '-');
	}
	unopened = tp.births_unopened;
	scan_stats = tp.scan_stat_reads;
	close(quits[1]);
	waitpid(b, NULL, 0);
	probe_tick(&tp);
	pa = rec_of(&tp, a);
	if (watch_on) {
		/* with the scan's fields, from its record, no file opened */
		bool by_scan = tp.dwatch.kind == PL_DWATCH_SCAN && tp.dwatch.scan.fields;

		TAP_OK(pa && pa->seen_tick == tick && pa->state == 'S' &&
			       (by_scan ? pa->stat_fd < 0 && tp.scan_stat_reads > scan_stats
					: pa->stat_fd >= 0),
		       "at the next tick the one that lives on is read (%c), %s", pa ? pa->state : '-',
		       by_scan ? "from the scan's record, no file opened" : "its stat opened");
		TAP_OK(!rec_of(&tp, b) && tp.births_unopened > unopened,
		       "and the one that exited in between never was (gone before opened: %llu)",
		       (unsigned long long)(tp.births_unopened - unopened));
	}
	close(lives[1]);
	waitpid(a, NULL, 0);
	waitpid(c, NULL, 0);
	close(lives[0]);
	close(quits[0]);
	pl__tprocs_free(&tp);
	probe_force(NULL);
}

/* A tick that is (slice) or is not pid's slice, with loadavg's last pid. */
static void probe_tick_slice(struct pl_tprocs *tp, int pid, bool slice)
{
	unsigned slices = tp->dwatch.on ? 50 : 10;

	while ((++tick % slices == (unsigned)pid % slices) != slice)
		;
	tick--;
	probe_tick(tp);
}

/* A runner asleep on a pipe starts a writer and waits for it: the writer
 * dirties 256 KiB, is read, dirties 1 MiB more and exits, and the runner
 * reaps it and sleeps again. The reap adds the writer's 1.25 MiB to the
 * runner's io, which was read before: the runner must be read again while
 * the tracer still knows what its jump holds, not in its slice up to 5 s
 * later, when the whole jump counted as the runner's own writes (the test
 * program running dd rounds in tracer_vs_python was named the bully with
 * 4 GiB, a tick's most, for two rounds it reaped unread). */
static void reaped_case(int rootfd, const char *dir, bool watch_on)
{
	struct pl_tprocs_cfg cfg = { watch, 1, true, false, 100, false, 0, 100.0, false };
	struct pl_tprocs tp;
	int cmd[2], ack[2], cgo[2], runner, writer = 0;
	uint64_t first, rb = 0, rc = 0, gb = 0, gc = 0;
	struct pl_tproc *pr, *pw;
	struct pl_writes *gone = NULL;
	char path[128], c = 'f';

	snprintf(path, sizeof(path), "%s/reaped-%s", dir, watch_on ? "on" : "off");
	probe_force(watch_on ? watch_force : "sched_bpf");
	if (pipe(cmd) || pipe(ack) || pipe(cgo) || pl__tprocs_init(&tp, &cfg) < 0 ||
	    pl__tprocs_set_root(&tp, rootfd, true) < 0)
		exit(99);
	use_kind(&tp.dwatch);
	runner = fork();
	if (runner == 0) {
		close(cmd[1]);
		close(ack[0]);
		close(cgo[1]);
		while (read(cmd[0], &c, 1) == 1) {
			int w = fork();

			if (w == 0) {
				static char block[1 << 20];
				int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
				int me = getpid();

				memset(block, 'r', sizeof(block));
				if (fd < 0 || write(fd, block, 256 << 10) != 256 << 10 ||
				    write(ack[1], &me, sizeof(me)) != sizeof(me) || read(cgo[0], &c, 1) < 0 ||
				    write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
					_exit(1);
				_exit(0);
			}
			waitpid(w, NULL, 0);
		}
		_exit(0);
	}
	close(cmd[0]);
	close(ack[1]);
	close(cgo[0]);
	wait_state(runner, 'S');
	probe_tick(&tp);
	probe_tick_slice(&tp, runner, false);
	pr = rec_of(&tp, runner);
	TAP_OK(pr && pr->state == 'S' && pr->io_tick, "reaped (%s): the runner is read, asleep",
	       watch_on ? "with the watch" : "without");
	if (write(cmd[1], &c, 1) != 1 || read(ack[0], &writer, sizeof(writer)) != sizeof(writer))
		exit(99);
	wait_state(writer, 'S');
	probe_tick_slice(&tp, runner, false);
	probe_tick_slice(&tp, runner, false);
	pw = rec_of(&tp, writer);
	TAP_OK(pw && pw->io_tick && pw->wbytes >= 256 << 10,
	       "the writer is read with its first 256 KiB (%llu)",
	       pw ? (unsigned long long)pw->wbytes : 0ULL);
	first = tick + 1;
	close(cgo[1]); /* the writer dirties 1 MiB more and exits; the runner reaps it */
	for (int i = 0; i < 200 && (state_of(writer) != '?' || state_of(runner) != 'S'); i++)
		usleep(10000);
	{
		/* the tick that finds the writer gone, with its last 1 MiB among
		 * the pages the kernel says were dirtied since the last tick */
		struct pl_tprocs_hint dirtied = { true, 0, 1 << 20 };
		uint64_t full = tp.full_sweeps;

		while (++tick % (tp.dwatch.on ? 50 : 10) == (unsigned)runner % (tp.dwatch.on ? 50 : 10))
			;
		if (pl__tprocs_tick(&tp, tick, last_pid_now(), &dirtied) < 0)
			exit(99);
		pr = rec_of(&tp, runner);
		TAP_OK(!rec_of(&tp, writer) && pr && pr->seen_tick == tick && tp.full_sweeps == full,
		       "the tick that finds it gone reads its parent, whose io explains the pages "
		       "dirtied: no process else read (full sweeps %llu)",
		       (unsigned long long)(tp.full_sweeps - full));
	}
	for (int i = 0; i < 5; i++)
		probe_tick_slice(&tp, runner, false);
	probe_tick_slice(&tp, runner, true);
	pr = rec_of(&tp, runner);
	if (pr)
		pl__writes_sum(&pr->writes, first, tick, &rb, &rc);
	for (size_t i = 0; i < PL_WRITES_GONE; i++) {
		if (tp.gone.e[i].used && tp.gone.e[i].pid == writer)
			gone = &tp.gone.e[i].w;
	}
	if (gone)
		pl__writes_sum(gone, first, tick, &gb, &gc);
	TAP_OK(pr && rb < 1 << 20,
	       "the writer's last 1 MiB, in the runner's io since the reap, is not the runner's "
	       "(%llu bytes counted to the runner)", (unsigned long long)rb);
	TAP_OK(gone && gb >= 1 << 20, "it is the writer's, among the writers that exited (%llu)",
	       (unsigned long long)gb);
	close(cmd[1]);
	waitpid(runner, NULL, 0);
	close(ack[0]);
	unlink(path);
	pl__tprocs_free(&tp);
	probe_force(NULL);
}

/* The tracer itself, unwatched, is taken for asleep: running whenever it
 * reads itself, it is never in D. */
/* A child that wrote nothing after its last reading (a sleep in a shell
 * loop): the tick that finds it gone reads its parent, whose io has taken
 * the child's in when it reaped it, and that reading settles the parent: it
 * is not read again at the ticks after, as a writer would be. With tail,
 * the child writes 1 MiB after its last reading and is not kept among the
 * writers that exited (eight heavier ones are): the rest of the parent's
 * jump is still not the parent's. */
static void quiet_reap_case(int rootfd, const char *dir, bool tail)
{
	struct pl_tprocs_cfg cfg = { watch, 1, true, false, 100, false, 0, 100.0, false };
	struct pl_tprocs tp;
	const char *name = tail ? "tail" : "quiet";
	char path[128];
	int ack[2], cgo[2], runner, child = 0;
	uint64_t first, rb = 0, rc = 0;
	struct pl_tproc *pr, *pc;
	char c;

	snprintf(path, sizeof(path), "%s/quiet-reap", dir);
	probe_force(watch_force);
	if (pipe(ack) || pipe(cgo) || pl__tprocs_init(&tp, &cfg) < 0 ||
	    pl__tprocs_set_root(&tp, rootfd, true) < 0)
		exit(99);
	use_kind(&tp.dwatch);
	runner = fork();
	if (runner == 0) {
		int w = fork();

		close(ack[0]);
		close(cgo[1]);
		if (w == 0) {
			int me = getpid();

			if (write(ack[1], &me, sizeof(me)) != sizeof(me) || read(cgo[0], &c, 1) < 0)
				_exit(1);
			if (tail) {
				static char block[1 << 20];
				int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

				memset(block, 'q', sizeof(block));
				if (fd < 0 || write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
					_exit(1);
			}
			_exit(0);
		}
		waitpid(w, NULL, 0);
		pause(); /* asleep, as a shell loop between its rounds */
		_exit(0);
	}
	close(ack[1]);
	close(cgo[0]);
	if (read(ack[0], &child, sizeof(child)) != sizeof(child))
		exit(99);
	wait_state(runner, 'S');
	wait_state(child, 'S');
	probe_tick(&tp);
	probe_tick_slice(&tp, runner, false);
	probe_tick_slice(&tp, runner, false);
	pc = rec_of(&tp, child);
	TAP_OK(pc && pc->io_tick, "%s reap: the child is read, asleep", name);
	if (tail) {
		for (size_t i = 0; i < PL_WRITES_GONE; i++) {
			memset(&tp.gone.e[i], 0, sizeof(tp.gone.e[i]));
			tp.gone.e[i].used = true;
			tp.gone.e[i].pid = -1 - (int)i;
			pl__writes_put(&tp.gone.e[i].w, tick, 1 << 30, 1 << 30);
		}
	}
	first = tick + 1;
	close(cgo[1]); /* the child exits, the runner reaps it */
	for (int i = 0; i < 200 && (state_of(child) != '?' || state_of(runner) != 'S'); i++)
		usleep(10000);
	probe_tick_slice(&tp, child, true); /* the child's turn, asleep as it was */
	pr = rec_of(&tp, runner);
	TAP_OK(!rec_of(&tp, child) && pr && pr->seen_tick == tick,
	       "%s reap: the tick that finds the child gone reads the runner", name);
	probe_tick_slice(&tp, runner, false);
	pr = rec_of(&tp, runner);
	TAP_OK(pr && pr->seen_tick < tick,
	       "%s reap: settled by that reading, it is not read at the next tick, not its slice",
	       name);
	if (pr)
		pl__writes_sum(&pr->writes, first, tick, &rb, &rc);
	TAP_OK(pr && rb < 64 << 10, "%s reap: none of the child's writes are the runner's (%llu)",
	       name, (unsigned long long)rb);
	kill(runner, SIGKILL);
	waitpid(runner, NULL, 0);
	close(ack[0]);
	if (tail)
		unlink(path);
	pl__tprocs_free(&tp);
	probe_force(NULL);
}

/* The rescan every 50 ticks, for what the lookups of new pids missed (a
 * pid looked up between its allocation and its process's birth): with the
 * scan, the walk of the process list names the new process, and /proc is
 * not listed. loadavg's last pid is held back, so that no lookup finds it. */
static void rescan_case(int rootfd)
{
	struct pl_tprocs_cfg cfg = { watch, 1, true, false, 100, false, 0, 100.0, false };
	struct pl_tprocs_hint none = { false, 0, 0 };
	struct pl_tprocs tp;
	uint64_t stale, scans;
	int child;

	probe_force(watch_force);
	if (pl__tprocs_init(&tp, &cfg) < 0 || pl__tprocs_set_root(&tp, rootfd, true) < 0)
		exit(99);
	use_kind(&tp.dwatch);
	stale = last_pid_now();
	if (pl__tprocs_tick(&tp, ++tick, stale, &none) < 0)
		exit(99);
	scans = tp.dir_scans;
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	wait_state(child, 'S');
	if (pl__tprocs_tick(&tp, ++tick, stale, &none) < 0)
		exit(99);
	TAP_OK(scans == 1 && !rec_of(&tp, child),
	       "rescan: the first tick lists /proc; a process its pid's lookup missed is not known");
	tick += 50;
	if (pl__tprocs_tick(&tp, tick, stale, &none) < 0)
		exit(99);
	TAP_OK(rec_of(&tp, child) && tp.leader_lists == 1 && tp.dir_scans == scans,
	       "rescan: 50 ticks on, the walk of the process list finds it, and /proc is not "
	       "listed (walks %llu, listings %llu)",
	       (unsigned long long)tp.leader_lists, (unsigned long long)(tp.dir_scans - scans));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	pl__tprocs_free(&tp);
	probe_force(NULL);
}

/* A watched process is checked every tick for whether it ran: with the
 * scan, from the run time the scan's own run read (no system call of its
 * own), and a tick at which it did not run reads neither its stat nor its
 * io; after it wrote, the next tick reads its io and has its writes. */
static void scan_ran_case(int rootfd, const char *dir)
{
	static const char *const names[] = { "pl-ranwatch" };
	struct pl_tprocs_cfg cfg = { names, 1, true, false, 100, false, 0, 100.0, false };
	struct pl_tprocs tp;
	uint64_t reads;
	int cmd[2], ack[2], child;
	struct pl_tproc *p;
	char c = 'w', path[128];

	snprintf(path, sizeof(path), "%s/ranwatch", dir);
	probe_force(watch_force);
	if (pipe(cmd) || pipe(ack) || pl__tprocs_init(&tp, &cfg) < 0 ||
	    pl__tprocs_set_root(&tp, rootfd, true) < 0)
		exit(99);
	use_kind(&tp.dwatch);
	if (!tp.dwatch.scan.ran_check) {
		TAP_SKIP("no run-time read in the scan on this kernel (no CONFIG_SCHED_INFO, or the "
			 "gate's absent)");
		TAP_SKIP("so none to test");
		TAP_SKIP("nor its writes");
		pl__tprocs_free(&tp);
		probe_force(NULL);
		return;
	}
	child = fork();
	if (child == 0) {
		static char block[8192];
		int fd;

		prctl(PR_SET_NAME, "pl-ranwatch", 0, 0, 0);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		close(cmd[1]);
		close(ack[0]);
		if (fd < 0 || write(ack[1], &c, 1) != 1)
			_exit(1);
		while (read(cmd[0], &c, 1) == 1) {
			if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block) ||
			    write(ack[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(cmd[0]);
	close(ack[1]);
	if (read(ack[0], &c, 1) != 1)
		exit(99);
	wait_state(child, 'S');
	probe_tick(&tp);
	probe_tick(&tp);
	reads = tp.scan_ran_reads;
	probe_tick(&tp);
	p = rec_of(&tp, child);
	TAP_OK(p && p->label >= 0 && tp.scan_ran_reads > reads && p->seen_tick == tick &&
		       !p->woke_now && p->io_tick == tick && p->gap_wchar == 0,
	       "scan ran: a watched process asleep is checked from the scan's read of its run "
	       "time (%llu such reads), and not read further",
	       (unsigned long long)(tp.scan_ran_reads - reads));
	if (write(cmd[1], &c, 1) != 1 || read(ack[0], &c, 1) != 1)
		exit(99);
	wait_state(child, 'S');
	reads = tp.scan_ran_reads;
	probe_tick(&tp);
	p = rec_of(&tp, child);
	TAP_OK(p && tp.scan_ran_reads > reads && p->woke_now && p->io_now && p->gap_wchar >= 8192,
	       "scan ran: after it wrote, it is found to have run, and its 8 KiB are read (%lld)",
	       p ? (long long)p->gap_wchar : -1LL);
	probe_tick(&tp);
	p = rec_of(&tp, child);
	TAP_OK(p && !p->woke_now && p->gap_wchar == 0,
	       "scan ran: asleep again, the tick after has it not run");
	close(cmd[1]);
	waitpid(child, NULL, 0);
	close(ack[0]);
	unlink(path);
	pl__tprocs_free(&tp);
	probe_force(NULL);
}

static void self_case(int rootfd)
{
	struct pl_tprocs_cfg cfg = { watch, 1, true, false, 100, false, 0, 100.0, false };
	struct pl_tprocs_hint none = { false, 0, 0 };
	struct pl_tprocs tp;
	struct pl_tproc *me;

	if (pl__tprocs_init(&tp, &cfg) < 0 || pl__tprocs_set_root(&tp, rootfd, true) < 0)
		exit(99);
	use_kind(&tp.dwatch);
	pl__tprocs_tick(&tp, ++tick, 0, &none);
	me = rec_of(&tp, getpid());
	TAP_OK(me && me->io_now && me->state == 'R', "the first tick reads the tracer: running (%c)",
	       me ? me->state : '?');
	do
		tick++;
	while (tick % 10 == (unsigned)getpid() % 10);
	pl__tprocs_tick(&tp, tick, 0, &none);
	me = rec_of(&tp, getpid());
	TAP_OK(me && !pl__tproc_read_now(&tp, me), "the next one, not its slice, does not");
	pl__tprocs_free(&tp);
}

int main(void)
{
	char dir[] = "pl-test-dwatch.XXXXXX", path[64];
	int rootfd, ticks;

	pl__log_init("test_tracer_dwatch", true, 0);
	/* meson's exe wrapper, qemu-user in the cross suites: it runs vfork as
	 * fork, reads no other process's CPU clock and passes no BPF through,
	 * which is all these tests are about */
	if (getenv("MESON_EXE_WRAPPER") && *getenv("MESON_EXE_WRAPPER")) {
		TAP_SKIP("under an emulator: no BPF, vfork or other processes' CPU clocks");
		return tap_done();
	}
	/* in the build tree: a file system with an inode lock of its own */
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 99;
	}
	snprintf(path, sizeof(path), "%s/locked", dir);
	rootfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0 || close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) < 0)
		return 99;

	/* each watch the kernel has: the scan (6.7), the switch one (5.18) */
	for (int k = 0; k < 2; k++) {
		struct pl_dwatch w;
		int err;

		watch_force = k == 0 ? NULL : "task_iter";
		watch_kind = k == 0 ? PL_DWATCH_SCAN : PL_DWATCH_SWITCH;
		probe_force(watch_force);
		err = pl__dwatch_open(&w, false);
		use_kind(&w);
		if (err < 0 || w.kind != watch_kind) {
			/* not root, no BPF, an older kernel, a container */
			printf("# no %s watch here: %s\n", k == 0 ? "scan" : "switch",
			       err < 0 ? strerror(-err) : pl__dwatch_kind_name(&w));
			TAP_SKIP(k == 0 ? "no scan D watch on this system" : "no switch D watch on this system");
			if (err == 0)
				pl__dwatch_close(&w);
			continue;
		}
		pl__dwatch_close(&w);
		printf("# the %s watch\n", k == 0 ? "scan" : "switch");
		ticks = lock_wait_case(rootfd, path, true);
		if (ticks >= 0)
			TAP_OK(ticks == 1, "with the watch: read in D at the next tick, asleep at its "
				   "last reading and not its slice (%d ticks)", ticks);
		vfork_case(rootfd);
		wchan_kept_case(rootfd, path);
		writer_case(rootfd, path);
		if (watch_kind == PL_DWATCH_SWITCH)
			overflow_case(rootfd);
		else
			scan_case();
		if (watch_kind == PL_DWATCH_SCAN) {
			steer_case();
			rescan_case(rootfd);
			settle_case(rootfd);
			scan_ran_case(rootfd, dir);
		}
		births_case(rootfd, true, 0);
		births_case(rootfd, true, 100);
		reaped_case(rootfd, dir, true);
		quiet_reap_case(rootfd, dir, false);
		quiet_reap_case(rootfd, dir, true);
	}
	watch_force = NULL;
	self_case(rootfd);
	births_case(rootfd, false, 0);
	births_case(rootfd, false, 100);
	reaped_case(rootfd, dir, false);
	ticks = lock_wait_case(rootfd, path, false);
	if (ticks >= 0)
		TAP_OK(ticks >= 2 && ticks <= 10,
	       "without it: left as it was until its slice, within a second (%d ticks)", ticks);
	TAP_OK(mirror_ticks > 50 && mirror_bad == 0,
	       "each entry's wrote_until kept apart is its history's, over %lu ticks (%lu wrong)",
	       mirror_ticks, mirror_bad);
	TAP_OK(pl__probe_state(PL_PROBE_SCHED_BPF) == PL_PROBE_ABSENT &&
		       strstr(pl__probe_message(PL_PROBE_SCHED_BPF), "forced"),
	       "the refusal is said: %s", pl__probe_message(PL_PROBE_SCHED_BPF));
	probe_force(NULL);
	unlink(path);
	rmdir(dir);
	close(rootfd);
	return tap_done();
}
