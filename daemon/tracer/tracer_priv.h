/* The tracer itself (tracer.c) and its events file (tracer_events.c). Not
 * for use outside daemon/tracer/. */
#ifndef PL_DAEMON_TRACER_PRIV_H
#define PL_DAEMON_TRACER_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "json_writer.h"
#include "log.h"
#include "procs.h"
#include "stall_detect.h"
#include "tracer.h"
#include "tracer_csv.h"
#include "tracer_hist.h"
#include "tracer_sys.h"

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
	struct pl_qhist sampler, wall;
	double sampler_ms_last;
	uint64_t tick_cpu0_ns;      /* CPU clock at the start of this tick */
	/* --cost-split: over the ticks after the first */
	struct pl_tracer_phase_cost phase[PL_TPHASE_N];
	uint64_t cost_ticks, cost_cpu_ns;

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
