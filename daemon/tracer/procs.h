/* The tracer's process table: one record per live process (thread group
 * leader), keyed by pid and starttime, with the kept-open fds of its /proc
 * files and what the CSV and the stall events need of it.
 *
 * The table is read in parts (docs/tracer.md, "Which processes a tick
 * reads", states the rules as invariants):
 *   procs_table.c  the records, the pid hash, the list of those read a tick
 *   procs_read.c   reading one process (procs_read.h)
 *   procs_plan.c   when each process is read next (procs_plan.h)
 *   procs_reap.c   writes moved from parents to their reaped children
 *   procs_find.c   finding new processes (procs_find.h)
 *   procs_tick.c   the tick that ties them together */
#ifndef PL_DAEMON_TRACER_PROCS_H
#define PL_DAEMON_TRACER_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc_parse.h"
#include "procfile.h"
#include "stall_detect.h"
#include "stall_memcg.h"

/* A process's CSV deltas against the Python tool's baseline
 * (tracer_baseline.c). */
struct pl_csv_base {
	bool have;             /* a baseline is kept */
	uint64_t wchar, wbytes, blkio_ticks; /* as of the last sample used */
	bool now;              /* this tick's sample is one Python uses */
	int64_t d_wchar, d_wbytes; /* bytes since the baseline */
	double d_blk_ms;       /* the kernel's block-I/O delay since it, as is */
};

/* What a tick's pass looks at for a process it may not read: its pid and
 * the first tick at which it must be read again. Kept apart from the
 * records, at the same indices, so that passing over the sleepers reads a
 * small dense array. */
struct pl_tproc_due {
	uint64_t tick;
	int pid;
	bool by_slice;         /* tick is its slice's turn (procs_plan.h) */
};

struct pl_tproc {
	int pid;
	int label;             /* index into the watch list, -1 when not watched */
	char state;            /* as of the last stat read */
	/* this tick's results, when it was read this tick; else the last's */
	bool stat_now;         /* state and blkio are this tick's */
	bool io_now;           /* rchar..wbytes are this tick's */
	/* since the last reading the leader ran or a block-I/O wait of its
	 * ended: two D samples either side are two waits */
	bool woke_now;
	bool idle_now;         /* known not to have run since its last reading */
	bool odd_blkio_now;    /* odd_blkio (below) is in this tick's events */
	uint64_t seen_tick;    /* its last reading (or, in a tree, listing) */
	uint64_t hot_until;    /* read every tick until then (procs_plan.h) */
	uint64_t reap_tick;    /* when its last child read by the tracer was reaped */
	double d_blk_ms;
	int64_t gap_wchar, gap_wbytes; /* bytes written since the last reading */
	int64_t gap_rbytes, gap_rss_kb; /* read_bytes since then, and the RSS's change, kB */

	uint64_t touch_tick;   /* read at this tick: at touched[touch_pos] */
	size_t touch_pos;
	int ppid;
	uint64_t starttime;
	char comm[PL_COMM_MAX];
	int64_t num_threads;
	uint64_t blkio_ticks;
	bool has_blkio;

	/* The leader's run time and switch count (its schedstat, or for a
	 * single-threaded process its CPU clock: ss_clock). Unchanged, the
	 * leader did not run, so its state and blkio did not change (a task
	 * must run to enter D), nor did a single-threaded process's io (only
	 * a task itself accounts its writes). */
	uint64_t ss_run_ns, ss_pcount;
	bool ss_ok, ss_clock;

	uint64_t rchar, wchar, wbytes, rbytes;
	int64_t rss_kb;        /* as of its last stat read; -1: none yet */
	uint64_t io_tick;      /* the tick rchar..wbytes are of, 0 = none */
	bool io_denied;

	int stat_fd, io_fd, ss_fd, wchan_fd; /* kept open on a live /proc, else -1 */

	uint64_t d_tick;       /* the last tick it was seen in D, 0 never */
	bool stat_behind;      /* ran before a reading that skipped stat */
	uint64_t first_tick;

	/* A parent's io counts its reaped children's: what they had written
	 * is taken off its next deltas in the bully history (procs_reap.c). */
	uint64_t reap_wbytes, reap_wchar, reap_rbytes;
	int reap_pid;          /* the last of them: whose the rest of the jump is */

	struct pl_csv_base csv;
	/* a block-I/O delay jump no process could have had, said once */
	struct {
		bool said;
		double d_blk_ms, age_ms;
	} odd_blkio;
	struct pl_writes writes;       /* per-tick write history for the bully */
	struct pl_stall_victim victim; /* used when watched */
	/* a watched one's memory cgroup, opened at its first episode, and its
	 * limit hits when the episode began */
	struct pl_memcg memcg;
	uint64_t memcg_hits0;
	bool memcg_have0;
};

struct pl_tprocs_cfg {
	const char *const *watch; /* comm substrings */
	size_t nwatch;
	bool track_writers;
	bool stat_every_tick;
	long clk_tck;
	/* block-I/O delays read 0, as on a kernel without delay accounting
	 * (the probe "delayacct" forced absent) */
	bool no_blkio;
	long fd_budget;        /* /proc fds kept at most; 0: pl__fd_budget() */
	double interval_ms;    /* the tick's length; 0: unknown */
};

/* Whether tasks in an I/O wait that the first pass did not find in D make
 * the tick read every sleeping process (procs_plan.c). */
struct pl_blocked_rule {
	uint64_t swept_tick;   /* the last full sweep's tick */
	int64_t unfound;       /* of its procs_blocked, not found in D by it */
	uint64_t deferred_tick; /* the last tick a sweep was put off */
};

