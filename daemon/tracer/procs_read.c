/* Reading one process. Each per-pid file is a system call, and most
 * processes sleep from one tick to the next: so the leader's run time is
 * read first (schedstat, or for a single-threaded process its CPU clock,
 * one call with no file), and stat and io only when it ran since the last
 * reading. A kept fd fails with ESRCH once its process is gone, even if its
 * pid is reused; a file opened by path (a recorded tree, or past the fd
 * budget) is checked by starttime instead. */
#include "procs_read.h"
#include "procs_plan.h"
#include "procs_reap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static bool gone_err(ssize_t n)
{
	return n == -ESRCH || n == -ENOENT;
}

/* Open a per-pid file to keep, while the fd budget allows (else *fdp stays
 * -1 and the file is opened by path at each read). 0 or -errno. */
static int keep_open(struct pl_tprocs *tp, const char *rel, int *fdp)
{
	int fd;

	if (*fdp >= 0 || !tp->kept || tp->fds_open >= tp->fd_budget)
		return 0;
	do
		fd = openat(tp->rootfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		if (errno != EMFILE && errno != ENFILE)
			return -errno;
		tp->fd_budget = tp->fds_open;
		if (!tp->warned_fds) {
			tp->warned_fds = true;
			pl__log_warnx("out of fds after %ld kept /proc files: reopening "
				      "the rest each tick",
				      tp->fds_open);
		}
		return 0;
	}
	*fdp = fd;
	tp->fds_open++;
	return 0;
}

/* One per-pid file into the shared buffer: through the kept fd, or opened
 * now and kept while the budget allows, or opened, read and closed. */
static ssize_t read_pid_file(struct pl_tprocs *tp, const struct pl_tproc *p, int *fdp,
			     const char *name)
{
	struct pl_procfile pf;
	char rel[48];
	ssize_t n;
	int err;

	if (*fdp < 0) {
		snprintf(rel, sizeof(rel), "%d/%s", p->pid, name);
		if ((err = keep_open(tp, rel, fdp)) < 0)
			return err;
		if (*fdp < 0)
			return pl__procfile_read_once(&tp->scratch, tp->rootfd, rel);
	}
	pf = tp->scratch;
	pf.fd = *fdp;
	n = pl__procfile_read(&pf);
	tp->scratch.buf = pf.buf; /* the buffer may have grown */
	tp->scratch.cap = pf.cap;
	tp->scratch.len = pf.len;
	return n;
}

/* Kept open while the process lives: a victim's wchan is read at every D
 * sample of its episode. */
ssize_t pl__tproc_read_wchan(struct pl_tprocs *tp, struct pl_tproc *p)
{
	return read_pid_file(tp, p, &p->wchan_fd, "wchan");
}

const char *pl__tproc_wchan_now(struct pl_tprocs *tp, struct pl_tproc *p)
{
	if (pl__tproc_read_wchan(tp, p) <= 0)
		return NULL;
	tp->wchan_reads++;
	return tp->scratch.buf;
}

/* "runtime_ns wait_ns timeslices\n". false when absent or all zero (a kernel
 * that keeps no sched_info prints zeros). */
static bool parse_schedstat(const char *buf, uint64_t *run_ns, uint64_t *pcount)
{
	const char *s = buf;
	uint64_t wait;

	if (pl__parse_u64(&s, run_ns) < 0 || *s++ != ' ' || pl__parse_u64(&s, &wait) < 0 ||
	    *s++ != ' ' || pl__parse_u64(&s, pcount) < 0)
		return false;
	return *run_ns || *pcount;
}

/* A process's CPU clock id as the kernel encodes it (the pid, inverted,
 * above CPUCLOCK_SCHED): computed here, as glibc's clock_getcpuclockid
 * spends a system call checking the pid first. */
static clockid_t process_cpuclock(int pid)
{
	return (clockid_t)((~(unsigned)pid << 3) | 2u);
}

bool pl__tproc_cpuclock_works(void)
{
	clockid_t mine;
	struct timespec ts;

	return clock_getcpuclockid(getpid(), &mine) == 0 &&
	       mine == process_cpuclock((int)getpid()) && clock_gettime(mine, &ts) == 0;
}

int pl__tproc_read_cpuclock(int pid, uint64_t *run_ns)
{
	struct timespec ts;

	if (clock_gettime(process_cpuclock(pid), &ts) != 0)
		return -ESRCH; /* EINVAL: no process has that pid now */
	*run_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return 0;
}

/* Sets *ran unless the run time proves the leader did not run. Returns the
 * read's error, so that a kernel without schedstat can be told apart. A
 * process's clock is its leader's run time only while it has one thread. */
