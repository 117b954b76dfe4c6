/* The CSV, byte for byte as io_stall_tracer.py writes it, and each
 * process's deltas against the baseline that tool keeps. */
#ifndef PL_DAEMON_TRACER_CSV_H
#define PL_DAEMON_TRACER_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "procs.h"

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

/* After a tick: the CSV deltas of each process read (tracer_baseline.c). */
void pl__tbaseline_tick(struct pl_tprocs *tp);

#endif
