/* The CSV rows, byte for byte as io_stall_tracer.py writes them, so that
 * analysis written for its files keeps working. Python formats with
 * f"{x:.0f}" and f"{x:.3f}": the exact binary value correctly rounded, ties
 * to even, and "-0" for a small negative, which is what glibc's printf
 * does in the default rounding mode. */
#include "tracer_csv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

const char pl__tracer_csv_header[] =
	"wall,mono,proc,pid,state,d_wchar_kB,d_wbytes_kB,d_blkio_ms,disk_d_write_kB,"
	"disk_d_busy_ms,compact_stall,allocstall,pgmajfault,dirty_kB,writeback_kB,memfree_kB,"
	"memavail_kB\n";

/* A process name is attacker-chosen (prctl PR_SET_NAME): keep it from adding
 * columns or rows. */
static void put_label(char *dst, size_t cap, const char *label)
{
	size_t i;

	for (i = 0; i + 1 < cap && label[i]; i++) {
		char c = label[i];

		dst[i] = (c == ',' || c == '\n' || c == '\r') ? '_' : c;
	}
	dst[i] = '\0';
}

/* The length, or -ENOSPC when it did not fit. */
static int fitted(int n, size_t cap)
{
	return n >= 0 && (size_t)n < cap ? n : -ENOSPC;
}

int pl__csv_format_row(char *buf, size_t cap, const struct pl_csv_row *r)
{
	char label[PL_COMM_MAX];

	put_label(label, sizeof(label), r->label);
	return fitted(snprintf(buf, cap, "%.3f,%.3f,%s,%d,%c,%.0f,%.0f,%.0f,%.0f,%.0f,,,,,,,\n",
			       r->wall, r->mono, label, r->pid, r->state ? r->state : '?',
			       r->d_wchar_kb, r->d_wbytes_kb, r->d_blkio_ms, r->disk_d_write_kb,
			       r->disk_d_busy_ms),
		      cap);
}

int pl__csv_format_sys(char *buf, size_t cap, const struct pl_csv_sys *r)
{
	return fitted(snprintf(buf, cap,
			       "%.3f,%.3f,SYS,0,-,,,,,,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRIu64
			       ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
			       r->wall, r->mono, r->d_compact, r->d_alloc, r->d_majflt, r->dirty_kb,
			       r->writeback_kb, r->memfree_kb, r->memavail_kb),
		      cap);
}
