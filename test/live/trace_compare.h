/* What two tracers' CSVs of the same live stall must agree on, checked
 * against each other and against the stall's own ledgers (stall_actors.h).
 * Each function prints TAP checks and, as diagnostics, the figures it
 * compared, so that a failure says what differed. */
#ifndef PL_TEST_LIVE_TRACE_COMPARE_H
#define PL_TEST_LIVE_TRACE_COMPARE_H

#include <sys/types.h>

#include "stall_actors.h"
#include "trace_rows.h"

/* A check's outcome: the test program defines it (as a TAP line), so that
 * one plan counts the checks of every file. */
void compare_check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A check the run could not make (its condition did not arise here): a
 * TAP skip with the reason, counted as skipped, never as passed. */
void compare_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A stall: an fdatasync of 8 kB takes a few ms to tens of ms without one. */
#define COMPARE_STALL_WAIT_S 0.3

struct traced {
	const char *tool;
	struct trace_rows rows;
};

/* Row semantics of a watched process (the victim): the rows' deltas add up
 * to its counters' change over the run, in each tool. */
void compare_victim_totals(const struct traced t[2], const struct actors *a, pid_t victim,
			   long clk_tck);
/* Its D rows: each during one of its waits, and in each wait a tool read
 * it during. */
void compare_victim_waits(const struct traced t[2], const struct actors *a, pid_t victim);
/* An unwatched process seen in D now and then (the napper): rows only in D,
 * each row's deltas counted from that tool's previous D row of it. */
void compare_napper(const struct traced t[2], const struct actors *a, pid_t napper,
		    long clk_tck);

/* How many of the napper's disk phases rows has a D row of it in. */
unsigned compare_napper_phases_seen(const struct trace_rows *rows, const struct actors *a,
				    pid_t napper);

#endif
