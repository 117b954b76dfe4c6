/* What the tracer's files share: the per-process table (tracer_procs.c), the
 * system-wide counters (tracer_sys.c), the CSV writer (tracer_csv.c) and the
 * tick that ties them together (tracer.c). Not for use outside tracer*.c. */
#ifndef PL_DAEMON_TRACER_PRIV_H
#define PL_DAEMON_TRACER_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clock.h"
#include "dstate_watch.h"
#include "pid_range.h"
#include "json_writer.h"
#include "log.h"
#include "proc_parse.h"
#include "procfile.h"
#include "stall_detect.h"
#include "tracer.h"

/* --cost-split's accounts for one tick. A reader that times holds a pointer
 * that is NULL when the split is off, so that timing costs nothing then. */
struct pl_tcost {
	struct pl_tracer_phase_cost ph[PL_TPHASE_N];
};

/* Over the run (tracer_cost.c). The phases are timed on the monotonic clock,
 * as a thread-CPU read costs a syscall; so a tick that was preempted (its
 * wall time well above its CPU time, as on a busy machine at nice 10) would
 * count the other processes' time as its own. Its counts (items, reads) are
 * kept, its times are not: costs are per item over the ticks that ran
 * through, times the items of every tick. */
struct pl_tcost_run {
	struct pl_tracer_phase_cost clean[PL_TPHASE_N], all[PL_TPHASE_N];
	uint64_t ticks, clean_ticks, tick_cpu_ns;
};
/* Add one tick's accounts (and clear them); wall_ns and cpu_ns: the tick's. */
void pl__tcost_merge(struct pl_tcost_run *run, struct pl_tcost *tick, uint64_t wall_ns,
		     uint64_t cpu_ns);
void pl__tcost_report(const struct pl_tcost_run *run, struct pl_tracer_stats *out);

static inline uint64_t pl__tcost_now(const struct pl_tcost *c)
{
	return c ? pl__mono_ns() : 0;
}

/* A read syscall of phase ph that started at t0. */
static inline void pl__tcost_read(struct pl_tcost *c, enum pl_tracer_phase ph, uint64_t t0)
{
	if (c) {
		c->ph[ph].read_ns += pl__mono_ns() - t0;
		c->ph[ph].reads++;
	}
}

/* items of phase ph done since t0. */
static inline void pl__tcost_done(struct pl_tcost *c, enum pl_tracer_phase ph, uint64_t t0,
				  uint64_t items)
{
	if (c) {
		c->ph[ph].ns += pl__mono_ns() - t0;
		c->ph[ph].items += items;
	}
}

/* A process's CSV deltas, against the Python tool's baseline
 * (tracer_baseline.c). */
struct pl_csv_base {
	bool have;             /* a baseline is kept */
	uint64_t wchar, wbytes, blkio_ticks; /* as of the last sample used */
	bool now;              /* this tick's sample is one Python uses */
	int64_t d_wchar, d_wbytes; /* bytes since the baseline */
	double d_blk_ms;       /* the kernel's block-I/O delay since it, as is */
};

/* What each tick's pass over the table looks at for a process it does not
 * read (tracer_procs.c): its pid, and the first tick at which it must be
 * read again if nothing sends the tracer to it before (a D note, a reaped
 * child). In an array of their own at the table's indices, 16 bytes each:
 * passing over ~270 sleepers then reads 4 KB, where looking into their
 * 1.3 KB records read two cache lines on a page of its own each (13 us a
 * tick quiet, 30 under the stall load, and on the test VM ~100 pages that
 * the hypervisor sometimes has to map again one by one). */
struct pl_tproc_due {
	uint64_t tick;
	int pid;
	/* tick is its slice's turn: passed over by the tick numbers (a test, a
	 * replay), the next turn is taken, as the tick-by-tick rule would */
	bool by_slice;
};

/* One process (thread group leader) seen under the proc root. The record is
 * keyed by pid and starttime: a pid that comes back with another starttime
 * is another process and starts fresh. */
