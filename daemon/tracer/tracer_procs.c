/* The tracer's per-process table: one record per live process, keyed by pid
 * and starttime, holding the kept-open fds of its stat, io and schedstat.
 *
 * Cost is what this file is about. Each read of a per-pid file is a syscall
 * that costs 1-3 us with cold caches, /proc/PID/stat ~5 us; the Python tool
 * spends ~50 us a process. At 10 Hz with 250-500 processes, reading even one
 * file of every process every tick costs 15 times less than Python, not 30.
 * So a tick reads:
 *  - watched processes, those last seen running or in D, and those seen in
 *    D or dirtying pages in the last HOT_TICKS, every tick;
 *  - a tenth of the other (sleeping) ones by pid, so that each is re-read
 *    at least once a second;
 *  - and then all the others, when the caller says a task may have blocked
 *    (PSI io or memory stall time grew during the tick, or, without PSI,
 *    /proc/stat's procs_blocked is non-zero) and what was read does not
 *    account for it: /proc/stat counts more tasks in an I/O wait than the
 *    first pass found in D, or (with --track-writers, for the bully) vmstat
 *    counts more pages dirtied than the processes read wrote (write_bytes
 *    is counted when a page is dirtied, so the two agree when every writer
 *    was read). Under a stall where the bully and the victim are known,
 *    that is a tick in ten, not every tick. An excess of blocked tasks that
 *    the processes read may explain (pl__blocked_rule_sweep) waits a tick,
 *    never two in a row.
 *    A sleeping task can only enter D by running, and I/O waits show in PSI
 *    and procs_blocked, so what this misses is a D state that is not an I/O
 *    wait (a vfork parent, a mutex) for up to a second. --stat-every-tick
 *    reads all.
 * With the D watch (dstate_watch.h: the kernel names each leader switched
 * out in D), none of that is needed to find a D state: a tick reads the
 * watched processes, those noted, those in D at their last reading, new
 * ones that lived on since the last tick (births, below), those running at
 * their last reading, writers for HOT_TICKS, and a
 * fiftieth of the others (for the writes no counter sent the sweep to, an
 * exec, an exit); an unwatched one out of D and not noted for its io alone.
 * The sleeping ones are all read only when the dirty balance says so (or
 * the watch's ring overflowed).
 * For a process it reads, schedstat first (for a single-threaded one, its
 * CPU clock instead, a third cheaper): if the leader did not run since
 * the last reading, its state and blkio cannot have changed (a task must run
 * to enter D), and neither can a single-threaded process's io counters (its
 * writes are accounted to itself), so stat and io are skipped. io is read
 * for watched and D-state processes (the CSV) and, to name the bully, for
 * any that may have written. New processes are looked for only when
 * loadavg's last pid says a task was created: up to PROBE_MAX new pids are
 * looked up one by one (on a live procfs of this pid namespace), more mean
 * a directory scan, as does every 50th tick in any case.
 *
 * With a kept fd, a process that exits fails the next read with ESRCH even
 * if its pid is reused; a file opened by path (a recorded tree, or past the
 * fd budget) is checked by starttime instead. */
#include "tracer_priv.h"
#include "fd_budget.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"

#define RESCAN_TICKS PL_TRESCAN_TICKS
#define SLICES 10 /* sleeping processes are re-read every SLICES ticks */
/* With the D watch, which names each one that goes into D, the slices only
 * put the writes of sleeping processes no counter sent the sweep to into
 * the bully's history, and find an exec or an exit: every 5 s at 10 Hz. */
#define SLICES_WATCHED 50
/* new pids a tick looked up one by one; more: a scan. A pid gone already
 * costs one failed clock read (0.1-0.4 us), a scan 400-600 us */
#define PROBE_MAX 256
#define HOT_TICKS 10 /* and those lately in D or dirtying pages every tick */
#define NOTES_MAX 1024 /* leaders gone into D a tick; more: all are read */
#define DIRTY_FLOOR_BYTES ((int64_t)1 << 20)
/* Pages dirtied by no process read: a writer that exited since its last
 * reading, a kernel thread's metadata. Up to this much (over ticks, the
 * balance adds up) is left to the slices, which read every process within
 * SLICES ticks and put what it wrote since into the tick it was read. */
#define DIRTY_SLACK_BYTES ((int64_t)64 << 10)

int pl__tracer_match(const char *const *watch, size_t nwatch, const char *comm)
{
	for (size_t i = 0; i < nwatch; i++) {
		if (strstr(comm, watch[i]))
			return (int)i;
	}
	return -1;
}

int pl__tprocs_init(struct pl_tprocs *tp, const struct pl_tprocs_cfg *cfg)
{
	const struct pl_procfile init = PL_PROCFILE_INIT;

	memset(tp, 0, sizeof(*tp));
	tp->cfg = *cfg;
	tp->rootfd = -1;
	tp->scanfd = -1;
	tp->scratch = init;
	tp->fd_budget = cfg->fd_budget > 0 ? cfg->fd_budget : pl__fd_budget();
	tp->dents_cap = 32768;
	tp->dents = malloc(tp->dents_cap);
	tp->notes_cap = NOTES_MAX;
	tp->notes = malloc(tp->notes_cap * sizeof(*tp->notes));
	if (!tp->dents || !tp->notes)
		return -ENOMEM;
	return 0;
}

static void close_fd(struct pl_tprocs *tp, int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		tp->fds_open--;
	}
	*fd = -1;
}

static void close_entry(struct pl_tprocs *tp, struct pl_tproc *p)
{
	close_fd(tp, &p->stat_fd);
	close_fd(tp, &p->io_fd);
	close_fd(tp, &p->ss_fd);
	close_fd(tp, &p->wchan_fd);
}

void pl__tprocs_free(struct pl_tprocs *tp)
{
	for (size_t i = 0; i < tp->n; i++)
		close_entry(tp, &tp->v[i]);
	if (tp->scanfd >= 0)
		close(tp->scanfd);
	free(tp->v);
	free(tp->due);
	free(tp->wrote_until);
	free(tp->touched);
	free(tp->hash);
	free(tp->dents);
	free(tp->notes);
	if (tp->dwatch.on)
		pl__dwatch_close(&tp->dwatch);
	pl__procfile_free(&tp->scratch);
	memset(tp, 0, sizeof(*tp));
	tp->scanfd = -1;
}

/* Does the root's "self" name this process, i.e. is it a procfs of this
 * process's pid namespace? */
static bool self_is(int rootfd, pid_t pid)
{
	char link[24], want[24];
	ssize_t n = readlinkat(rootfd, "self", link, sizeof(link) - 1);

	if (n <= 0)
		return false;
	link[n] = '\0';
	snprintf(want, sizeof(want), "%d", (int)pid);
	return strcmp(link, want) == 0;
}

/* A process's POSIX CPU clock (clock_getcpuclockid(3)) as the kernel
 * encodes it: the pid, inverted, above CPUCLOCK_SCHED (2), the per-thread
 * bit clear. Computed here because glibc's clock_getcpuclockid makes a
 * clock_getres call to check the pid first, one syscall a process more. */
static clockid_t process_cpuclock(int pid)
{
	return (clockid_t)((~(unsigned)pid << 3) | 2u);
}

/* Can a process's run time be read from its CPU clock? The encoding must be
 * libc's (checked on this process) and the kernel must have CPU clocks
 * (CONFIG_POSIX_TIMERS). */
static bool cpuclock_works(void)
{
	clockid_t mine;
	struct timespec ts;

	return clock_getcpuclockid(getpid(), &mine) == 0 &&
	       mine == process_cpuclock((int)getpid()) && clock_gettime(mine, &ts) == 0;
}

int pl__tprocs_set_root(struct pl_tprocs *tp, int rootfd, bool keep_fds)
{
	int fd;

	for (size_t i = 0; i < tp->n; i++)
		close_entry(tp, &tp->v[i]);
	if (tp->scanfd >= 0)
		close(tp->scanfd);
	tp->scanfd = -1;
	tp->rootfd = rootfd;
	tp->kept = keep_fds;
	tp->no_schedstat = false;
	tp->n_births = 0;
	fd = pl__procdir_open(rootfd, ".");
	if (fd < 0)
		return fd;
	tp->scanfd = fd;
	tp->own_pid_ns = keep_fds && self_is(rootfd, getpid());
	tp->self_pid = tp->own_pid_ns ? (int)getpid() : 0;
	/* a clock is looked up by pid in this process's pid namespace */
	tp->cpuclock = tp->own_pid_ns && cpuclock_works();
	/* the watch's pids are this namespace's (it checks that it is the
	 * initial one); --stat-every-tick reads every process anyway */
	if (tp->own_pid_ns && !tp->cfg.stat_every_tick && !tp->cfg.no_d_watch && !tp->dwatch.on)
		pl__dwatch_open(&tp->dwatch, tp->cost != NULL);
	else if (!tp->own_pid_ns && tp->dwatch.on)
		pl__dwatch_close(&tp->dwatch);
	return 0;
}

static bool gone_err(ssize_t n)
{
	return n == -ESRCH || n == -ENOENT;
}

/* One per-pid file into the shared buffer: through the kept fd, or opened
 * now and kept while the budget allows, or opened, read and closed. */
/* Open a per-pid file to keep, while the fd budget allows (else *fdp stays
 * -1 and the file is opened by path on each read). 0 or -errno. */
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