static ssize_t read_schedstat(struct pl_tprocs *tp, struct pl_tproc *p, bool *ran)
{
	uint64_t run_ns, pcount = 0;
	bool clock = tp->cpuclock && p->num_threads <= 1;
	ssize_t n;

	*ran = true;
	if (tp->cfg.stat_every_tick || tp->no_schedstat) {
		p->ss_ok = false;
		return 0;
	}
	tp->schedstat_reads++;
	if (clock) {
		n = pl__tproc_read_cpuclock(p->pid, &run_ns);
		if (n < 0) {
			p->ss_ok = false;
			return n;
		}
	} else {
		n = read_pid_file(tp, p, &p->ss_fd, "schedstat");
		if (n < 0 || !parse_schedstat(tp->scratch.buf, &run_ns, &pcount)) {
			p->ss_ok = false; /* the stat read decides whether it is gone */
			return n < 0 ? n : 0;
		}
	}
	/* a baseline from the other source says nothing */
	*ran = !p->ss_ok || p->ss_clock != clock || run_ns != p->ss_run_ns ||
	       pcount != p->ss_pcount;
	p->ss_clock = clock;
	p->woke_now = p->ss_ok && *ran;
	p->idle_now = p->ss_ok && !*ran;
	p->ss_ok = true;
	p->ss_run_ns = run_ns;
	p->ss_pcount = pcount;
	return 0;
}

/* stat's RSS in kB; -1 when it says none (a kernel thread, a record
 * without it) */
static int64_t rss_kb(const struct pl_pid_stat *st)
{
	static long page_kb;

	if (!page_kb)
		page_kb = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) / 1024 : 4;
	return st->rss_pages > 0 && st->rss_pages < INT64_MAX / 1024 ? st->rss_pages * page_kb : -1;
}

/* Fill a record from a stat read of a process new to it: no deltas until
 * the next reading. */
static void fresh(struct pl_tprocs *tp, struct pl_tproc *p, const struct pl_pid_stat *st,
		  uint64_t tick)
{
	memcpy(p->comm, st->comm, sizeof(p->comm));
	p->starttime = st->starttime_ticks;
	p->state = st->state;
	p->ppid = st->ppid;
	p->num_threads = st->num_threads;
	p->blkio_ticks = st->blkio_ticks;
	p->has_blkio = st->has_blkio;
	p->reap_wbytes = p->reap_wchar = p->reap_rbytes = 0;
	p->rss_kb = rss_kb(st);
	memset(&p->csv, 0, sizeof(p->csv));
	memset(&p->odd_blkio, 0, sizeof(p->odd_blkio));
	p->label = pl__tracer_match(tp->cfg.watch, tp->cfg.nwatch, p->comm);
	p->io_tick = 0;
	p->io_denied = false;
	p->first_tick = tick;
	p->stat_now = true;
	p->d_blk_ms = 0;
	pl__writes_reset(&p->writes, tick);
	memset(&p->victim, 0, sizeof(p->victim));
	pl__memcg_close(&p->memcg); /* another process's, under a reused pid */
	p->memcg_have0 = false;
}

/* The block-I/O delay since the last read, in ms, for the stall detector.
 * No process can have waited longer than it has lived, once per thread: a
 * larger (or negative) delta is the kernel's, as when kernel.task_delayacct
 * is switched on while a task is inside an I/O wait, which then ends with a
 * start time of 0. Such a delta is never a stall (0 here; the CSV keeps
 * it), and it is said once per process, in the log and the events file. */
static double blkio_delta_ms(struct pl_tprocs *tp, struct pl_tproc *p,
			     const struct pl_pid_stat *st)
{
	static struct pl__ratelimit rl = PL_RATELIMIT_INIT(10000);
	double per_tick_ms = 1000.0 / (double)tp->cfg.clk_tck;
	double d = (double)(int64_t)(st->blkio_ticks - p->blkio_ticks) * per_tick_ms;
	double age_ms = tp->now_ms - (double)st->starttime_ticks * per_tick_ms;
	double threads = st->num_threads > 0 ? (double)st->num_threads : 1;

	/* a recorded tree's times may not match its start times: no check
	 * without a plausible age */
	if (d >= 0 && (age_ms <= 0 || d <= (age_ms + per_tick_ms) * threads))
		return d;
	tp->implausible_blkio++;
	if (!p->odd_blkio.said) {
		p->odd_blkio.said = p->odd_blkio_now = true;
		p->odd_blkio.d_blk_ms = d;
		p->odd_blkio.age_ms = age_ms;
		pl__log_warnx_limited(&rl, "tracer: %s[%d]: block-I/O delay grew by %.0f ms, "
				      "more than its %.0f ms of life: in the CSV as the kernel "
				      "said, not a stall (kernel.task_delayacct switched on "
				      "during a wait?)", p->comm, p->pid, d, age_ms);
	}
	return 0;
}