struct pl_tproc {
	/* What deciding when to read it next and clearing its tick's results
	 * look at (due_after, clear_tick): together at the start. */
	int pid;
	int label;             /* index into the watch list, -1 when not watched */
	char state;            /* as of the last stat read */
	/* this tick's results, when it was read this tick (pl__tproc_read_now);
	 * else its last reading's */
	bool stat_now;         /* state/blkio are known for this tick */
	bool io_now;           /* rchar..wbytes are this tick's */
	/* since the last reading the leader ran (its schedstat changed) or a
	 * block-I/O wait of its ended (its delay total grew): two D samples
	 * either side are two waits */
	bool woke_now;
	bool idle_now;      /* known not to have run since its last reading */
	bool odd_blkio_now;    /* odd_blkio (below) is in this tick's events */
	uint64_t seen_tick;    /* its last reading (or, in a tree, listing) */
	/* read every tick until then, asleep or not: seen in D or dirtying
	 * pages lately (a fsync loop, jbd2), it may do so again at once */
	uint64_t hot_until;
	/* the D watch noted it switched out in D before this tick: read it,
	 * asleep or not */
	uint64_t noted_tick;
	uint64_t reap_tick;    /* the last reaped child's tick (below) */
	double d_blk_ms;
	int64_t gap_wchar, gap_wbytes; /* bytes since the last reading */
	/* read_bytes since the last reading, and the RSS's change, kB */
	int64_t gap_rbytes, gap_rss_kb;

	/* read this tick: at touched[touch_pos] (pl_tprocs) */
	uint64_t touch_tick;
	size_t touch_pos;
	int ppid;
	uint64_t starttime;
	char comm[PL_COMM_MAX];
	int64_t num_threads;
	uint64_t blkio_ticks;
	bool has_blkio;

	/* /proc/PID/schedstat of the leader: if it did not change, the leader
	 * did not run, so its state and blkio did not change either (a task
	 * must run to enter D), and neither did a single-threaded process's
	 * io counters (only the task itself accounts its writes). */
	uint64_t ss_run_ns, ss_pcount;
	bool ss_ok;
	/* ss_run_ns is the process's CPU clock (tracer_procs.c), not its
	 * leader's schedstat: a single-threaded process, whose clock is its
	 * leader's run time */
	bool ss_clock;
	/* the leader's run time and pcount as the D scan read them this tick
	 * (bpf_tick, the tick + 1), the same fields as its schedstat: read_schedstat takes
	 * them instead of a system call */
	uint64_t bpf_tick, bpf_run_ns, bpf_pcount;
	/* and, with bpf_fields, what its stat and io say: the scan's record
	 * at bpf_slot (dstate_watch.h's ran), for update_stat and update_io */
	uint8_t bpf_slot;
	bool bpf_fields;
	uint64_t bpf_gone_tick; /* the tick + 1 at which the scan found no such process */
	/* its leader's run time and pcount at the last walk of every leader
	 * (walk_tick, 0: none), which the next walk compares (settle_slices) */
	uint64_t walk_tick, walk_run_ns, walk_pcount;

	uint64_t rchar, wchar, wbytes, rbytes;
	int64_t rss_kb; /* as of its last stat read; -1: none yet */
	uint64_t io_tick;      /* tick whose values rchar..wbytes are, 0 = none */
	bool io_denied;

	int stat_fd, io_fd, ss_fd; /* kept open on a live /proc, else -1 */
	/* its wchan, kept from the first D sample of a watched one's episode
	 * (pl__tproc_read_wchan), else -1 */
	int wchan_fd;
	/* the wchan read at wchan_tick (0: none), which a victim still in the
	 * same wait at the next tick has again without a read (note_wchan) */
	uint64_t wchan_tick;
	char last_wchan[PL_WCHAN_MAX];

	uint64_t d_tick;       /* the last tick it was seen in D, 0 never */
	/* it ran before a reading of its io alone (tracer_procs.c): its comm
	 * and threads may have changed without its stat read since */
	bool stat_behind;
	uint64_t first_tick;

	/* A parent's io counts its reaped children's (wait_task_zombie adds
	 * them), so a shell jumps by what its dd wrote: what the children
	 * that exited last had written is taken off the parent's next deltas
	 * in the bully history (the CSV keeps the kernel's numbers). */
	uint64_t reap_wbytes, reap_wchar, reap_rbytes;
	int reap_pid;          /* the last of them: whose the rest of the jump is */