static ssize_t read_pid_file_untimed(struct pl_tprocs *tp, const struct pl_tproc *p, int *fdp,
				     const char *name)
{
	struct pl_procfile pf;
	char rel[48];
	ssize_t n;
	int err;

	if (*fdp < 0) { /* the path is made only to open it: most reads use a kept fd */
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

static ssize_t read_pid_file(struct pl_tprocs *tp, const struct pl_tproc *p, int *fdp,
			     const char *name)
{
	uint64_t t0 = pl__tcost_now(tp->cost);
	ssize_t n = read_pid_file_untimed(tp, p, fdp, name);

	pl__tcost_read(tp->cost, tp->phase, t0);
	return n;
}

/* A victim in D has its wchan read every tick of an episode. Opened each
 * time (a path walk, the dentry put at close: 5.6 us back to back against
 * 1.7 through a kept fd), it was a third of the tick's output phase under
 * the bench's stall load: two builds side by side, each started first once,
 * 31 and 41 us a tick for the output against 45 and 58. */
ssize_t pl__tproc_read_wchan(struct pl_tprocs *tp, struct pl_tproc *p)
{
	return read_pid_file_untimed(tp, p, &p->wchan_fd, "wchan");
}

/* A process in D now: in D at the last tick's sample too and not run
 * since (its run time and switch count as they were), it is in the same
 * wait, so its wchan is the one read then, taken again without a read,
 * which costs ~11 us of CPU on the test VM (the kernel unwinds the task's
 * stack and looks the name up). A woken task that has not run yet reads
 * as R, and has no D sample to ask for. */
const char *pl__tproc_wchan_now(struct pl_tprocs *tp, struct pl_tproc *p)
{
	size_t len;

	if (p->wchan_tick && p->wchan_tick + 1 == tp->tick && p->idle_now) {
		tp->wchan_kept++;
		p->wchan_tick = tp->tick;
		return p->last_wchan;
	}
	if (pl__tproc_read_wchan(tp, p) <= 0) {
		p->wchan_tick = 0;
		return NULL;
	}
	tp->wchan_reads++;
	len = strcspn(tp->scratch.buf, "\n");
	if (len >= sizeof(p->last_wchan))
		len = sizeof(p->last_wchan) - 1;
	memcpy(p->last_wchan, tp->scratch.buf, len);
	p->last_wchan[len] = '\0';
	p->wchan_tick = tp->tick;
	return tp->scratch.buf;
}

void pl__tproc_put_writes(struct pl_tprocs *tp, struct pl_tproc *p, uint64_t tick)
{
	pl__writes_put(&p->writes, tick, p->gap_wbytes, p->gap_wchar);
	pl__writes_put_mem(&p->writes, tick, p->gap_rbytes, p->gap_rss_kb);
	tp->wrote_until[p - tp->v] = p->writes.wrote_until;
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

static bool sleeping(char state)
{
	return state == 'S' || state == 'I' || state == 'T' || state == 't' || state == 'Z' ||
	       state == 'X' || state == 'x';
}

/* A single-threaded process's run time from its CPU clock: the sum of its
 * threads' run times, which is its leader's while it has no other. One
 * syscall with no fd, no seq_file and no text: 3.8 us against schedstat's
 * 6.0 us a process read once every 100 ms (cold caches), 1.4 against 1.7
 * back to back. 0, or -ESRCH when there is no such process. */
static int read_cpuclock(struct pl_tprocs *tp, int pid, uint64_t *run_ns)
{
	uint64_t t0 = pl__tcost_now(tp->cost);
	struct timespec ts;
	int r = clock_gettime(process_cpuclock(pid), &ts);

	pl__tcost_read(tp->cost, tp->phase, t0);
	if (r != 0)
		return -ESRCH; /* EINVAL: no process has that pid now */
	*run_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return 0;
}

/* Sets *ran unless the schedstat (or the CPU clock of a single-threaded
 * process) proves the leader did not run. Returns the read's error, so that
 * a kernel without the file can be told apart. num_threads is the last stat
 * reading's; a process that started a thread since ran, so its next reading
 * is a stat. */
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
	if (p->bpf_gone_tick == tp->tick + 1) {
		p->ss_ok = false; /* gone: update_stat says so without a read */
		return -ESRCH;
	}
	tp->schedstat_reads++;
	if (p->bpf_tick == tp->tick + 1) {
		/* read by the D scan this tick: its schedstat's fields */
		clock = false;
		run_ns = p->bpf_run_ns;
		pcount = p->bpf_pcount;
		tp->scan_ran_reads++;
	} else if (clock) {
		n = read_cpuclock(tp, p->pid, &run_ns);
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

/* Fill a fresh record from a stat read: no deltas until the next tick. */
/* stat's RSS in kB; -1 when it says none (a kernel thread, a record
 * without it) */
static int64_t rss_kb(const struct pl_pid_stat *st)
{
	static long page_kb;

	if (!page_kb)
		page_kb = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) / 1024 : 4;
	return st->rss_pages > 0 && st->rss_pages < INT64_MAX / 1024 ? st->rss_pages * page_kb : -1;
}

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
	memset(&p->csv, 0, sizeof(p->csv)); /* another process: no baseline */
	memset(&p->odd_blkio, 0, sizeof(p->odd_blkio));
	p->label = pl__tracer_match(tp->cfg.watch, tp->cfg.nwatch, p->comm);
	p->io_tick = 0;
	p->io_denied = false;
	p->first_tick = tick;
	p->stat_now = true;
	p->d_blk_ms = 0;
	p->walk_tick = 0;
	pl__writes_reset(&p->writes, tick);
	memset(&p->victim, 0, sizeof(p->victim));
}

/* The block-I/O delay since the last read, in ms, for the stall detector.
 * The kernel adds a wait's whole length when it ends, so one tick may carry
 * a long wait; but no process can have waited longer than it has existed,
 * once per thread. A larger (or a negative) delta is the kernel's, not the
 * process's: one way to get it is kernel.task_delayacct switched on while a
 * task was inside an I/O wait, which then ends with a start time of 0, so
 * the delay is the uptime. Such a delta is never taken for a stall (0 here;
 * the CSV still shows it, tracer_baseline.c), and why is said once per
 * process, in the log and in the events file. */
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

/* 0, or -ESRCH when the process is gone, -EIO when this tick's stat could
 * not be used. */
/* The D scan's record of p, read this tick, when it says all its stat and
 * io would (dstate_scan.h): the same fields, without the two reads. Not
 * when it is of another process under the same pid (its start time):
 * the kept fds are still the old one's, and reading them tells that it
 * is gone, as without the scan. */
static const struct pl_dscan_ran *scan_record(const struct pl_tprocs *tp,
					      const struct pl_tproc *p)
{
	const struct pl_dscan_ran *rec;

	if (p->bpf_tick != tp->tick + 1 || !p->bpf_fields || p->bpf_slot >= tp->dwatch.n_ran)
		return NULL;
	rec = &tp->dwatch.ran[p->bpf_slot];
	return rec->fields && rec->st.pid == p->pid && rec->st.starttime_ticks == p->starttime
		       ? rec
		       : NULL;
}

/* The scan's record of a pid not in the table yet, read this tick (a new
 * process, add_new_pids), and its slot; NULL when it was not asked for. */
static const struct pl_dscan_ran *new_record(const struct pl_tprocs *tp, int pid, size_t *slot)
{
	const struct pl_dwatch *w = &tp->dwatch;

	if (!w->ran_valid || tp->ran_tick != tp->tick)
		return NULL;
	for (size_t k = 0; k < w->n_ran; k++) {
		if (w->ran_pids[k] == pid) {
			*slot = k;
			return &w->ran[k];
		}
	}
	return NULL;
}

static int update_stat(struct pl_tprocs *tp, struct pl_tproc *p, uint64_t tick)
{
	const struct pl_dscan_ran *rec = scan_record(tp, p);
	struct pl_pid_stat st;
	ssize_t n = 0;

	if (p->bpf_gone_tick == tp->tick + 1)
		return -ESRCH; /* the scan's run found no such process this tick */
	tp->stat_reads++;
	if (rec) {
		st = rec->st;
		tp->scan_stat_reads++;
	} else {
		n = read_pid_file(tp, p, &p->stat_fd, "stat");
	}
	if (n < 0) {
		if (gone_err(n))
			return -ESRCH;
		tp->read_errors++;
		return -EIO;
	}
	if (!rec && (pl__parse_pid_stat(tp->scratch.buf, &st) < 0 || st.pid != p->pid)) {
		tp->read_errors++;
		return -EIO;
	}
	if (st.starttime_ticks != p->starttime) {
		/* The pid was reused: another process, no delta against the old. */
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
			close_fd(tp, &p->io_fd);
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

/* 0, or -ESRCH when the process is gone. last_tick: when this process was
 * last read (its schedstat, stat and io as of then). */
static int update_io(struct pl_tprocs *tp, struct pl_tproc *p, uint64_t tick, bool ran,
		     uint64_t last_tick)
{
	const struct pl_dscan_ran *rec;
	struct pl_pid_io io;
	bool want = p->label >= 0 || p->state == 'D' || tp->cfg.track_writers;
	int r;

	if (!want || p->io_denied)
		return 0;
	/* Only the process's own tasks account its writes: one task that did
	 * not run wrote nothing since the last reading. */
	if (p->ss_ok && !ran && p->num_threads <= 1 && p->io_tick && p->io_tick >= last_tick) {
		p->io_now = true; /* a delta of 0 */
		p->io_tick = tick;
		return 0;
	}
	tp->io_reads++;
	if ((rec = scan_record(tp, p)) != NULL) {
		io = rec->io;
		tp->scan_io_reads++;
	} else if ((r = read_io(tp, p, &io)) <= 0) {
		return r;
	}
	if (p->io_tick) {
		/* What was written since the last reading counts in this tick's
		 * history for the bully (the CSV counts from its own baseline,
		 * tracer_baseline.c). */
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

#define REAP_TICKS 3 /* a reaped child shows in its parent's io within this */

static uint64_t take(uint64_t *credit, int64_t *gap)
{
	uint64_t t = *gap > 0 ? (uint64_t)*gap : 0;

	if (t > *credit)
		t = *credit;
	*credit -= t;
	*gap -= (int64_t)t;
	return t;
}

/* The exited writer pid among the recent ones kept (stall_detect.h), or
 * NULL: one that wrote nothing lately is not kept. */
static struct pl_writes *gone_writer(struct pl_tprocs *tp, int pid)
{
	for (size_t i = 0; i < PL_WRITES_GONE; i++) {
		if (tp->gone.e[i].used && tp->gone.e[i].pid == pid)
			return &tp->gone.e[i].w;
	}
	return NULL;
}

/* Take reaped children's writes off this tick's history of p. What a child
 * was last read to have written is known; what it wrote after that reading
 * and before it exited (up to a tick of a dd writing at memory speed, GBs)
 * is in the parent's jump too, and was left there, so that the shell or
 * the test program that ran a dd was named the stall's bully. So the rest
 * of the jump goes to the last child reaped, while it is kept among the
 * recent writers that exited: a parent that writes itself in the same tick
 * has that tick's writes counted as its child's.
 * read_since: p's io was read after the children were found gone. On a
 * live /proc that read has the whole jump: a child's kept fd fails only
 * once it is released, and a parent that waits for it adds its io before
 * it releases it (wait_task_zombie); a child that no one waited for (its
 * parent ignores SIGCHLD) adds nothing. So that reading settles the
 * parent (it was read at every tick for REAP_TICKS before: a shell loop
 * running a dd round every 0.3 s was read at almost every tick of the
 * bench's stall load). */
static void settle_reaped(struct pl_tprocs *tp, struct pl_tproc *p, uint64_t tick,
			  bool read_since)
{
	struct pl_writes *child;

	if (!p->reap_wbytes && !p->reap_wchar && !p->reap_pid)
		return;
	if (tick > p->reap_tick + REAP_TICKS) {
		p->reap_wbytes = p->reap_wchar = p->reap_rbytes = 0;
		p->reap_pid = 0;
		return;
	}
	if (p->io_tick != tick)
		return;
	take(&p->reap_wbytes, &p->gap_wbytes);
	take(&p->reap_wchar, &p->gap_wchar);
	take(&p->reap_rbytes, &p->gap_rbytes);
	if (p->reap_pid && p->gap_wbytes > 0 && p->reap_wbytes == 0) {
		/* A child not kept among the writers that exited (8 that wrote
		 * more since are) is no bully either: its rest is no one's, and
		 * not the parent's, which it would make a writer, read every
		 * tick for HOT_TICKS (the bench's fsync loop, whose 8 MB rounds
		 * the 1 GiB ones of its dd pushed out). */
		if ((child = gone_writer(tp, p->reap_pid)) != NULL && child->last_tick < tick)
			pl__writes_put(child, tick, p->gap_wbytes,
				       p->gap_wchar > 0 ? p->gap_wchar : 0);
		tp->tail_bytes += p->gap_wbytes; /* dirtied this tick, and now found */
		p->gap_wbytes = 0;
		p->gap_wchar = p->gap_wchar > 0 ? 0 : p->gap_wchar;
		p->reap_pid = 0;
	}
	pl__tproc_put_writes(tp, p, tick);
	if (read_since && tp->kept) {
		p->reap_wbytes = p->reap_wchar = p->reap_rbytes = 0;
		p->reap_pid = 0;
	}
}

/* A parent that reaped a child read by the tracer has the child's writes in
 * its io from then on; what they are is known for REAP_TICKS (settle_reaped).
 * So it is read within them, asleep or not: read in its slice, up to 5 s
 * later, its whole jump was taken for its own writes (a test program that
 * reaped two 3 GiB dd rounds unread was named their bully with 4 GiB). */
static bool reap_pending(const struct pl_tproc *p, uint64_t tick)
{
	/* the tick first: it is with what every tick's pass looks at */
	return tick <= p->reap_tick + REAP_TICKS && (p->reap_wbytes || p->reap_wchar || p->reap_pid);
}

/* Sleepers are read in turns of this many ticks. */
static unsigned slices_now(const struct pl_tprocs *tp)
{
	return tp->dwatch.on ? SLICES_WATCHED : SLICES;
}

/* The first tick from from on that is pid's turn. */
static uint64_t slice_turn(unsigned slices, int pid, uint64_t from)
{
	return from + ((unsigned)pid % slices + slices - from % slices) % slices;
}

/* Entry i was read at tick: the first tick after it at which the pass must
 * read it again, if nothing sends the tracer to it before (a D note, a child
 * reaped: read_at). The next one for a process watched, not asleep at its
 * last reading, lately in D or dirtying pages, or with a reaped child's
 * writes still to take off its io; else its slice's turn. The pass looks at
 * this alone (pl_tproc_due). One it passes over is taken as it was: its
 * state and block-I/O delay, and its write history, whose tick after its
 * last entry reads as 0 (the sums stop at the last one, the next entry
 * zeroes the ticks between). One running at its last reading is read, with
 * the D watch for its io alone: it is the likeliest writer, and a dd that
 * has just started and written nothing yet at its first reading is one. The
 * tracer itself is taken as asleep: it is running whenever it reads itself,
 * and so never in D; its writes (its output, or perflinkd's) are read in its
 * slice, and while it is hot. */
static void plan_next_read(struct pl_tprocs *tp, size_t i, uint64_t tick)
{
	const struct pl_tproc *p = &tp->v[i];
	struct pl_tproc_due *d = &tp->due[i];
	uint64_t next = tick + 1;

	d->by_slice = !(p->label >= 0 || (!sleeping(p->state) && p->pid != tp->self_pid) ||
			next < p->hot_until || reap_pending(p, next));
	d->tick = d->by_slice ? slice_turn(slices_now(tp), p->pid, next) : next;
}

/* Read entry i at tick (a D note, a reaped child), whatever its plan. */
static void read_at(struct pl_tprocs *tp, size_t i, uint64_t tick)
{
	tp->due[i].tick = tick;
	tp->due[i].by_slice = false;
}

static void credit_parent(struct pl_tprocs *tp, const struct pl_tproc *child, uint64_t tick)
{
	if (!child->io_tick || child->ppid <= 0)
		return;
	for (size_t i = 0; i < tp->n; i++) {
		struct pl_tproc *q = &tp->v[i];

		if (tp->due[i].pid != child->ppid)
			continue;
		q->reap_wbytes += child->wbytes;
		q->reap_wchar += child->wchar;
		q->reap_rbytes += child->rbytes;
		q->reap_tick = tick;
		q->reap_pid = child->pid;
		/* Already read this tick: the jump may be in it, and it is
		 * read again while the rest may come. Else it is read before
		 * the tick weighs what was dirtied (or, with no room in the
		 * list, by the next pass). */
		if (q->seen_tick == tick) {
			settle_reaped(tp, q, tick, false);
			plan_next_read(tp, i, tick);
		} else {
			read_at(tp, i, tick);
			if (tp->n_reap_parents < sizeof(tp->reap_parents) / sizeof(tp->reap_parents[0]))
				tp->reap_parents[tp->n_reap_parents++] = q->pid;
		}
		return;
	}
}

/* Entry i was read this tick. */
static void touch(struct pl_tprocs *tp, size_t i)
{
	struct pl_tproc *p = &tp->v[i];

	if (p->touch_tick == tp->tick)
		return;
	p->touch_tick = tp->tick;
	p->touch_pos = tp->n_touched;
	tp->touched[tp->n_touched++] = i;
}

/* Entry i leaves the table: out of the list, and the last entry, which
 * takes its place, known there. */
static void untouch_for_drop(struct pl_tprocs *tp, size_t i)
{
	struct pl_tproc *p = &tp->v[i], *last = &tp->v[tp->n - 1];

	if (p->touch_tick == tp->tick) {
		size_t pos = p->touch_pos, moved = tp->touched[--tp->n_touched];

		tp->touched[pos] = moved;
		tp->v[moved].touch_pos = pos;
		p->touch_tick = 0;
	}
	if (last != p && last->touch_tick == tp->tick)
		tp->touched[last->touch_pos] = i;
}

static int cmp_index(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

void pl__tprocs_touched_sort(struct pl_tprocs *tp)
{
	if (tp->n_touched > 1)
		qsort(tp->touched, tp->n_touched, sizeof(*tp->touched), cmp_index);
	for (size_t k = 0; k < tp->n_touched; k++)
		tp->v[tp->touched[k]].touch_pos = k;
}

static void drop(struct pl_tprocs *tp, size_t i, uint64_t tick)
{
	struct pl_tproc *p = &tp->v[i];

	/* kept first: its parent's jump may go to it (settle_reaped) */
	pl__writes_gone_add(&tp->gone, p->pid, p->comm, &p->writes, tick);
	credit_parent(tp, p, tick);
	close_entry(tp, p);
	tp->exits++;
	untouch_for_drop(tp, i);
	if (i != tp->n - 1) {
		tp->v[i] = tp->v[tp->n - 1];
		tp->due[i] = tp->due[tp->n - 1];
		tp->wrote_until[i] = tp->wrote_until[tp->n - 1];
	}
	tp->n--;
	tp->hash_ok = false;
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

/* Read every tick for a while, asleep or not: a writer (for the bully's
 * history), and without the D watch one seen in D (it may be again at once,
 * which the watch would say). */
static void mark_hot(const struct pl_tprocs *tp, struct pl_tproc *p, uint64_t tick)
{
	if ((p->state == 'D' && !tp->dwatch.on) || p->gap_wbytes > 0)
		p->hot_until = tick + HOT_TICKS;
}

/* With the switch watch, what stat would tell of an unwatched process that
 * is out of D at its last reading and was not noted since is known: it is
 * not in D now, and its block-I/O delay did not grow (an I/O wait is a D
 * state, which the watch would have noted). Not with the scan, which names
 * those in D when it runs: a wait between two scans is not seen, and its
 * delay (a fellow victim's, which makes it no bully) is in stat alone. So
 * with the switch watch a writer read for the bully's history needs only
 * its io, whose kept fd fails once the process is gone.
 * Its slice still reads stat, for a new comm (an exec) and its threads,
 * even if it did not run since: it ran before a reading that skipped stat. */
static bool io_tells_all(const struct pl_tprocs *tp, const struct pl_tproc *p, uint64_t tick)
{
	return tp->dwatch.kind == PL_DWATCH_SWITCH && p->label < 0 && p->state != 'D' &&
	       p->noted_tick != tick &&
	       p->ss_ok && p->io_fd >= 0 && !p->io_denied && tp->cfg.track_writers &&
	       (unsigned)p->pid % SLICES_WATCHED != tick % SLICES_WATCHED;
}

/* Re-read one known process. false when it is gone. */
static bool sweep_one(struct pl_tprocs *tp, struct pl_tproc *p, uint64_t tick)
{
	uint64_t last_tick = p->seen_tick;
	bool ran;
	int err = 0;

	clear_tick(p);
	read_schedstat(tp, p, &ran);
	if (io_tells_all(tp, p, tick)) {
		p->stat_now = true; /* out of D, and no I/O wait of its ended */
		p->stat_behind |= ran;
	} else if (!p->ss_ok || ran || p->stat_behind || !sleeping(p->state) ||
		   tp->cfg.stat_every_tick) {
		uint64_t before = p->first_tick;

		err = update_stat(tp, p, tick);
		if (err == -ESRCH)
			return false;
		if (p->first_tick != before)
			ran = true; /* a new process under an old pid */
	} else {
		p->stat_now = true; /* did not run: state and blkio as they were */
	}
	if (err == 0 && update_io(tp, p, tick, ran, last_tick) == -ESRCH)
		return false;
	pl__tproc_put_writes(tp, p, tick);
	if (p->state == 'D' || p->d_blk_ms > 0)
		pl__writes_mark_blocked(&p->writes, tick);
	settle_reaped(tp, p, tick, true);
	p->seen_tick = tick;
	if (p->state == 'D')
		p->d_tick = tick;
	mark_hot(tp, p, tick);
	plan_next_read(tp, (size_t)(p - tp->v), tick);
	touch(tp, (size_t)(p - tp->v));
	return true;
}

static int grow_table(struct pl_tprocs *tp)
{
	size_t ncap = tp->cap ? tp->cap * 2 : 256;
	size_t *nt = realloc(tp->touched, ncap * sizeof(*nt));
	struct pl_tproc_due *nd;
	struct pl_tproc *nv;
	uint64_t *nw;

	if (!nt)
		return -ENOMEM;
	tp->touched = nt;
	if (!(nd = realloc(tp->due, ncap * sizeof(*nd))))
		return -ENOMEM;
	tp->due = nd;
	if (!(nw = realloc(tp->wrote_until, ncap * sizeof(*nw))))
		return -ENOMEM;
	tp->wrote_until = nw;
	if (!(nv = realloc(tp->v, ncap * sizeof(*nv))))
		return -ENOMEM;
	tp->v = nv;
	tp->cap = ncap;
	return 0;
}

/* A block made smaller, or the same one where realloc cannot: it still
 * holds as many entries as the smaller one would. */
static void *shrunk(void *block, size_t size)
{
	void *smaller = realloc(block, size);

	return smaller ? smaller : block;
}

/* Give memory back once most processes are gone. */
static void shrink_table(struct pl_tprocs *tp)
{
	size_t half = tp->cap / 2;

	if (tp->cap <= 256 || tp->n >= tp->cap / 4)
		return;
	tp->v = shrunk(tp->v, half * sizeof(*tp->v));
	tp->due = shrunk(tp->due, half * sizeof(*tp->due));
	tp->wrote_until = shrunk(tp->wrote_until, half * sizeof(*tp->wrote_until));
	tp->touched = shrunk(tp->touched, half * sizeof(*tp->touched));
	tp->cap = half;
}

/* A process whose pid was handed out since the last tick was forked since,
 * and fork starts a process's io counters at 0: all they hold now it wrote
 * since the last tick. That goes into this tick's history for the bully, and
 * its dirtied pages into what the tick found (birth_bytes; this tick's vmstat
 * delta or the next one's counts them). Without this, a writer that started since
 * the last tick (a dd) left what it wrote before its first reading to no one,
 * and the balance then had every process read. The pid range alone is the
 * proof; a start time over a second old (pids wrapped) is not believed. */
static void credit_birth_writes(struct pl_tprocs *tp, struct pl_tproc *p)
{
	double per_tick_ms = 1000.0 / (double)tp->cfg.clk_tck;
	double age_ms = tp->now_ms - (double)p->starttime * per_tick_ms;

	if (!p->io_now || age_ms > 1000.0)
		return;
	p->gap_wbytes = (int64_t)p->wbytes;
	p->gap_wchar = (int64_t)p->wchar;
	p->gap_rbytes = (int64_t)p->rbytes;
	if (p->rss_kb > 0)
		p->gap_rss_kb = p->rss_kb;
	tp->birth_bytes += (uint64_t)p->gap_wbytes;
}

/* A new process's stat from /proc, opening it (to keep). 1 with *st, 0
 * when it is gone, a thread or unreadable (p's fds closed). */
static int add_from_proc(struct pl_tprocs *tp, struct pl_tproc *p, struct pl_pid_stat *st)
{
	char rel[48];
	bool ran;
	ssize_t n, ss_err = 0;
	bool clock_first;
	uint64_t t0;
	int err, pid = p->pid;

	/* With CPU clocks, the clock is read first: a pid that is gone already
	 * (most, under churn) or a thread's (a thread's pid has no process
	 * clock) costs one clock read, no open. Else stat is opened first, and
	 * such a pid costs one failed open. Either way schedstat or the clock
	 * is read before stat (see sweep_one). */
	clock_first = tp->cpuclock && !tp->cfg.stat_every_tick;
	if (clock_first && (ss_err = read_schedstat(tp, p, &ran)) < 0)
		return 0;
	snprintf(rel, sizeof(rel), "%d/stat", pid);
	t0 = pl__tcost_now(tp->cost);
	err = keep_open(tp, rel, &p->stat_fd);
	pl__tcost_read(tp->cost, tp->phase, t0); /* the open is the costly part */
	if (err < 0)
		return 0;
	if (!clock_first)
		ss_err = read_schedstat(tp, p, &ran);
	n = read_pid_file(tp, p, &p->stat_fd, "stat");
	tp->stat_reads++;
	if (n < 0 || pl__parse_pid_stat(tp->scratch.buf, st) < 0 || st->pid != pid) {
		if (n >= 0)
			tp->read_errors++;
		close_entry(tp, p);
		return 0; /* gone already, or not a process */
	}
	if (st->exit_signal == -1) {
		/* a thread, which /proc/TID opens for though it is not listed */
		close_entry(tp, p);
		return 0;
	}
	if (ss_err == -ENOENT && tp->kept && !tp->no_schedstat) {
		/* stat is there but schedstat is not: this kernel has none. */
		tp->no_schedstat = true;
		close_fd(tp, &p->ss_fd);
	}
	return 1;
}

/* born: its pid was handed out since the last tick (a probe). A new
 * process the scan's run read whole (add_new_pids) is taken from its
 * record: no clock read, and no file opened until one is to be read. */
static int add(struct pl_tprocs *tp, int pid, uint64_t tick, bool born)
{
	const struct pl_dscan_ran *rec;
	struct pl_tproc *p;
	struct pl_pid_stat st;
	size_t slot;
	bool ran;
	int err;

	if (tp->n == tp->cap && (err = grow_table(tp)) < 0)
		return err;
	p = &tp->v[tp->n];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->stat_fd = p->io_fd = p->ss_fd = p->wchan_fd = -1;
	rec = new_record(tp, pid, &slot);
	if (rec && rec->fields && !tp->cfg.stat_every_tick && !tp->no_schedstat) {
		p->bpf_tick = tick + 1;
		p->bpf_run_ns = rec->run_ns;
		p->bpf_pcount = rec->pcount;
		p->bpf_slot = (uint8_t)slot;
		p->bpf_fields = true;
		read_schedstat(tp, p, &ran);
		st = rec->st;
		tp->stat_reads++;
		tp->scan_stat_reads++;
	} else if (add_from_proc(tp, p, &st) <= 0) {
		return 0;
	}
	fresh(tp, p, &st, tick);
	if (p->ss_clock && p->num_threads > 1)
		p->ss_ok = false; /* its clock counts other threads than the leader */
	if (update_io(tp, p, tick, true, tick) == -ESRCH) {
		close_entry(tp, p);
		return 0;
	}
	if (born)
		credit_birth_writes(tp, p);
	mark_hot(tp, p, tick);
	pl__tproc_put_writes(tp, p, tick);
	if (p->state == 'D')
		pl__writes_mark_blocked(&p->writes, tick);
	p->seen_tick = tick;
	p->touch_tick = 0;
	tp->due[tp->n].pid = pid;
	plan_next_read(tp, tp->n, tick);
	tp->n++;
	touch(tp, tp->n - 1);
	if (tp->scan_tick && p->ppid > 0 &&
	    tp->n_new_children < sizeof(tp->new_children) / sizeof(tp->new_children[0]))
		tp->new_children[tp->n_new_children++] = p->pid;
	return 1;
}

static int add_timed(struct pl_tprocs *tp, int pid, uint64_t tick, bool born)
{
	uint64_t t0 = pl__tcost_now(tp->cost);
	int r;

	tp->phase = PL_TPHASE_NEW;
	r = add(tp, pid, tick, born);
	pl__tcost_done(tp->cost, PL_TPHASE_NEW, t0, r > 0);
	return r;
}

static uint32_t hash_pid(int pid)
{
	return (uint32_t)pid * 2654435761u;
}

/* Makes the hash current. It stays so from tick to tick until a process
 * is dropped: rebuilding it walks every entry (a cache miss each, 10-15 us
 * at 300 processes), which the probe of new pids and the D watch's notes
 * would otherwise do every tick under churn or a stall. */
static int rebuild_hash(struct pl_tprocs *tp)
{
	size_t want = 1024;

	while (want < 2 * (tp->n + 256))
		want *= 2;
	if (tp->hash_ok && want == tp->hcap)
		return 0;
	if (want != tp->hcap) {
		int32_t *nh = malloc(want * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		free(tp->hash);
		tp->hash = nh;
		tp->hcap = want;
	}
	memset(tp->hash, 0, tp->hcap * sizeof(*tp->hash));
	for (size_t i = 0; i < tp->n; i++) {
		size_t h = hash_pid(tp->due[i].pid) & (tp->hcap - 1);

		while (tp->hash[h])
			h = (h + 1) & (tp->hcap - 1);
		tp->hash[h] = (int32_t)i + 1;
	}
	tp->hash_ok = true;
	return 0;
}

/* Index of pid, or insert slot as -(slot + 1). */
static long lookup(const struct pl_tprocs *tp, int pid)
{
	size_t h = hash_pid(pid) & (tp->hcap - 1);

	while (tp->hash[h]) {
		if (tp->due[tp->hash[h] - 1].pid == pid)
			return tp->hash[h] - 1;
		h = (h + 1) & (tp->hcap - 1);
	}
	return -(long)h - 1;
}

/* New processes into the scan's run (give_candidates), up to NEW_IN_RUN:
 * the births put off at the last tick, which this one opens, and the pids
 * handed out since the last tick (loadavg's last pid, read before the
 * run), which this one probes. Their record then stands for the clock
 * read, the opens and the reads of their stat and io (take_new_pid, add):
 * under the stall load a dd round or a victim's, half a tick, ~45 us each
 * when opened. More than that is a churn, whose new processes are mostly
 * gone before they are opened: left to the probe. */
#define NEW_IN_RUN 8

static size_t add_new_pids(const struct pl_tprocs *tp, int *ran, const struct pl_tproc **ran_p,
			   size_t n_ran)
{
	uint64_t from = tp->last_pid, to = tp->next_last_pid;
	size_t added = 0;

	for (size_t i = 0; i < tp->n_births && added < NEW_IN_RUN &&
			   n_ran < PL_DSCAN_RAN_MAX; i++, added++) {
		ran_p[n_ran] = NULL;
		ran[n_ran++] = tp->births[i];
	}
	if (!tp->have_last_pid || !tp->own_pid_ns || to <= from || to - from > NEW_IN_RUN)
		return n_ran;
	for (uint64_t pid = from + 1; pid <= to && added < NEW_IN_RUN &&
				      n_ran < PL_DSCAN_RAN_MAX; pid++, added++) {
		ran_p[n_ran] = NULL;
		ran[n_ran++] = (int)pid;
	}
	return n_ran;
}

/* For the scan's gate (dstate_scan.h): the processes the last tick read
 * that were in D then, and those writing (a writer is the likeliest to
 * block, in balance_dirty_pages or an fsync), the tracer itself aside: as
 * long as the kernel counts no other task blocked in D, the scan need not
 * walk the process list. The last tick's list is still in touched. */
static void give_candidates(struct pl_tprocs *tp, uint64_t tick)
{
	int cand[PL_DSCAN_CAND_MAX + 1], ran[PL_DSCAN_RAN_MAX];
	const struct pl_tproc *ran_p[PL_DSCAN_RAN_MAX];
	size_t n = 0, n_ran = 0;

	for (int pass = 0; pass < 2 && n <= PL_DSCAN_CAND_MAX; pass++) {
		for (size_t k = 0; k < tp->n_touched && n <= PL_DSCAN_CAND_MAX; k++) {
			const struct pl_tproc *p = &tp->v[tp->touched[k]];
			bool in_d = p->state == 'D';

			if (p->pid == tp->self_pid || (pass == 0 ? !in_d : in_d || tick >= p->hot_until))
				continue;
			cand[n++] = p->pid;
		}
	}
	pl__dwatch_candidates(&tp->dwatch, cand, n);
	/* the watched, whose run time every tick reads first; then the rest
	 * of the last tick's reads, whose stat and io this tick will most
	 * likely read again (the writers, those in D, the tracer itself) */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1 && tp->dwatch.scan.fields)
			n_ran = add_new_pids(tp, ran, ran_p, n_ran);
		for (size_t k = 0; k < tp->n_touched && n_ran < PL_DSCAN_RAN_MAX; k++) {
			const struct pl_tproc *p = &tp->v[tp->touched[k]];
			const struct pl_tproc_due *d = &tp->due[tp->touched[k]];

			/* not one read last tick in its slice, which this one
			 * will not read: a look-up in a run is ~1 us when the
			 * task is cold, as a process read once in 50 ticks is */
			if (pass == 1 && (d->by_slice || d->tick > tick))
				continue;
			if ((p->label >= 0) == (pass == 0) && (pass == 1 || p->pid != tp->self_pid)) {
				ran_p[n_ran] = p;
				ran[n_ran++] = p->pid;
			}
		}
		if (!tp->dwatch.scan.fields)
			break; /* the others' run time alone costs more than it saves */
	}
	pl__dwatch_ran_pids(&tp->dwatch, ran, n_ran);
	/* the fields are read only of those that ran since what is known of
	 * them: their run time as the scan read it, and a stat no older */
	for (size_t k = 0; k < n_ran; k++) {
		const struct pl_tproc *p = ran_p[k];
		bool known = p && p->ss_ok && !p->ss_clock && !p->stat_behind;

		tp->dwatch.ran[k].run_ns = known ? p->ss_run_ns : UINT64_MAX;
		tp->dwatch.ran[k].pcount = known ? p->ss_pcount : UINT64_MAX;
	}
}

/* What the scan read of the watched leaders' run time, into their entries
 * for read_schedstat. The hash must be current. */
static void take_ran(struct pl_tprocs *tp, uint64_t tick)
{
	const struct pl_dwatch *w = &tp->dwatch;

	for (size_t k = 0; k < w->n_ran; k++) {
		long at = lookup(tp, w->ran_pids[k]);

		if (at >= 0 && !w->ran[k].ok) {
			tp->v[at].bpf_gone_tick = tick + 1; /* exited: no file to fail */
		} else if (at >= 0) {
			tp->v[at].bpf_tick = tick + 1; /* 0: none */
			tp->v[at].bpf_run_ns = w->ran[k].run_ns;
			tp->v[at].bpf_pcount = w->ran[k].pcount;
			tp->v[at].bpf_slot = (uint8_t)k;
			tp->v[at].bpf_fields = w->ran[k].fields;
		}
	}
}

/* The leaders the D watch saw go into D since the last tick: each is read
 * this tick, asleep at its last reading or not. true when some may have gone
 * unnoted (the ring was full, or more than NOTES_MAX): read them all. A pid
 * not in the table yet is a new process, which the probe or scan reads. */
static bool take_notes(struct pl_tprocs *tp, uint64_t tick)
{
	uint64_t t0 = pl__tcost_now(tp->cost);
	bool overflow;
	size_t n;

	tp->n_notes = 0;
	if (!tp->dwatch.on)
		return false;
	give_candidates(tp, tick);
	n = pl__dwatch_drain(&tp->dwatch, tp->notes, tp->notes_cap, &overflow);
	tp->notes_read += n;
	tp->n_notes = overflow ? 0 : n;
	if ((n > 0 || tp->dwatch.ran_valid) && !overflow && rebuild_hash(tp) < 0)
		overflow = true;
	if (tp->dwatch.ran_valid && !overflow) {
		take_ran(tp, tick);
		tp->ran_tick = tick;
	}
	for (size_t i = 0; i < n && !overflow; i++) {
		long at = lookup(tp, tp->notes[i]);

		if (at >= 0) {
			tp->v[at].noted_tick = tick;
			read_at(tp, (size_t)at, tick);
		}
	}
	tp->note_overflows += overflow;
	/* one item a tick, the drain: a scan that names no one costs as much
	 * as one that does, and the split keeps a phase's time by its items */
	pl__tcost_done(tp->cost, PL_TPHASE_DWATCH, t0, 1);
	return overflow;
}

/* A pid found by a scan or a probe: added if new. A known one is left as it
 * was on a live /proc, whose kept fds tell when it is gone: its seen_tick
 * stays the tick of its last reading, which its next reading compares its
 * io's tick with (a sleeper that did not run since needs no io read) and
 * read_new_parents looks at. In a recorded tree, which has no kept fds to
 * fail, it is marked seen, and the scan drops those it did not list. The
 * hash must be current (rebuild_hash). 0 or -errno. */
static int consider(struct pl_tprocs *tp, int pid, uint64_t tick, bool born)
{
	long at = lookup(tp, pid);
	int err;

	if (at >= 0) {
		if (!tp->kept)
			tp->v[at].seen_tick = tick;
		return 0;
	}
	if (2 * (tp->n + 1) > tp->hcap) {
		if ((err = rebuild_hash(tp)) < 0)
			return err;
		at = lookup(tp, pid);
	}
	err = add_timed(tp, pid, tick, born);
	if (err > 0)
		tp->hash[-at - 1] = (int32_t)tp->n;
	return err < 0 ? err : 0;
}

/* Births. Under churn (a shell loop, a build) most new processes live a
 * few ms: the probe finds a pid or two alive each tick that is gone by the
 * next, and opening its stat and io (40-100 us) and failing the next read
 * was a fifth of such a tick. With the D watch, a new process need not be
 * read at once to find a D state (the watch notes it; one noted is opened
 * at once), and what it wrote before its first reading is credited to it
 * then (credit_birth_writes): so a pid found alive is only remembered, and
 * opened at the next tick if it still lives, unless it has run long enough
 * to have written much (BIRTH_OPEN_NOW_NS, below). What is lost: the few
 * writes of a process that lives between one and two ticks (they count as
 * its parent's once it is reaped), and a new process's first row, a tick
 * late, when it is watched by name. Without the watch a new process is read
 * at once, for its D state and its parent's vfork wait. */
static bool defers_births(const struct pl_tprocs *tp)
{
	return tp->dwatch.on && tp->cpuclock && tp->kept && !tp->cfg.stat_every_tick;
}

static bool noted_now(const struct pl_tprocs *tp, int pid)
{
	for (size_t i = 0; i < tp->n_notes; i++) {
		if (tp->notes[i] == pid)
			return true;
	}
	return false;
}

/* The births the last tick put off: opened now if they still live. The hash
 * must be current. */
static int open_surviving_births(struct pl_tprocs *tp, uint64_t tick)
{
	size_t n = tp->n_births;
	int err = 0;

	tp->n_births = 0;
	for (size_t i = 0; i < n && err == 0; i++) {
		err = consider(tp, tp->births[i], tick, true);
		if (err == 0 && lookup(tp, tp->births[i]) < 0)
			tp->births_unopened++;
	}
	return err;
}

/* A new process that has run this long by the tick that finds it is opened
 * at once: one that wrote more than a few MB has (copying a MB costs
 * 0.1-0.3 ms), and one that exits before the next tick takes what it wrote
 * into its parent's io at the reap, which only a child that was read can
 * take off again (settle_reaped): a dd of 1.5 GB that lived under two
 * ticks made its parent the stall's bully. A shell loop's `sh -c true`
 * has run under a ms. */
#define BIRTH_OPEN_NOW_NS 2000000

/* A new pid, which may be alive: added, or with the D watch remembered
 * (births, above). */
struct new_pid_ctx {
	struct pl_tprocs *tp;
	uint64_t tick;
};

static int take_new_pid(void *ctx, int pid)
{
	struct new_pid_ctx *c = ctx;
	struct pl_tprocs *tp = c->tp;
	const struct pl_dscan_ran *rec;
	uint64_t run_ns;
	size_t slot;

	if (defers_births(tp) && tp->n_births < PL_TBIRTHS_MAX && lookup(tp, pid) < 0 &&
	    !noted_now(tp, pid)) {
		tp->phase = PL_TPHASE_PROBE;
		rec = new_record(tp, pid, &slot);
		if (rec && !rec->ok)
			return 0; /* gone already when the scan ran */
		if (rec && rec->fields)
			run_ns = rec->run_ns; /* a leader's, which is its clock with one thread */
		else if (read_cpuclock(tp, pid, &run_ns) < 0) /* a thread's id has no process clock */
			return 0; /* gone, or a thread */
		if (run_ns < BIRTH_OPEN_NOW_NS) {
			tp->births[tp->n_births++] = pid;
			tp->births_deferred++;
			return 0;
		}
	}
	return consider(tp, pid, c->tick, true);
}

/* A listing costs about 1.5 us and 5-10 us for each entry it makes (a live
 * new process, and the one after the range), a pid looked up 0.3 us
 * whether it lives or not: under churn (100 new pids a tick, 1-3 of them
 * alive) the listing is half the cost, with a few new pids a tick the
 * lookups are cheaper. */
#define LIST_MIN_PIDS 64

/* The pids handed out since the last tick, (from, to]: many of them, the
 * live ones listed from /proc at their position (pid_range.h); a few, or
 * where a listing cannot be, each looked up (under churn most are gone
 * already: one failed clock read or open each). Instead of a scan of the
 * whole directory, whose getdents costs ~2 us a process. Threads take pids
 * too, and are refused by add. */
static int probe(struct pl_tprocs *tp, uint64_t from, uint64_t to, uint64_t tick)
{
	uint64_t t0 = pl__tcost_now(tp->cost), new_ns = tp->cost ? tp->cost->ph[PL_TPHASE_NEW].ns : 0;
	struct new_pid_ctx c = { tp, tick };
	int err;

	tp->probes++;
	if ((err = rebuild_hash(tp)) < 0)
		return err;
	if (tp->kept && to - from >= LIST_MIN_PIDS) {
		uint64_t t_list = pl__tcost_now(tp->cost);

		err = pl__pid_range_list(&tp->pid_range, tp->scanfd, from, to, take_new_pid, &c);
		pl__tcost_read(tp->cost, PL_TPHASE_PROBE, t_list);
		tp->pid_lists += err != -ENOTSUP;
	} else {
		err = -ENOTSUP;
	}
	if (err == -ENOTSUP) {
		err = 0;
		for (uint64_t pid = from + 1; pid <= to && err == 0; pid++)
			err = take_new_pid(&c, (int)pid);
	}
	if (tp->cost) {
		pl__tcost_done(tp->cost, PL_TPHASE_PROBE, t0, to - from);
		tp->cost->ph[PL_TPHASE_PROBE].ns -= tp->cost->ph[PL_TPHASE_NEW].ns - new_ns;
	}
	return err;
}

/* The processes there are, from the D scan's walk of the process list
 * rather than a listing of /proc: on the test VM 20-60 us against 350-400
 * at 290 processes (getdents makes or looks up a dentry for each). Only
 * on a live /proc of the initial pid namespace (the walk's pids), and not
 * at the first scan, which learns the directory's offsets (pid_range.h).
 * -ENOTSUP: the directory is listed instead. */
/* The walk asked for every leader gave each one's run time and pcount.
 * A process read in its slice (asleep, unwatched, not hot) that has not
 * run since the last walk is as it was then: its slice turn moves past the
 * next walk, and while it sleeps it is never read. One that ran since is
 * read at the next tick, where its slice would have read it within the
 * next RESCAN_TICKS: at most as late as the slices, for a tenth of their
 * cost (a walk reads a task for ~0.3 us, a CPU-clock read of a cold one is
 * 2-4 us, 5-6 a tick at 290 processes). One without a last walk (new since)
 * keeps its slice. The hash must be current. */
static void settle_slices(struct pl_tprocs *tp, uint64_t tick, const int *pids, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t run_ns, pcount;
		long at = pids[i] > 0 ? lookup(tp, pids[i]) : -1;
		struct pl_tproc *p;
		struct pl_tproc_due *d;

		if (at < 0 || !pl__dwatch_walk_run(&tp->dwatch, i, &run_ns, &pcount))
			continue;
		p = &tp->v[at];
		d = &tp->due[at];
		if (d->by_slice && p->walk_tick && p->seen_tick != tick) {
			if (run_ns == p->walk_run_ns && pcount == p->walk_pcount) {
				d->tick = tick + RESCAN_TICKS + 1;
				tp->slices_settled++;
			} else {
				read_at(tp, (size_t)at, tick + 1);
				tp->slices_due++;
			}
		}
		p->walk_tick = tick;
		p->walk_run_ns = run_ns;
		p->walk_pcount = pcount;
	}
}

static int list_leaders(struct pl_tprocs *tp, uint64_t tick)
{
	int *pids = (int *)(void *)tp->dents; /* the listing's buffer, not in use */
	bool overflow;
	ssize_t n;
	int err;

	if (!tp->kept || !tp->own_pid_ns || tp->scan_tick == 0)
		return -ENOTSUP;
	n = pl__dwatch_list_leaders(&tp->dwatch, pids, tp->dents_cap / sizeof(*pids), &overflow);
	if (n < 0 || overflow)
		return -ENOTSUP;
	tp->leader_lists++;
	if ((err = rebuild_hash(tp)) < 0)
		return err;
	for (ssize_t i = 0; i < n; i++) {
		/* 0: the first CPU's idle task, which /proc does not list */
		if (pids[i] > 0 && (err = consider(tp, pids[i], tick, false)) < 0)
			return err;
	}
	if (tp->dwatch.on) {
		if ((err = rebuild_hash(tp)) < 0)
			return err;
		settle_slices(tp, tick, pids, (size_t)n);
	}
	tp->scan_tick = tick;
	return 0;
}

static int scan(struct pl_tprocs *tp, uint64_t tick)
{
	int err;

	if ((err = list_leaders(tp, tick)) != -ENOTSUP)
		return err;
	tp->dir_scans++;
	if ((err = rebuild_hash(tp)) < 0)
		return err;
	if (lseek(tp->scanfd, 0, SEEK_SET) < 0)
		return -errno;
	pl__pid_range_scan_start(&tp->pid_range);
	for (;;) {
		long n;
		size_t off;

		uint64_t t0 = pl__tcost_now(tp->cost);

		do
			n = syscall(SYS_getdents64, tp->scanfd, tp->dents, tp->dents_cap);
		while (n < 0 && errno == EINTR);
		pl__tcost_read(tp->cost, PL_TPHASE_SCAN, t0);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		for (off = 0; off + sizeof(struct pl_dirent64) <= (size_t)n;) {
			const struct pl_dirent64 *d = (const void *)(tp->dents + off);
			int pid;

			if (d->d_reclen == 0)
				return -EIO;
			off += d->d_reclen;
			pid = pl__pid_of_name(d->d_name);
			if (tp->kept)
				pl__pid_range_learn(&tp->pid_range, pid > 0 ? pid : 0, d->d_off);
			if (pid <= 0)
				continue;
			if ((err = consider(tp, pid, tick, false)) < 0)
				return err;
		}
	}
	/* A recorded tree has no kept fds to fail: what is not listed is gone. */
	if (!tp->kept) {
		for (size_t i = 0; i < tp->n;) {
			if (tp->v[i].seen_tick != tick)
				drop(tp, i, tick);
			else
				i++;
		}
	}
	tp->scan_tick = tick;
	return 0;
}

/* What one pass of the sweep found among the processes it read. */
struct sweep_found {
	int64_t dstate;          /* in D now */
	int64_t flickers;        /* not in D, but lately, and ran since the last reading */
	uint64_t dirtied_bytes;  /* write_bytes since their last reading */
};

/* A pass over the known processes, reading those due this tick (all: every
 * one not read yet this tick). With --cost-split, a process read is timed as
 * watched or other, and the skipped ones take the rest of the loop (timing
 * each of them would cost more than skipping it). */
static void sweep(struct pl_tprocs *tp, uint64_t tick, bool all, struct sweep_found *found)
{
	uint64_t t_loop = pl__tcost_now(tp->cost), t_timed = 0, skipped = 0;
	unsigned slices = slices_now(tp);

	if (tp->due_slices != slices) {
		/* the slices changed (the D watch came or went): each is read
		 * once, which puts it in its new slice */
		for (size_t i = 0; i < tp->n; i++)
			read_at(tp, i, 0);
		tp->due_slices = slices;
	}
	for (size_t i = 0; i < tp->n;) {
		struct pl_tproc_due *d = &tp->due[i];
		struct pl_tproc *p;
		uint64_t t0;
		bool alive;

		if (!all && d->by_slice && d->tick < tick)
			d->tick = slice_turn(slices, d->pid, tick);
		if (!all && d->tick > tick) {
			skipped++;
			i++;
			continue;
		}
		p = &tp->v[i];
		if (p->seen_tick == tick) {
			i++;
			continue;
		}
		t0 = pl__tcost_now(tp->cost);
		tp->phase = p->label >= 0 ? PL_TPHASE_WATCHED : PL_TPHASE_OTHERS;
		alive = sweep_one(tp, p, tick);
		if (alive) {
			found->dstate += p->stat_now && p->state == 'D';
			found->flickers += p->stat_now && p->state != 'D' && p->woke_now &&
					   p->d_tick && tick < p->d_tick + HOT_TICKS;
			found->dirtied_bytes += p->gap_wbytes > 0 ? (uint64_t)p->gap_wbytes : 0;
			i++;
		} else {
			drop(tp, i, tick);
		}
		if (tp->cost) {
			uint64_t took = pl__mono_ns() - t0;

			tp->cost->ph[tp->phase].ns += took;
			tp->cost->ph[tp->phase].items++;
			t_timed += took;
		}
	}
	if (tp->cost) {
		tp->cost->ph[PL_TPHASE_SKIPPED].ns += pl__mono_ns() - t_loop - t_timed;
		tp->cost->ph[PL_TPHASE_SKIPPED].items += skipped;
	}
}

/* The balance is what vmstat says was dirtied less what the processes read
 * wrote. It is off by what the writers read wrote between the vmstat read
 * and theirs, a few hundred us to a ms later: a dd dirtying 400 MB a tick
 * left 0.1-1 MB of it a tick, which over a fixed 64 KiB slack had every
 * process read in 14 of 22 full sweeps of a 15 s stall run. So the slack
 * grows by a 32nd of the tick's dirtied bytes (3%, where the skew measured
 * ~0.3%): a writer no process read that dirties less than that is left to
 * the slices, which read it within a second. Below 0 the balance goes by
 * direct I/O, which counts in write_bytes but dirties no page, and by a
 * skew the other way, given back the next tick. The floor, a MB and a
 * quarter of the tick, keeps direct I/O from hiding another writer for
 * more than a tick, and takes a skew whole: at a 32nd, a dd's 180 MB read
 * before vmstat's count was cut to 23 MB, and given back the next tick it
 * left 157 MB in the balance, which had every process read. */
bool pl__dirty_balance_add(int64_t *balance, int64_t dirtied, int64_t found)
{
	int64_t floor = DIRTY_FLOOR_BYTES + dirtied / 4, b = *balance + dirtied - found;

	*balance = b < -floor ? -floor : b;
	return *balance > DIRTY_SLACK_BYTES + dirtied / 32;
}

/* A writer no process read dirties pages every tick, about as many from one
 * tick to the next. So besides a balance over its slack, the tick's own
 * excess (dirtied less found) must be over the slack, and over it at the
 * tick before as well, and not fallen to under a quarter since; or at once
 * when both the balance and the tick's excess are over the larger of a MB
 * and a quarter of what the tick dirtied. What this leaves out, beside the
 * in-place dd of the bench's stall load (800 MB a tick at memory speed; the
 * writer and vmstat read 5 ms apart when the tracer is preempted: 40 MB):
 *  - an excess carried from a skew, that the writer's next reading does
 *    not take back when it has stopped writing (a dd round ended);
 *  - a journal's 50-110 KiB a tick after a skew's tick, or after a sweep.
 * Every one of those had every process read, and found nothing: 26 in 200
 * ticks beside Python with a rule of the balance alone. */
bool pl__dirty_sweep_due(int64_t *balance, int64_t *last_excess, int64_t dirtied, int64_t found)
{
	int64_t excess = dirtied - found;
	int64_t slack = DIRTY_SLACK_BYTES + dirtied / 32;
	int64_t at_once = DIRTY_SLACK_BYTES + (dirtied / 4 > DIRTY_FLOOR_BYTES ? dirtied / 4
										: DIRTY_FLOOR_BYTES);
	bool over = pl__dirty_balance_add(balance, dirtied, found);
	bool tick_over = excess > slack;
	bool again = *last_excess > 0 && excess > *last_excess / 4;
	bool due = over && tick_over && (again || (*balance > at_once && excess > at_once));

	*last_excess = tick_over ? excess : 0;
	return due;
}

/* /proc/stat's procs_blocked counts the tasks in an I/O wait when it is
 * read; the first pass reads its processes a few hundred us later. Most
 * ticks where it counts more than the pass found in D, none of the sleeping
 * processes is the one: a process read this tick left its short wait in
 * between (the fsync loop, dd between two writes), or the task is a thread
 * whose leader is not in D (stat shows the leader's state, as in the Python
 * tool), or a wait too short to find. Reading every sleeping process each
 * such tick was most of a stall-loaded tick's cost, and found a D state in
 * 5 of 29 (a 12 s run beside dd and an O_DSYNC loop). So when the excess may
 * be explained (processes read this tick that were in D lately and ran
 * since, or what the last sweep, a tick ago, could not find either), the
 * sweep waits a tick, but never two in a row: a sleeping process's I/O wait
 * of 200 ms or more covers two samples at 10 Hz or more (below, the caller
 * never waits), and one of them reads it.
 * An excess nothing explains reads them all at once, as before. */
bool pl__blocked_rule_sweep(struct pl_blocked_rule *r, uint64_t tick, int64_t procs_blocked,
			    int64_t found_d, int64_t flickers)
{
	int64_t excess = procs_blocked - found_d, explained = flickers;

	if (excess <= 0)
		return false;
	if (r->swept_tick && r->swept_tick + 1 == tick)
		explained += r->unfound;
	if (excess > explained || (r->deferred_tick && r->deferred_tick + 1 == tick))
		return true;
	r->deferred_tick = tick;
	return false;
}

void pl__blocked_rule_swept(struct pl_blocked_rule *r, uint64_t tick, int64_t procs_blocked,
			    int64_t found_d)
{
	r->swept_tick = tick;
	r->unfound = procs_blocked > found_d ? procs_blocked - found_d : 0;
}

/* One known process read outside the sweep's pass, timed as watched or
 * other. false when it is gone (the caller drops it, or leaves that to the
 * next sweep). */
static bool read_out_of_turn(struct pl_tprocs *tp, struct pl_tproc *p, uint64_t tick)
{
	uint64_t t0 = pl__tcost_now(tp->cost);
	bool alive;

	tp->phase = p->label >= 0 ? PL_TPHASE_WATCHED : PL_TPHASE_OTHERS;
	alive = sweep_one(tp, p, tick);
	pl__tcost_done(tp->cost, tp->phase, t0, 1);
	return alive;
}

/* The parents of the processes the sweep found gone, read now (asleep in a
 * wait(2) they are skipped until their slice): the reap put what the child
 * wrote after its last reading into the parent's io, and the tick's dirty
 * balance weighs it. Read after the next sweep instead, a dd's last few
 * hundred kB, over the balance's slack, had every process read (a tenth of
 * the ticks of the bench's stall load, 2-7 ms each). */
static void read_reap_parents(struct pl_tprocs *tp, uint64_t tick, struct sweep_found *found)
{
	size_t k;

	if (tp->n_reap_parents == 0 || rebuild_hash(tp) < 0)
		return;
	for (k = 0; k < tp->n_reap_parents; k++) {
		long at = lookup(tp, tp->reap_parents[k]);
		struct pl_tproc *p;

		if (at < 0 || tp->v[at].seen_tick == tick)
			continue;
		p = &tp->v[at];
		if (read_out_of_turn(tp, p, tick)) {
			found->dstate += p->stat_now && p->state == 'D';
			found->dirtied_bytes += p->gap_wbytes > 0 ? (uint64_t)p->gap_wbytes : 0;
		} else {
			drop(tp, (size_t)at, tick); /* may add a parent: read at the next tick */
			if (rebuild_hash(tp) < 0)
				break;
		}
	}
	tp->n_reap_parents = 0;
}

/* After the first pass: must the sleeping processes be read as well? Only
 * when a task may have blocked or written (the hint), and the first pass
 * does not account for it: the kernel counts more tasks in an I/O wait
 * than it found in D, or (naming the bully) more pages dirtied than the
 * processes it read wrote. A count that is not known says yes. */
static bool need_full_sweep(struct pl_tprocs *tp, uint64_t tick, const struct pl_tprocs_hint *h,
			    const struct sweep_found *found)
{
	bool writes_unexplained = true;

	/* The reads of vmstat and of a writer are a few ms apart on a loaded
	 * machine, more when the tracer is preempted between them: a dd moves
	 * MBs from one tick's balance into the next's and back. So an excess
	 * reads everyone only when a writer no one reads is at work in both
	 * ticks, or at once when it is large (pl__dirty_sweep_due). */
	if (h->dirtied_bytes >= 0)
		writes_unexplained = pl__dirty_sweep_due(&tp->dirty_balance, &tp->dirty_excess,
							 h->dirtied_bytes, (int64_t)found->dirtied_bytes);
	if (!h->maybe_blocked)
		return false;
	if (tp->cfg.track_writers && writes_unexplained)
		return true;
	/* every leader that went into D since was noted, and read */
	if (tp->dwatch.on)
		return false;
	if (h->procs_blocked < 0)
		return true;
	/* put off a tick, a 200 ms wait must still span two ticks */
	if (!(tp->cfg.interval_ms > 0 && tp->cfg.interval_ms <= 100))
		return h->procs_blocked > found->dstate;
	return pl__blocked_rule_sweep(&tp->blocked_rule, tick, h->procs_blocked, found->dstate,
				      found->flickers);
}

/* A process started by vfork (or posix_spawn) leaves its parent in D until
 * it execs or exits, a wait that is no I/O wait and so shows in neither PSI
 * nor procs_blocked: a sleeping parent would be read only in its slice, up
 * to a second late, and a 500 ms wait seen about half the time. So the
 * parent of a process added this tick is read now, unless it was already
 * or the child has exec'd (its comm is no longer the parent's: a vfork wait
 * ends at the exec, and most children a shell or make starts exec at once);
 * found in D, it is read every tick while it stays there. The hash is
 * current after a probe or a scan of a live root (the only places that
 * add); a parent found gone is dropped by the next tick's sweep. */
static void read_new_parents(struct pl_tprocs *tp, uint64_t tick)
{
	for (size_t k = 0; k < tp->n_new_children; k++) {
		long c = lookup(tp, tp->new_children[k]), at;
		struct pl_tproc *p;

		if (c < 0 || (at = lookup(tp, tp->v[c].ppid)) < 0)
			continue;
		p = &tp->v[at];
		if (p->seen_tick == tick || strcmp(p->comm, tp->v[c].comm) != 0)
			continue;
		read_out_of_turn(tp, p, tick);
	}
}

/* The processes started since the last tick: a few new pids, in this
 * process's own pid namespace (loadavg's last pid is this namespace's; the
 * root may be another's), in order, looked up one by one; anything else is
 * a scan of the directory, as is every RESCAN_TICKS-th tick. */
static int find_new_pids(struct pl_tprocs *tp, uint64_t tick, uint64_t last_pid)
{
	bool need_scan = !tp->kept || tp->scan_tick == 0 || last_pid == 0 || !tp->have_last_pid ||
			 last_pid != tp->last_pid || tick >= tp->scan_tick + RESCAN_TICKS;
	uint64_t new_ns, t0;
	int err;

	if (need_scan && tp->kept && tp->scan_tick && tp->have_last_pid && tp->own_pid_ns &&
	    last_pid > tp->last_pid && last_pid - tp->last_pid <= PROBE_MAX &&
	    tick < tp->scan_tick + RESCAN_TICKS) {
		err = probe(tp, tp->last_pid, last_pid, tick);
		tp->last_pid = last_pid;
		return err < 0 ? err : 0;
	}
	tp->last_pid = last_pid;
	tp->have_last_pid = last_pid != 0;
	if (!need_scan)
		return 0;
	new_ns = tp->cost ? tp->cost->ph[PL_TPHASE_NEW].ns : 0;
	t0 = pl__tcost_now(tp->cost);
	err = scan(tp, tick);
	if (tp->cost) {
		/* the new pids' reads are theirs, not the scan's */
		new_ns = tp->cost->ph[PL_TPHASE_NEW].ns - new_ns;
		pl__tcost_done(tp->cost, PL_TPHASE_SCAN, t0, 1);
		tp->cost->ph[PL_TPHASE_SCAN].ns -= new_ns;
	}
	return err < 0 ? err : 0;
}

int pl__tprocs_tick(struct pl_tprocs *tp, uint64_t tick, uint64_t last_pid,
		    const struct pl_tprocs_hint *hint)
{
	struct sweep_found found = { 0, 0, 0 };
	bool all = tp->cfg.stat_every_tick || !tp->kept;
	int err;

	tp->n_new_children = 0;
	tp->tick = tick;
	tp->next_last_pid = last_pid;
	/* before touched is emptied: the scan's candidates and the processes
	 * whose run time it reads are the last tick's reads (give_candidates) */
	if (take_notes(tp, tick))
		all = true;
	tp->n_touched = 0;
	tp->n_reap_parents = 0;
	tp->tail_bytes = 0;
	tp->birth_bytes = 0;
	/* before the sweep, so that a survivor is read once: what it wrote
	 * since birth goes into birth_bytes, which the tick weighs */
	if (tp->n_births > 0 &&
	    ((err = rebuild_hash(tp)) < 0 || (err = open_surviving_births(tp, tick)) < 0))
		return err;
	sweep(tp, tick, all, &found);
	read_reap_parents(tp, tick, &found);
	/* before the weighing: a writer started since the last tick is in it
	 * (credit_birth_writes), else a dd round that dirtied 800 MB before its
	 * first reading had every process read for nothing (a third of the
	 * ticks of a dd rewriting its file in place, a round each 0.3-0.5 s) */
	if ((err = find_new_pids(tp, tick, last_pid)) < 0)
		return err;
	found.dirtied_bytes += tp->tail_bytes + tp->birth_bytes;
	if (all) {
		tp->full_sweeps++;
	} else if (need_full_sweep(tp, tick, hint, &found)) {
		sweep(tp, tick, true, &found);
		tp->full_sweeps++;
		if (hint->procs_blocked >= 0)
			pl__blocked_rule_swept(&tp->blocked_rule, tick, hint->procs_blocked,
					       found.dstate);
		tp->dirty_balance = 0; /* every process has been read */
		tp->dirty_excess = 0;
	}
	/* A recorded tree's scan drops, and the hash is stale. With the D
	 * watch, a parent in its vfork wait was noted. */
	if (tp->kept && !tp->dwatch.on)
		read_new_parents(tp, tick);
	tp->n_new_children = 0;
	shrink_table(tp);
	pl__tprocs_touched_sort(tp);
	return 0;
}
