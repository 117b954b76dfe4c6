/* Which thread group leaders are in D, told by the kernel, so that the
 * sweep reads just those of the sleeping processes and still sees every D
 * state that lasts until its next tick, however little the process ran
 * before it (tracer_procs.c). Two ways:
 *
 *   switch  (Linux 5.18) a BPF program on the sched_switch tracepoint notes
 *           every leader switched out in D (uninterruptible, not idle) into
 *           a ring buffer the tracer reads from shared memory: also those
 *           out of D again by the tick. It costs every context switch of
 *           the machine ~130 ns on the test VM, a few us a tick on a quiet
 *           machine, 200-280 us under a dd-and-fsync load;
 *   scan    (Linux 6.7) once a tick, one BPF program run walks the process
 *           list and names the leaders in D at that moment (dstate_scan.c),
 *           in the tracer's own CPU time: 55-90 us a tick at 300 processes
 *           whatever the load (a cache miss or two per process), unless
 *           its gate answers first: no more tasks blocked than the
 *           candidates given in D (pl__dwatch_candidates), ~20 us.
 *
 * Where the kernel has both, the tracer starts with the switch watch and
 * takes whichever costs less as the machine's switch rate changes
 * (pl__dwatch_steer). Both need CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN),
 * and the initial pid namespace (the programs see its pids).
 * PERFLINK_PROBE_FAIL=task_iter leaves the switch watch alone; sched_bpf
 * leaves neither: open fails and the tracer reads the sleeping processes in
 * turns, as before. */
#ifndef PL_TRACER_DSTATE_WATCH_H
#define PL_TRACER_DSTATE_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "dstate_scan.h"

enum pl_dwatch_kind { PL_DWATCH_OFF, PL_DWATCH_SCAN, PL_DWATCH_SWITCH };

struct pl_dwatch {
	enum pl_dwatch_kind kind; /* the way in use */
	bool on;
	/* the scan (dstate_scan.h): -1 where the kernel has none */
	struct pl_dscan scan;
	uint64_t scan_ns;         /* what a scan costs, thread CPU, a running mean */
	uint64_t scans, steers;   /* scans run; changes of way */
	uint64_t walks;           /* scans that walked the list (the gate did not answer) */
	int cand[PL_DSCAN_CAND_MAX]; /* the next scan's candidates (pl__dwatch_candidates) */
	size_t n_cand;
	/* leaders whose run time the next scan reads, and what it read: valid
	 * when ran_valid (a scan ran at the last drain, with the gate) */
	int ran_pids[PL_DSCAN_RAN_MAX];
	size_t n_ran;
	struct pl_dscan_ran ran[PL_DSCAN_RAN_MAX];
	bool ran_valid;
	unsigned calm;            /* steers in a row the switch watch would have cost less */
	unsigned since_scan;      /* steers with the switch watch since a scan measured */
	bool scan_next;           /* the switch watch was just attached: scan once more */
	/* the machine's context switches while the switch watch was attached,
	 * and the ticks they were counted over (pl__dwatch_steer): what its
	 * cost to the switching tasks is a multiple of */
	uint64_t attached_switches, attached_ticks;
	/* the switch watch: its ring, program and tracepoint link (-1 while
	 * detached), and the kernel's run-time statistics */
	int map_fd, prog_fd, link_fd, stats_fd;
	void *cons_page;          /* rw: the consumer position */
	void *prod_pages;         /* ro: the producer position, then the data twice */
	size_t page, size;        /* the data area's size, a power of 2 */
};

/* "scan", "switch" or "off" */
const char *pl__dwatch_kind_name(const struct pl_dwatch *w);

/* Load and attach, the scan where the kernel has it, else the switch watch.
 * 0, or -errno (and the probes said absent, once): the caller then does
 * without. timed: the switch watch also keeps the kernel's count of its
 * program's run time (BPF_ENABLE_STATS), for --cost-split. */
int pl__dwatch_open(struct pl_dwatch *w, bool timed);
void pl__dwatch_close(struct pl_dwatch *w);

/* The scan: the leaders in D now. The switch watch: the leaders noted since
 * the last call, in order, repeats included. Up to cap (the rest are taken
 * off the ring as well). *overflow: some were not named (more than cap, the
 * ring full at some point, a failed scan): the caller must read every
 * process once. Returns how many were put in out. */
size_t pl__dwatch_drain(struct pl_dwatch *w, int *out, size_t cap, bool *overflow);

/* Every thread group leader now, by the scan's walk (dstate_scan.h), where
 * the kernel has the scan: -ENOSYS where not. */
ssize_t pl__dwatch_list_leaders(struct pl_dwatch *w, int *out, size_t cap, bool *overflow);
/* The run time and pcount of the i-th leader the last listing gave, read
 * in the same walk (pl__dscan_walk_run); false without them. */
bool pl__dwatch_walk_run(const struct pl_dwatch *w, size_t i, uint64_t *run_ns, uint64_t *pcount);

/* The processes the next scan checks first (dstate_scan.h): the leaders
 * likeliest to be in D, those in D or writing at their last reading. More
 * than PL_DSCAN_CAND_MAX: none, the scan walks. And those whose run time
 * it reads (up to PL_DSCAN_RAN_MAX), into ran, if it runs. */
void pl__dwatch_candidates(struct pl_dwatch *w, const int *pids, size_t n);
void pl__dwatch_ran_pids(struct pl_dwatch *w, const int *pids, size_t n);

/* Where the kernel has both ways: take the one that costs less now. The
 * switch watch costs ~130 ns (SWITCH_COST_NS) for each of the machine's
 * context switches, the scan what its last runs cost: switches is how
 * many the machine made over ticks ticks (/proc/stat's ctxt). To the scan
 * at once; back only after a few calm steers in a row (CALM_STEERS), so
 * that a bursty load does not flip it each time. The switches counted
 * while the switch watch was attached are kept whether it can steer or
 * not (attached_switches). */
bool pl__dwatch_steerable(const struct pl_dwatch *w);
void pl__dwatch_steer(struct pl_dwatch *w, uint64_t switches, uint64_t ticks);

/* The switch watch's run time so far in the tasks it ran in (the switching
 * ones, not the tracer), ns; 0 when not timed, and for the scan, which
 * runs in the tracer's own read(2). */
uint64_t pl__dwatch_run_ns(const struct pl_dwatch *w);

#endif