	struct pl_csv_base csv;        /* the CSV row's deltas */
	/* A block-I/O delay jump no process could have had (tracer_procs.c),
	 * said once per process: in this tick's events when odd_blkio_now is set. */
	struct {
		bool said;
		double d_blk_ms, age_ms;
	} odd_blkio;
	struct pl_writes writes;       /* per-tick write history for the bully */
	struct pl_stall_victim victim; /* used when watched */
};

struct pl_tprocs_cfg {
	const char *const *watch; /* comm substrings */
	size_t nwatch;
	bool track_writers;
	bool stat_every_tick;
	long clk_tck;
	/* probe "delayacct" forced absent: block-I/O delays read 0, as on a
	 * kernel without CONFIG_TASK_DELAY_ACCT or with the sysctl off */
	bool no_blkio;
	long fd_budget; /* /proc fds kept at most; 0: all of pl__fd_budget */
	/* the tick's length; 0: unknown. A full sweep for blocked tasks is put
	 * off a tick only at 100 ms or less (pl__blocked_rule_sweep) */
	double interval_ms;
	/* --d-watch=no: no BPF watch of D states, even where it would load */
	bool no_d_watch;
};

/* Whether tasks in an I/O wait that the first pass did not find in D make
 * the sweep read every sleeping process (tracer_procs.c). */
struct pl_blocked_rule {
	uint64_t swept_tick;   /* the last full sweep's tick */
	int64_t unfound;       /* of its procs_blocked, not found in D by it */
	uint64_t deferred_tick; /* the last tick a sweep was put off */
};
/* tick's procs_blocked (>= 0) against found_d, the D states the first pass
 * found, and flickers: processes it read that were in D lately and ran
 * since (one may have been in its wait when /proc/stat was read). True: read
 * them all. Call pl__blocked_rule_swept after such a sweep. */
bool pl__blocked_rule_sweep(struct pl_blocked_rule *r, uint64_t tick, int64_t procs_blocked,
			    int64_t found_d, int64_t flickers);
void pl__blocked_rule_swept(struct pl_blocked_rule *r, uint64_t tick, int64_t procs_blocked,
			    int64_t found_d);

/* Add a tick to the dirty balance (bytes vmstat counts dirtied, less those
 * the processes read wrote, found); true when more was dirtied than they
 * and the skew between the reads account for (tracer_procs.c). */
bool pl__dirty_balance_add(int64_t *balance, int64_t dirtied, int64_t found);
/* Whether the balance says to read every process this tick: balance and
 * the tick's own excess (dirtied less found) over the slack, and the last
 * tick's excess (last_excess, kept by the caller: 0 when it was not over)
 * as well and not four times this one's; or at once when balance and
 * excess are over the larger of a MB and a quarter of what was dirtied. */
bool pl__dirty_sweep_due(int64_t *balance, int64_t *last_excess, int64_t dirtied, int64_t found);

/* new processes whose opening a tick puts off to the next at most (more
 * are opened at once) */
#define PL_TBIRTHS_MAX 256
/* every this many ticks the processes are listed again (tracer_procs.c) */
#define PL_TRESCAN_TICKS 50