/* 0, -ESRCH when the process is gone, -EIO when this tick's stat could not
 * be used. */
static int update_stat(struct pl_tprocs *tp, struct pl_tproc *p, uint64_t tick)
{
	struct pl_pid_stat st;
	ssize_t n;

	tp->stat_reads++;
	n = read_pid_file(tp, p, &p->stat_fd, "stat");
	if (n < 0) {
		if (gone_err(n))
			return -ESRCH;
		tp->read_errors++;
		return -EIO;
	}
	if (pl__parse_pid_stat(tp->scratch.buf, &st) < 0 || st.pid != p->pid) {
		tp->read_errors++;
		return -EIO;
	}
	if (st.starttime_ticks != p->starttime) {
		/* the pid was reused: another process, no delta against the old */
		tp->pid_reuses++;
		fresh(tp, p, &st, tick);
		p->ss_ok = false;
		return 0;
	}
	p->d_blk_ms = 0;
	if (st.has_blkio && p->has_blkio && !tp->cfg.no_blkio) {
		p->d_blk_ms = blkio_delta_ms(tp, p, &st);
		p->woke_now |= st.blkio_ticks != p->blkio_ticks;
	}
	if (strcmp(st.comm, p->comm) != 0) {
		memcpy(p->comm, st.comm, sizeof(p->comm));
		p->label = pl__tracer_match(tp->cfg.watch, tp->cfg.nwatch, p->comm);
		p->io_denied = false; /* an exec may have changed who owns it */
	}
	if (rss_kb(&st) >= 0) {
		if (p->rss_kb >= 0)
			p->gap_rss_kb = rss_kb(&st) - p->rss_kb;
		p->rss_kb = rss_kb(&st);
	}
	p->state = st.state;
	p->ppid = st.ppid;
	p->num_threads = st.num_threads;
	p->blkio_ticks = st.blkio_ticks;
	p->has_blkio = st.has_blkio;
	p->stat_now = true;
	p->stat_behind = false;
	return 0;
}

/* p's io from /proc: 1 with *io, 0 when there is none to take this tick
 * (refused, which is kept; unreadable), -ESRCH when it is gone. */
static int read_io(struct pl_tprocs *tp, struct pl_tproc *p, struct pl_pid_io *io)
{
	ssize_t n = read_pid_file(tp, p, &p->io_fd, "io");

	if (n < 0) {
		if (n == -EACCES || n == -EPERM) {
			p->io_denied = true;
			tp->io_denied++;
			pl__tproc_close_fd(tp, &p->io_fd);
			return 0;
		}
		if (gone_err(n))
			return -ESRCH;
		tp->read_errors++;
		return 0;
	}
	if (pl__parse_pid_io(tp->scratch.buf, io) < 0 || !(io->have & PL_IO_HAVE_WCHAR)) {
		tp->read_errors++;
		return 0;
	}
	return 1;
}

/* 0, or -ESRCH when the process is gone. last_tick: its last reading. io is
 * read for the CSV (watched, in D) and, with --track-writers, for the bully. */
static int update_io(struct pl_tprocs *tp, struct pl_tproc *p, uint64_t tick, bool ran,
		     uint64_t last_tick)
{
	struct pl_pid_io io;
	bool want = p->label >= 0 || p->state == 'D' || tp->cfg.track_writers;
	int r;

	if (!want || p->io_denied)
		return 0;
	/* one task that did not run wrote nothing since the last reading */
	if (p->ss_ok && !ran && p->num_threads <= 1 && p->io_tick && p->io_tick >= last_tick) {
		p->io_now = true; /* a delta of 0 */
		p->io_tick = tick;
		return 0;
	}
	tp->io_reads++;
	if ((r = read_io(tp, p, &io)) <= 0)
		return r;
	if (p->io_tick) {
		/* the bully history counts from the last reading (the CSV from
		 * its own baseline, tracer_baseline.c) */
		p->gap_wchar = (int64_t)(io.wchar - p->wchar);
		p->gap_wbytes = (int64_t)(io.write_bytes - p->wbytes);
		p->gap_rbytes = (int64_t)(io.read_bytes - p->rbytes);
	}
	p->rbytes = io.read_bytes;
	p->rchar = io.rchar;
	p->wchar = io.wchar;
	p->wbytes = io.write_bytes;
	p->io_tick = tick;
	p->io_now = true;
	return 0;
}

