/* Which processes went into D since the last look, told by the kernel: a
 * small BPF program on the sched_switch tracepoint notes the pid of every
 * thread group leader that is switched out in D (uninterruptible, not idle),
 * into a ring buffer the tracer reads from shared memory, without a
 * syscall. The sweep then reads just those of the sleeping processes, and
 * sees every D state that lasts until its next tick, however little the
 * process ran before it (tracer_procs.c).
 *
 * Needs a kernel with BPF ring buffers and the sched_switch prev_state
 * argument (5.18), CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN), and the
 * initial pid namespace (the program sees its pids). Where any is missing,
 * or PERFLINK_PROBE_FAIL names "sched_bpf", open fails and the tracer reads
 * the sleeping processes as before. */
#ifndef PL_TRACER_DSTATE_WATCH_H
#define PL_TRACER_DSTATE_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pl_dwatch {
	int map_fd, prog_fd, link_fd, stats_fd;
	void *cons_page;        /* rw: the consumer position */
	void *prod_pages;       /* ro: the producer position, then the data twice */
	size_t page, size;      /* the data area's size, a power of 2 */
	bool on;
};

/* Load and attach. 0, or -errno (and the probe said absent, once): the
 * caller then does without. timed: also keep the kernel's count of the
 * program's run time (BPF_ENABLE_STATS), for --cost-split. */
int pl__dwatch_open(struct pl_dwatch *w, bool timed);
void pl__dwatch_close(struct pl_dwatch *w);

/* The pids noted since the last call, in order, repeats included, up to cap
 * (the rest are taken off the ring as well). *overflow: the ring was full at
 * some point, so some were not noted: the caller must read every process
 * once. Returns how many were put in out. */
size_t pl__dwatch_drain(struct pl_dwatch *w, int *out, size_t cap, bool *overflow);

/* The program's run time so far in the tasks it ran in (the switching
 * ones, not the tracer), ns; 0 when not timed. */
uint64_t pl__dwatch_run_ns(const struct pl_dwatch *w);

#endif