struct pl_tprocs {
	struct pl_tprocs_cfg cfg;
	int rootfd;            /* borrowed */
	bool kept;             /* live procfs: keep per-pid fds open */
	int scanfd;            /* own fd of the root for getdents64 */
	char *dents;           /* getdents64 buffer */
	size_t dents_cap;
	struct pl_tproc *v;
	struct pl_tproc_due *due; /* of cap, due[i] is v[i]'s */
	/* of cap, v[i].writes.wrote_until: the stall events look for bullies
	 * in every process's history, and this passes over those with nothing
	 * in the window without a cache miss or two each (tracer_procs.c,
	 * pl__tproc_put_writes) */
	uint64_t *wrote_until;
	size_t n, cap;
	unsigned due_slices;   /* the slices the due ticks were set for */
	/* The entries read this tick (of cap): what the CSV's baseline, its
	 * rows and the stall events look at, instead of walking the whole
	 * table three more times (an entry is 1.3 KB, a cache miss or two
	 * each: 9-13 us a walk at 300 processes). Kept in table order. */
	size_t *touched, n_touched;
	uint64_t tick;         /* the tick being read, or the last one */
	int32_t *hash;         /* open addressing: pid -> index + 1 */
	size_t hcap;
	/* the hash holds every entry at its index: a drop (which moves the
	 * last entry into its place) clears it; an add puts itself in */
	bool hash_ok;
	struct pl_procfile scratch; /* shared read buffer, fd borrowed per read */
	long fd_budget, fds_open;
	uint64_t last_pid, scan_tick;
	bool have_last_pid;
	/* new pids are listed from /proc at their position (pid_range.h) */
	struct pl_pid_range pid_range;
	struct pl_writes_gone gone; /* recent writers that exited */
	/* pids given a CSV baseline since the last prune, dead ones included,
	 * as the Python tool's map counts them */
	uint64_t csv_bases;
	/* counters for pl_tracer_stats */
	uint64_t read_errors, io_denied, pid_reuses, exits;
	/* block-I/O delay deltas no process could have had: in the CSV as
	 * the kernel said, not taken for a stall */
	uint64_t implausible_blkio;
	double now_ms;         /* this tick's monotonic time, set by the tracer */
	uint64_t stat_reads, io_reads, schedstat_reads, dir_scans;
	uint64_t full_sweeps;  /* ticks that read the sleeping processes too */
	uint64_t probes;       /* ticks that looked new pids up instead of a scan */
	uint64_t pid_lists;    /* of them, those that listed them (pid_range.h) */
	bool own_pid_ns;       /* the root is a procfs of this pid namespace */
	int self_pid;          /* the tracer's pid there, 0 when not own_pid_ns */
	/* bytes the kernel says were dirtied less those the processes read
	 * account for (write_bytes is counted as a page is dirtied): above 0,
	 * some process not read wrote them */
	int64_t dirty_balance;
	int64_t dirty_excess;  /* the last tick's excess when over its slack, else 0 */
	struct pl_blocked_rule blocked_rule;
	/* processes added this tick, whose parents may be waiting in vfork */
	int new_children[32];
	size_t n_new_children;
	/* what reaped children wrote after their last reading, moved from
	 * their parents' io to them this tick (settle_reaped): dirtied pages
	 * found, for the balance */
	uint64_t tail_bytes;
	/* what the processes started since the last tick wrote before their
	 * first reading (credit_birth_writes): found, for the balance */
	uint64_t birth_bytes;
	/* parents of processes dropped this tick, not read yet this tick */
	int reap_parents[32];
	size_t n_reap_parents;
	bool warned_fds;
	bool no_schedstat;     /* this kernel has no /proc/PID/schedstat */
	/* a single-threaded process's run time from its POSIX CPU clock
	 * instead of its schedstat: a live procfs of this pid namespace on a
	 * kernel with CPU clocks */
	bool cpuclock;
	struct pl_tcost *cost; /* NULL: not timed */
	enum pl_tracer_phase phase; /* whose reads read_pid_file counts */
	/* the leaders the kernel saw go into D (dstate_watch.h): when on, the
	 * sleeping processes need not be read to find a D state */
	struct pl_dwatch dwatch;
	uint64_t leader_lists; /* scans that took the D scan's walk (list_leaders) */
	uint64_t scan_ran_reads; /* run times the D scan read (read_schedstat) */
	uint64_t scan_stat_reads, scan_io_reads; /* stat and io fields it read */
	uint64_t wchan_reads, wchan_kept; /* victims' wchans read, and taken as the last one */
	uint64_t slices_settled, slices_due; /* slices the walk found not run since, or run */
	int *notes;
	size_t notes_cap, n_notes; /* n_notes: taken this tick, 0 on overflow */
	uint64_t notes_read, note_overflows;
	/* With the D watch: pids a probe found alive but did not open, each
	 * opened at the next tick if it still lives (tracer_procs.c, "births") */
	int births[PL_TBIRTHS_MAX];
	uint64_t next_last_pid; /* loadavg's last pid this tick, for the scan's run */
	uint64_t ran_tick;      /* the tick the scan's run records (dwatch.ran) are of */
	size_t n_births;
	uint64_t births_deferred, births_unopened;
};

/* Put the tick's writes (gap_wbytes, gap_wchar) into p's history, and its
 * wrote_until where the events look for it. */