static void clear_tick(struct pl_tproc *p)
{
	p->odd_blkio_now = false;
	p->woke_now = p->idle_now = false;
	p->stat_now = p->io_now = false;
	p->d_blk_ms = 0;
	p->gap_wchar = p->gap_wbytes = 0;
	p->gap_rbytes = p->gap_rss_kb = 0;
}

/* After a reading: the bully history, the next reading, the tick's list. */
static void read_done(struct pl_tprocs *tp, struct pl_tproc *p, uint64_t tick)
{
	pl__tproc_put_writes(p, tick);
	if (p->state == 'D' || p->d_blk_ms > 0)
		pl__writes_mark_blocked(&p->writes, tick);
	p->seen_tick = tick;
	if (p->state == 'D')
		p->d_tick = tick;
	pl__plan_mark_hot(p, tick);
	pl__plan_next_read(tp, (size_t)(p - tp->v), tick);
	pl__tprocs_touch(tp, (size_t)(p - tp->v));
}

bool pl__tproc_reread(struct pl_tprocs *tp, struct pl_tproc *p, uint64_t tick)
{
	uint64_t last_tick = p->seen_tick;
	bool ran;
	int err = 0;

	clear_tick(p);
	read_schedstat(tp, p, &ran);
	if (!p->ss_ok || ran || p->stat_behind || !pl__state_sleeping(p->state) ||
	    tp->cfg.stat_every_tick) {
		uint64_t before = p->first_tick;

		if ((err = update_stat(tp, p, tick)) == -ESRCH)
			return false;
		if (p->first_tick != before)
			ran = true; /* a new process under an old pid */
	} else {
		p->stat_now = true; /* did not run: state and blkio as they were */
	}
	if (err == 0 && update_io(tp, p, tick, ran, last_tick) == -ESRCH)
		return false;
	pl__reap_settle(tp, p, tick, true);
	read_done(tp, p, tick);
	return true;
}

/* A new process's stat, opening its files (to keep). 1 with *st; 0 when it
 * is gone, a thread or unreadable (its fds closed). With CPU clocks the
 * clock is read first: a pid gone already (most, under churn) or a
 * thread's (which has no process clock) then costs no open. */
static int read_new(struct pl_tprocs *tp, struct pl_tproc *p, struct pl_pid_stat *st)
{
	bool clock_first = tp->cpuclock && !tp->cfg.stat_every_tick, ran;
	ssize_t n, ss_err = 0;
	char rel[48];

	if (clock_first && (ss_err = read_schedstat(tp, p, &ran)) < 0)
		return 0;
	snprintf(rel, sizeof(rel), "%d/stat", p->pid);
	if (keep_open(tp, rel, &p->stat_fd) < 0)
		return 0;
	if (!clock_first)
		ss_err = read_schedstat(tp, p, &ran);
	n = read_pid_file(tp, p, &p->stat_fd, "stat");
	tp->stat_reads++;
	if (n < 0 || pl__parse_pid_stat(tp->scratch.buf, st) < 0 || st->pid != p->pid) {
		if (n >= 0)
			tp->read_errors++;
		pl__tproc_close(tp, p);
		return 0;
	}
	if (st->exit_signal == -1) {
		/* a thread, which /proc/TID opens for though it is not listed */
		pl__tproc_close(tp, p);
		return 0;
	}
	if (ss_err == -ENOENT && tp->kept && !tp->no_schedstat) {
		tp->no_schedstat = true; /* stat is there, schedstat is not */
		pl__tproc_close_fd(tp, &p->ss_fd);
	}
	return 1;
}

int pl__tproc_add(struct pl_tprocs *tp, int pid, uint64_t tick, bool born)
{
	struct pl_tproc *p;
	struct pl_pid_stat st;
	int err;

	if (tp->n == tp->cap && (err = pl__tprocs_grow(tp)) < 0)
		return err;
	p = &tp->v[tp->n];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->stat_fd = p->io_fd = p->ss_fd = p->wchan_fd = -1;
	p->memcg = (struct pl_memcg)PL_MEMCG_INIT;
	if (read_new(tp, p, &st) <= 0)
		return 0;
	fresh(tp, p, &st, tick);
	if (p->ss_clock && p->num_threads > 1)
		p->ss_ok = false; /* its clock counts other threads than the leader */
	if (update_io(tp, p, tick, true, tick) == -ESRCH) {
		pl__tproc_close(tp, p);
		return 0;
	}
	if (born)
		pl__reap_credit_birth(tp, p);
	tp->due[tp->n].pid = pid;
	tp->n++;
	read_done(tp, p, tick);
	if (tp->scan_tick && p->ppid > 0 &&
	    tp->n_new_children < sizeof(tp->new_children) / sizeof(tp->new_children[0]))
		tp->new_children[tp->n_new_children++] = p->pid;
	return 1;
}