struct pl_tprocs {
	struct pl_tprocs_cfg cfg;
	int rootfd;            /* borrowed */
	bool kept;             /* live procfs: keep per-pid fds open */
	int scanfd;            /* own fd of the root for getdents64 */
	char *dents;           /* getdents64 buffer */
	size_t dents_cap;
	struct pl_tproc *v;
	struct pl_tproc_due *due;   /* due[i] is v[i]'s */
	size_t n, cap;
	size_t *touched, n_touched; /* indices read this tick, in table order */
	uint64_t tick;         /* the tick being read, or the last one */
	int32_t *hash;         /* open addressing: pid -> index + 1 */
	size_t hcap;
	bool hash_ok;          /* every entry is in the hash at its index */
	struct pl_procfile scratch; /* shared read buffer, fd borrowed per read */
	long fd_budget, fds_open;
	uint64_t last_pid, scan_tick;
	bool have_last_pid;
	struct pl_writes_gone gone; /* recent writers that exited */
	uint64_t csv_bases;    /* pids given a CSV baseline since the last prune */
	uint64_t read_errors, io_denied, pid_reuses, exits, implausible_blkio;
	double now_ms;         /* this tick's monotonic time, set by the tracer */
	uint64_t stat_reads, io_reads, schedstat_reads, dir_scans;
	uint64_t full_sweeps, dirty_sweeps, probes, wchan_reads;
	bool own_pid_ns;       /* the root is a procfs of this pid namespace */
	int self_pid;          /* the tracer's pid there, 0 when not own_pid_ns */
	/* bytes vmstat says were dirtied less those the processes read wrote
	 * (procs_plan.c) */
	int64_t dirty_balance;
	int64_t dirty_excess;  /* the last tick's excess when over its slack, else 0 */
	struct pl_blocked_rule blocked_rule;
	int new_children[32];  /* added this tick: their parents may be in vfork */
	size_t n_new_children;
	int reap_parents[32];  /* parents of those dropped, not read yet this tick */
	size_t n_reap_parents;
	/* dirtied pages found outside the sweep this tick: reaped children's
	 * last writes, and new processes' first */
	uint64_t tail_bytes, birth_bytes;
	bool warned_fds;
	bool no_schedstat;     /* this kernel has no /proc/PID/schedstat */
	bool cpuclock;         /* run times from CPU clocks (procs_read.c) */
};

/* What the system counters say about a tick. */
struct pl_tprocs_hint {
	bool maybe_blocked;    /* PSI io or memory grew; without PSI, procs_blocked */
	int64_t procs_blocked; /* tasks in an I/O wait now (/proc/stat), -1 unknown */
	int64_t dirtied_bytes; /* pages dirtied since the last tick, -1 unknown */
};

int pl__tprocs_init(struct pl_tprocs *tp, const struct pl_tprocs_cfg *cfg);
void pl__tprocs_free(struct pl_tprocs *tp);
/* Point the table at a root. keep_fds: the root is a live procfs (per-pid
 * fds stay bound to their task); otherwise every file is opened by path
 * each tick. */
int pl__tprocs_set_root(struct pl_tprocs *tp, int rootfd, bool keep_fds);
/* One tick: re-read the processes due, drop the dead, find new ones.
 * last_pid: loadavg's most recent pid, 0 when unknown. */
int pl__tprocs_tick(struct pl_tprocs *tp, uint64_t tick, uint64_t last_pid,
		    const struct pl_tprocs_hint *hint);

/* Was p read this tick (and is it in touched)? Only then are its tick's
 * results this tick's. */
static inline bool pl__tproc_read_now(const struct pl_tprocs *tp, const struct pl_tproc *p)
{
	return p->touch_tick == tp->tick;
}

/* Asleep in a way that needs no reading while the leader does not run. */
static inline bool pl__state_sleeping(char state)
{
	return state == 'S' || state == 'I' || state == 'T' || state == 't' || state == 'Z' ||
	       state == 'X' || state == 'x';
}

/* The wchan of p, in D at this tick's sample, in tp->scratch; NULL when
 * unreadable. */
const char *pl__tproc_wchan_now(struct pl_tprocs *tp, struct pl_tproc *p);
/* p's /proc/PID/wchan into tp->scratch through a kept fd: length or -errno. */
ssize_t pl__tproc_read_wchan(struct pl_tprocs *tp, struct pl_tproc *p);

/* Match comm against the watch list as the Python tool does: the first name
 * that is a substring of comm, or -1. */
int pl__tracer_match(const char *const *watch, size_t nwatch, const char *comm);

/* The table's own bookkeeping (procs_table.c), for the other parts. */
int pl__tprocs_grow(struct pl_tprocs *tp);
void pl__tprocs_shrink(struct pl_tprocs *tp);
/* Make the hash current; it stays so until an entry is dropped. */
int pl__tprocs_rehash(struct pl_tprocs *tp);
/* Index of pid, or its insert slot as -(slot + 1). The hash must be current. */
long pl__tprocs_lookup(const struct pl_tprocs *tp, int pid);
/* Entry i was read this tick. */
void pl__tprocs_touch(struct pl_tprocs *tp, size_t i);
/* The entries read this tick back in table order. */
void pl__tprocs_touched_sort(struct pl_tprocs *tp);
/* Entry i is gone: its writes kept among the recent exits, its parent told,
 * its place taken by the last entry. */
void pl__tprocs_drop(struct pl_tprocs *tp, size_t i, uint64_t tick);
void pl__tproc_close(struct pl_tprocs *tp, struct pl_tproc *p);
void pl__tproc_close_fd(struct pl_tprocs *tp, int *fd);
/* Put the tick's writes, reads and RSS change into p's history. */
void pl__tproc_put_writes(struct pl_tproc *p, uint64_t tick);

#endif