void pl__tproc_put_writes(struct pl_tprocs *tp, struct pl_tproc *p, uint64_t tick);

/* A process's /proc/PID/wchan into tp->scratch, through a kept fd: the
 * length, or -errno (gone, or not readable). */
ssize_t pl__tproc_read_wchan(struct pl_tprocs *tp, struct pl_tproc *p);
/* The wchan of p, in D at this tick's sample: read, or the last tick's
 * when it is in the same wait (tracer_procs.c); NULL when unreadable. */
const char *pl__tproc_wchan_now(struct pl_tprocs *tp, struct pl_tproc *p);

/* Was p read this tick (and is it in touched)? Only then are its tick's
 * results this tick's: one the pass went by keeps its last reading's. */
static inline bool pl__tproc_read_now(const struct pl_tprocs *tp, const struct pl_tproc *p)
{
	return p->touch_tick == tp->tick;
}

/* What the system counters say about a tick, for the sweep to decide
 * whether the sleeping processes must be read too. */
struct pl_tprocs_hint {
	bool maybe_blocked;    /* PSI io or memory grew; without PSI, procs_blocked */
	int64_t procs_blocked; /* tasks in an I/O wait now (/proc/stat), -1 unknown */
	int64_t dirtied_bytes; /* pages dirtied since the last tick, -1 unknown */
};

int pl__tprocs_init(struct pl_tprocs *tp, const struct pl_tprocs_cfg *cfg);
void pl__tprocs_free(struct pl_tprocs *tp);
/* Point the table at a root. keep_fds: the root is a live procfs (per-pid fds
 * stay bound to their task); otherwise every file is opened by path each
 * tick and the kept fds are closed. */
int pl__tprocs_set_root(struct pl_tprocs *tp, int rootfd, bool keep_fds);
/* One tick: re-read the known processes, drop the dead, discover new ones.
 * last_pid: the most recent pid from loadavg, or 0 when unknown. hint: whether
 * a sleeping task may have blocked or written since the last tick, so that
 * the sleeping ones are re-read too. */
int pl__tprocs_tick(struct pl_tprocs *tp, uint64_t tick, uint64_t last_pid,
		    const struct pl_tprocs_hint *hint);
/* After a tick: each process's CSV deltas against the baseline the Python
 * tool keeps (tracer_baseline.c). */
void pl__tbaseline_tick(struct pl_tprocs *tp);
/* The entries read this tick back in table order (tracer_procs.c). */
void pl__tprocs_touched_sort(struct pl_tprocs *tp);
/* Match comm against the watch list as the Python tool does: the first name
 * that is a substring of comm, or -1. */
int pl__tracer_match(const char *const *watch, size_t nwatch, const char *comm);

/* System-wide counters for one tick. */
struct pl_tsys_sample {
	bool have_disk;        /* at least one --disk was present both times */
	double disk_d_write_kb, disk_d_busy_ms;
	int64_t d_compact, d_alloc, d_majflt;
	int64_t d_scan_direct, d_scan_cgroup; /* as pl_stall_sys's */
	uint64_t dirty_kb, writeback_kb, memfree_kb, memavail_kb;
	uint64_t nr_writeback, nr_dirty;
	struct pl_psi psi_io, psi_mem;
	bool have_psi_io, have_psi_mem;
	uint64_t last_pid;     /* from loadavg, 0 when unknown */
	/* from /proc/stat: every tick without PSI, else when PSI grew and the
	 * D watch is off; -1 when not read */
	int64_t procs_blocked;
	uint64_t ctxt;         /* /proc/stat's context switches; 0 when not read */
	bool maybe_blocked;    /* pl__tsys_maybe_blocked */
	int64_t dirtied_bytes; /* vmstat nr_dirtied since the last tick, -1 unknown */
	int64_t written_kb;    /* vmstat nr_written since the last tick, -1 unknown */
	/* vmstat nr_dirty, nr_writeback and the kernel's thresholds, or the
	 * sysctls' estimate where it has none (thresh_estimated); 0 unknown */
	uint64_t nr_dirty_kb, nr_writeback_kb, bg_thresh_kb, thresh_kb;
	bool thresh_estimated;
};

