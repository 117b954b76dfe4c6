/* What the D scan's run reads of a process besides its run time: the
 * fields of its /proc stat and io that the tracer uses, taken from the
 * task itself (dstate_scan.c assembles the reads, this file says where the
 * fields are and what they mean). The record one leader's reads fill in
 * the scan's map, in 64-bit words. */
#ifndef PL_TRACER_DSTATE_FIELDS_H
#define PL_TRACER_DSTATE_FIELDS_H

#include <stdbool.h>
#include <stdint.h>

#include "btf_find.h"
#include "dstate_scan.h"

enum {
	PL_REC_RUN,      /* se.sum_exec_runtime */
	PL_REC_PCOUNT,   /* sched_info.pcount; ~0: no such task */
	PL_REC_STATE,    /* __state (low half), exit_state (high half) */
	PL_REC_FLAGS,    /* flags (low half), signal->nr_threads (high half) */
	PL_REC_IDS,      /* pid (low half), tgid (high half) */
	PL_REC_PPID,     /* real_parent->tgid (low half) */
	PL_REC_START,    /* start_boottime, ns */
	PL_REC_BLKIO,    /* delays->blkio_delay, ns (0 without delays) */
	PL_REC_COMM,     /* comm, 16 bytes */
	PL_REC_IOAC = PL_REC_COMM + 2,      /* the task's task_io_accounting */
	PL_REC_SIG_IOAC = PL_REC_IOAC + 8,  /* its signal's: reaped threads and children */
	/* in: the run time and pcount the caller last knew; the same now, the
	 * leader has not run since, and the rest is not read (its ids stay 0) */
	PL_REC_PREV_RUN = PL_REC_SIG_IOAC + 8,
	PL_REC_PREV_PCOUNT,
	PL_REC_WORDS
};
#define PL_REC_IOAC_MAX 64 /* bytes of task_io_accounting a record holds */

/* The layout from the kernel's BTF (task is task_struct's id): false when
 * a field is missing or not as the record holds it (the run then reads the
 * run time alone). */
bool pl__dscan_fields_btf(const struct pl_btf *b, int task, struct pl_dscan_layout *l);
/* One record read for pid into what its stat and io would say: false when
 * the record cannot say it all (no such task, not a leader, a kernel
 * thread, a state other than R, S or D, more than one thread), and /proc
 * is to be read. */
bool pl__dscan_fields_decode(const struct pl_dscan_layout *l, const uint64_t *rec, int pid,
			     struct pl_pid_stat *st, struct pl_pid_io *io);

#endif
