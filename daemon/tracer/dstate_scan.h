/* The D scan's program and its reading (dstate_scan.c), for dstate_watch.c:
 * the tgids of the thread group leaders in D now, asked of the kernel with
 * one BPF program run (Linux 6.7: the open-coded task iterator). */
#ifndef PL_TRACER_DSTATE_SCAN_H
#define PL_TRACER_DSTATE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc_parse.h"

/* Candidates a run checks one by one before it walks the list. */
#define PL_DSCAN_CAND_MAX 16
/* Processes whose leader's run time a run reads (the tracer's watched
 * ones, which it checks every tick for whether they ran). */
#define PL_DSCAN_RAN_MAX 32

/* A leader's run time and times it was switched in, as its schedstat
 * shows them (se.sum_exec_runtime, sched_info.pcount); ok false: no such
 * process. With d->fields, the same run read what its stat and io would
 * say (dstate_fields.c): fields true when that is all known, which is for a
 * single-threaded user process in a plain state (R, S or D), a leader;
 * anything else (a kernel thread, whose stat names its workqueue, a zombie,
 * a stopped or traced one, more threads, whose io /proc sums) is read from
 * /proc as before. The fields are read only when the leader ran since the
 * run time and pcount the caller puts in run_ns and pcount before the run
 * (UINT64_MAX: always): one that did not has nothing new to say. */
struct pl_dscan_ran {
	uint64_t run_ns, pcount;
	bool ok;
	bool fields;
	struct pl_pid_stat st; /* comm, state, ppid, num_threads, starttime, blkio */
	struct pl_pid_io io;
};

/* Where the fields a run reads are, from the kernel's BTF (dstate_fields.c). */
struct pl_dscan_layout {
	uint32_t flags_off, exit_state_off, pid_off, start_off, comm_off;
	uint32_t signal_off, parent_off, delays_off, ioac_off, ioac_size;
	uint32_t nr_threads_off, sig_ioac_off, blkio_off;
	/* each counter's offset in task_io_accounting, or UINT32_MAX */
	uint32_t io_off[7]; /* rchar, wchar, syscr, syscw, read_bytes, write_bytes, cancelled */
	long clk_tck;       /* stat's unit: USER_HZ */
};

struct pl_dscan {
	int prog_fd, map_fd;      /* -1 where there is none */
	volatile uint32_t *value; /* the map's value, mapped */
	bool gate;                /* the program counts blocked tasks first */
	bool ran_check;           /* and reads the run time of leaders asked for */
	bool fields;              /* and their stat's and io's fields */
	struct pl_dscan_layout layout;
};

/* No scan: fds -1, nothing mapped. */
void pl__dscan_init(struct pl_dscan *d);
/* Load the program and its map. 0, or -errno (-ENOENT: the kernel has no
 * task iterator kfuncs, or its types are not as the program reads them);
 * d is as after pl__dscan_init then. */
int pl__dscan_open(struct pl_dscan *d);
/* The leaders in D now, up to cap into out; how many, or -errno.
 * *overflow: there were more (the caller reads every process). With the
 * gate, the cand (up to PL_DSCAN_CAND_MAX; more are not looked at) are
 * checked first: when the runqueues count no more tasks blocked in D than
 * those of them found off the CPU in D, they are the answer, and the list
 * is not walked (*walked false). With the gate and d->ran_check, the same
 * run also reads the run time of up to PL_DSCAN_RAN_MAX leaders by pid
 * (ran_pids) into ran: for each, one look-up in the run already made,
 * where a read of its CPU clock is a system call (0.3-0.5 against 1-2.5 us
 * on the test VM); without, n_ran is taken as 0. */
ssize_t pl__dscan_read(const struct pl_dscan *d, const int *cand, size_t n_cand,
		       const int *ran_pids, size_t n_ran, struct pl_dscan_ran *ran, int *out,
		       size_t cap, bool *overflow, bool *walked);
/* Every thread group leader, in D or not (the same walk): the processes
 * there are, as a listing of /proc in the initial pid namespace has them,
 * for a tenth of its cost. How many, or -errno; *overflow as above. */
ssize_t pl__dscan_list_all(const struct pl_dscan *d, int *out, size_t cap, bool *overflow);
/* The run time and pcount of the i-th leader the last run named (its
 * out[i]), read in the same walk; false without them (no d->ran_check). */
bool pl__dscan_walk_run(const struct pl_dscan *d, size_t i, uint64_t *run_ns, uint64_t *pcount);
void pl__dscan_close(struct pl_dscan *d);

#endif