/* What the tracer reads of /proc/vmstat. Absent keys read 0, but
 * nr_dirtied, nr_written and the two thresholds UINT64_MAX. */
struct pl_vmstat {
	uint64_t compact, alloc, majflt, nr_dirty, nr_writeback, nr_dirtied, nr_written;
	uint64_t dirty_thresh, dirty_bg_thresh; /* pages */
	/* pgscan_direct, pgsteal_direct (all zones'), pgscan_kswapd +
	 * _khugepaged + _proactive, pgscan_anon + pgscan_file (have_scan_all:
	 * the kernel has them) */
	uint64_t scan_direct, steal_direct, scan_other, scan_all;
	bool have_scan_all;
};

#define PL_TRACER_MAX_DISKS 16

struct pl_tsys {
	struct pl_procfile diskstats, vmstat, meminfo, psi_io, psi_mem, loadavg;
	char disks[PL_TRACER_MAX_DISKS][32];
	size_t ndisks;
	bool have_prev;
	uint64_t prev_sect[PL_TRACER_MAX_DISKS], prev_busy[PL_TRACER_MAX_DISKS];
	bool prev_found[PL_TRACER_MAX_DISKS];
	/* On a live /proc, each disk's /sys/class/block/NAME/stat, kept open:
	 * one device's counters cost a third of the whole diskstats table.
	 * Used when every --disk has one; on any failure, diskstats again. */
	struct pl_procfile disk_stat[PL_TRACER_MAX_DISKS];
	bool sysfs_disks, sysfs_tried;
	uint64_t prev_compact, prev_alloc, prev_majflt;
	struct pl_vmstat prev_vm; /* the reclaim counters of the last read */
	uint64_t prev_nr_dirtied, prev_nr_written; /* UINT64_MAX: not known */
	long page_bytes;
	bool psi_io_reported, psi_mem_reported;
	uint64_t dirty_bg_thresh_kb, dirty_thresh_kb; /* 0 = unknown */
	long dirty_ratio, dirty_bg_ratio;
	uint64_t dirty_bytes, dirty_bg_bytes;
	long dirty_expire_cs, dirty_writeback_cs; /* -1: unreadable */
	bool sysctl_read;
	struct pl_procfile stat;    /* /proc/stat, read only without PSI */
	/* set by the tracer before a read: procs_blocked is not needed (the D
	 * watch names the blocked), the switch count is (to steer the watch) */
	bool blocked_unneeded, want_ctxt;
	bool have_prev_psi;
	uint64_t prev_psi_io_us, prev_psi_mem_us;
	struct pl_tcost *cost; /* NULL: not timed */
};
/* A task may have blocked since the previous sample: PSI io or memory stall
 * time grew, or without PSI, procs_blocked is non-zero or unknown. */
bool pl__tsys_maybe_blocked(struct pl_tsys *s, const struct pl_tsys_sample *cur);

int pl__tsys_init(struct pl_tsys *s, const char *disks_csv);
/* Every --disk against the diskstats under rootfd, naming the disks it has:
 * none named is -EINVAL; one that is not there is a warning (0). */
int pl__tsys_check_disks(const struct pl_tsys *s, int rootfd);
void pl__tsys_free(struct pl_tsys *s);
/* Read every system-wide file relative to rootfd; keep: reuse kept fds. */
void pl__tsys_read(struct pl_tsys *s, int rootfd, bool keep, struct pl_tsys_sample *out);
void pl__tsys_parse_vmstat_all(const char *buf, struct pl_vmstat *v);
/* The vmstat parse on its own, for tests: compact_stall, the sum of every
 * allocstall* key (kernels name them per zone or not at all), pgmajfault,
 * nr_dirty, nr_writeback, nr_dirtied. Absent keys read 0, but nr_dirtied
 * (pages dirtied since boot, from 2.6.37 on) UINT64_MAX. */
void pl__tsys_parse_vmstat(const char *buf, uint64_t *compact, uint64_t *alloc,
			   uint64_t *majflt, uint64_t *nr_dirty, uint64_t *nr_writeback,
			   uint64_t *nr_dirtied);

/* Quantiles of per-tick costs over a whole run in fixed memory: log-linear
 * buckets of microseconds, under 1% relative error. */
