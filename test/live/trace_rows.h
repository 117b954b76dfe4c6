/* A trace CSV (io_stall_tracer.py's layout, which `perflink trace` writes
 * too) read back into rows, for tests that compare what two tracers saw.
 * Only the columns the comparisons use are kept. A line that does not parse
 * is counted, not guessed at: the Python tool writes a comm with a comma in
 * it as is, which shifts that row's columns. */
#ifndef PL_TEST_LIVE_TRACE_ROWS_H
#define PL_TEST_LIVE_TRACE_ROWS_H

#include <stddef.h>

struct trace_row {
	double mono;  /* seconds of CLOCK_MONOTONIC at the tick's start */
	double until; /* the next tick's start (+inf for the last): the process
		       * was read between mono and until */
	char proc[64]; /* the watch name it matched, or its comm */
	int pid;       /* 0 for the SYS row */
	char state;  /* '-' for the SYS row */
	double d_wchar_kb, d_wbytes_kb, d_blkio_ms;
};

struct trace_rows {
	char *header; /* the first line, with its '\n' */
	struct trace_row *v;
	size_t n;
	size_t malformed; /* lines that did not parse (a last one cut short included) */
	double *tick;     /* each SYS row's mono: one a tick */
	size_t sys;
	double last_sys_mono; /* the latest SYS row's mono, -1 before any */
	double longest_tick_s; /* from one tick's start to the next's, at most */
};

/* 0, or -errno when the file cannot be read; rows must be freed even then. */
int trace_rows_load(const char *path, struct trace_rows *rows);
void trace_rows_free(struct trace_rows *rows);

#endif
