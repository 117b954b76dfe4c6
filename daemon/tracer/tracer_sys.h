/* The system-wide counters a tick reads: diskstats, vmstat, meminfo, PSI,
 * loadavg and, where needed, /proc/stat. */
#ifndef PL_DAEMON_TRACER_SYS_H
#define PL_DAEMON_TRACER_SYS_H

#include <stdbool.h>
#include <stdint.h>

#include "proc_parse.h"
#include "procfile.h"

/* System-wide counters for one tick. */
struct pl_tsys_sample {
	bool have_disk;        /* at least one --disk was present both times */
	double disk_d_write_kb, disk_d_busy_ms;
	int64_t d_compact, d_alloc, d_majflt;
	int64_t d_scan_direct, d_scan_cgroup; /* as pl_stall_sys's */
	uint64_t dirty_kb, writeback_kb, memfree_kb, memavail_kb;
	uint64_t nr_writeback, nr_dirty;
	struct pl_psi psi_io, psi_mem;
	bool have_psi_io, have_psi_mem;
	uint64_t last_pid;     /* from loadavg, 0 when unknown */
	/* from /proc/stat: every tick without PSI, else when PSI grew; -1
	 * when not read */
	int64_t procs_blocked;
	bool maybe_blocked;    /* pl__tsys_maybe_blocked */
	int64_t dirtied_bytes; /* vmstat nr_dirtied since the last tick, -1 unknown */
	int64_t written_kb;    /* vmstat nr_written since the last tick, -1 unknown */
	/* vmstat nr_dirty, nr_writeback and the kernel's thresholds, or the
	 * sysctls' estimate where it has none (thresh_estimated); 0 unknown */
	uint64_t nr_dirty_kb, nr_writeback_kb, bg_thresh_kb, thresh_kb;
	bool thresh_estimated;
};

/* What the tracer reads of /proc/vmstat. Absent keys read 0, but
 * nr_dirtied, nr_written and the two thresholds UINT64_MAX. */
struct pl_vmstat {
	uint64_t compact, alloc, majflt, nr_dirty, nr_writeback, nr_dirtied, nr_written;
	uint64_t dirty_thresh, dirty_bg_thresh; /* pages */
	/* pgscan_direct, pgsteal_direct (all zones'), pgscan_kswapd +
	 * _khugepaged + _proactive, pgscan_anon + pgscan_file (have_scan_all:
	 * the kernel has them) */
	uint64_t scan_direct, steal_direct, scan_other, scan_all;
	bool have_scan_all;
};

#define PL_TRACER_MAX_DISKS 16

struct pl_tsys {
	struct pl_procfile diskstats, vmstat, meminfo, psi_io, psi_mem, loadavg;
	char disks[PL_TRACER_MAX_DISKS][32];
	size_t ndisks;
	bool have_prev;
	uint64_t prev_sect[PL_TRACER_MAX_DISKS], prev_busy[PL_TRACER_MAX_DISKS];
	bool prev_found[PL_TRACER_MAX_DISKS];
	struct pl_vmstat prev_vm; /* the last read's, when have_prev */
	long page_bytes;
	bool psi_io_reported, psi_mem_reported;
	uint64_t dirty_bg_thresh_kb, dirty_thresh_kb; /* 0 = unknown */
	long dirty_ratio, dirty_bg_ratio;
	uint64_t dirty_bytes, dirty_bg_bytes;
	long dirty_expire_cs, dirty_writeback_cs; /* -1: unreadable */
	bool sysctl_read;
	struct pl_procfile stat;    /* /proc/stat, read only without PSI */
	bool have_prev_psi;
	uint64_t prev_psi_io_us, prev_psi_mem_us;
};
/* A task may have blocked since the previous sample: PSI io or memory stall
 * time grew, or without PSI, procs_blocked is non-zero or unknown. */
bool pl__tsys_maybe_blocked(struct pl_tsys *s, const struct pl_tsys_sample *cur);

int pl__tsys_init(struct pl_tsys *s, const char *disks_csv);
/* Every --disk against the diskstats under rootfd, naming the disks it has:
 * none named is -EINVAL; one that is not there is a warning (0). */
int pl__tsys_check_disks(const struct pl_tsys *s, int rootfd);
void pl__tsys_free(struct pl_tsys *s);
/* Read every system-wide file relative to rootfd; keep: reuse kept fds. */
void pl__tsys_read(struct pl_tsys *s, int rootfd, bool keep, struct pl_tsys_sample *out);
void pl__tsys_parse_vmstat_all(const char *buf, struct pl_vmstat *v);

/* kernel.task_delayacct as found under the root. */
enum pl_delayacct { PL_DELAYACCT_ON, PL_DELAYACCT_OFF, PL_DELAYACCT_ABSENT,
		    PL_DELAYACCT_UNREADABLE };
enum pl_delayacct pl__tracer_read_delayacct(int rootfd);
const char *pl__tracer_delayacct_name(enum pl_delayacct d);

#endif