#define PL_QHIST_BUCKETS (256 + 40 * 128)
struct pl_qhist {
	uint32_t b[PL_QHIST_BUCKETS];
	uint64_t n;
	double max_ms;
};
void pl__qhist_add(struct pl_qhist *h, double ms);
/* q in [0, 1]; 0 when empty. */
double pl__qhist_quantile(const struct pl_qhist *h, double q);

/* kernel.task_delayacct as found under the root. */
enum pl_delayacct { PL_DELAYACCT_ON, PL_DELAYACCT_OFF, PL_DELAYACCT_ABSENT,
		    PL_DELAYACCT_UNREADABLE };
enum pl_delayacct pl__tracer_read_delayacct(int rootfd);
const char *pl__tracer_delayacct_name(enum pl_delayacct d);

/* The CSV, byte for byte as io_stall_tracer.py writes it. */
extern const char pl__tracer_csv_header[];
struct pl_csv_row {
	double wall, mono;
	const char *label;
	int pid;
	char state;
	double d_wchar_kb, d_wbytes_kb, d_blkio_ms, disk_d_write_kb, disk_d_busy_ms;
};
struct pl_csv_sys {
	double wall, mono;
	int64_t d_compact, d_alloc, d_majflt;
	uint64_t dirty_kb, writeback_kb, memfree_kb, memavail_kb;
};
/* Format into buf (NUL-terminated, ending in '\n'); returns the length, or
 * -ENOSPC when cap is too small. Commas and line breaks in a label are
 * replaced with '_' so that a process name cannot shift the columns. */
int pl__csv_format_row(char *buf, size_t cap, const struct pl_csv_row *r);
int pl__csv_format_sys(char *buf, size_t cap, const struct pl_csv_sys *r);
/* Python's "%.0f" (decimals 0) or "%.3f" (3) of a float, as the rows have
 * them; "-0" for small negatives, as Python prints. The length, or -ENOSPC. */
int pl__csv_fmt(char *buf, size_t cap, double v, int decimals);

/* The tracer itself. */
struct pl_tracer {
	struct pl_tracer_config cfg; /* own copies of the strings */
	char *names_buf;
	const char **watch;
	size_t nwatch;
	long clk_tck;
	uint64_t interval_ns;

	int rootfd;
	bool live;                  /* rootfd is a procfs */
	bool seq;                   /* numbered snapshots, one per tick */
	size_t snap_next;
	int snapfd;

	FILE *csv;
	char *csv_buf;
	off_t csv_whole; /* the CSV's length after its last whole tick */
	off_t csv_tick_bytes; /* written in this tick so far */
	int events_fd;
	char *events_path;

	struct pl_tprocs procs;
	struct pl_tsys sys;
	struct pl_stall_history hist;
	struct pl_stall_cfg scfg;
	struct pl_json json;
	struct pl__ratelimit event_rl;

	enum pl_delayacct delayacct;
	bool delayacct_restore;     /* we turned it on: turn it off at close */

	uint64_t tick, rows, events;
	/* the D watch's steering: the switch count when last read, and when */
	uint64_t steer_ctxt, steer_tick;
	struct pl_qhist sampler, wall;
	double sampler_ms_last;
	uint64_t tick_cpu0_ns;      /* CPU clock at the start of this tick */
	struct pl_tcost cost;       /* --cost-split: this tick's */
	struct pl_tcost_run cost_run;
	uint64_t d_watch_run0_ns; /* the switch watch's run time at the end of the first tick */

	size_t *row_idx;            /* this tick's rows, sorted by pid */
	size_t row_cap;
	char line[512];
};

/* Open an output to write, created if absent (*created), not emptied yet;
 * a symbolic link is refused. An fd or -errno. */
int pl__tracer_open_output(const char *path, bool *created);

/* tracer_events.c: the events file opened (not emptied: open_outputs
 * does that once every output is open). */
int pl__tevents_open(struct pl_tracer *t, bool *created);
void pl__tevents_close(struct pl_tracer *t);
/* The first line of the events file and of the log: what this run can see. */
int pl__tevents_config(struct pl_tracer *t, double wall, double mono,
		       const struct pl_tsys_sample *first);
/* Look at every watched process after a tick and report its stalls. */
int pl__tevents_tick(struct pl_tracer *t, double wall, double mono);

#endif
