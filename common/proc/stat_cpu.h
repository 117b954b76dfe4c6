/* How busy the whole machine was over a span: /proc/stat's total line read
 * at both ends (proc_parse.h parses it). For the programs that report their
 * own CPU beside it (perflink stream, the bare AIO writer): on a device the
 * rest of the system shares the cores, and in the VM rig the kernel's
 * transfer work is charged to no process at all. */
#ifndef PL_COMMON_STAT_CPU_H
#define PL_COMMON_STAT_CPU_H

#include "proc_parse.h"
#include "procfile.h"

#include <fcntl.h>

/* 0, or -errno / -EINVAL (out zeroed). */
static inline int pl__stat_cpu_now(struct pl_stat_cpu *out)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	ssize_t n = pl__procfile_read_once(&pf, AT_FDCWD, "/proc/stat");
	int r = n < 0 ? (int)n : pl__parse_stat_cpu(pf.buf, out);

	if (n < 0)
		out->busy = out->all = 0;
	pl__procfile_free(&pf);
	return r;
}

/* Busy share of all CPUs from a to b, 0..100; -1 when either reading failed
 * or no tick passed. */
static inline double pl__stat_cpu_busy_pct(const struct pl_stat_cpu *a,
					   const struct pl_stat_cpu *b)
{
	if (!a->all || b->all <= a->all || b->busy < a->busy)
		return -1;
	return 100.0 * (double)(b->busy - a->busy) / (double)(b->all - a->all);
}

#endif
