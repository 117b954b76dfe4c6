/* Parsers for the /proc files the resource sampler reads: per-process and
 * per-thread status and schedstat, smaps and smaps_rollup, buddyinfo,
 * "key value" files walked line by line, and single-number sysctl files.
 *
 * Same rules as proc_parse.h: NUL-terminated input, no allocation, 0 or
 * -EINVAL; a field a kernel lacks is reported absent (its bit clear), never
 * as a zero that looks measured. */
#ifndef PL_COMMON_PROC_PARSE_MEM_H
#define PL_COMMON_PROC_PARSE_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* /proc/PID/status and /proc/PID/task/TID/status. The Vm and Rss lines are
 * in kB; which exist depends on the kernel (RssAnon/RssFile/RssShmem since
 * 4.5, VmSwap since 2.6.34) and on the task (a zombie or a kernel thread has
 * none). The context switch counts are the task's own: in /proc/PID/status
 * they are the main thread's, not a sum over the process. */
enum pl_status_field {
	PL_ST_VMPEAK,
	PL_ST_VMSIZE,
	PL_ST_VMLCK,
	PL_ST_VMPIN,
	PL_ST_VMHWM,
	PL_ST_VMRSS,
	PL_ST_RSSANON,
	PL_ST_RSSFILE,
	PL_ST_RSSSHMEM,
	PL_ST_VMDATA,
	PL_ST_VMSTK,
	PL_ST_VMEXE,
	PL_ST_VMLIB,
	PL_ST_VMPTE,
	PL_ST_VMSWAP,
	PL_ST_HUGETLB,
	PL_ST_KB_COUNT, /* the fields before this one are kB counters */
	PL_ST_TGID = PL_ST_KB_COUNT,
	PL_ST_PID,
	PL_ST_PPID,
	PL_ST_UID, /* real uid, the first of the four */
	PL_ST_THREADS,
	PL_ST_VCSW,
	PL_ST_NVCSW,
	PL_ST_COUNT
};

/* The kernel's spelling of each field ("VmRSS", "voluntary_ctxt_switches"). */
extern const char *const pl__status_keys[PL_ST_COUNT];

struct pl_pid_status {
	uint64_t v[PL_ST_COUNT];
	uint64_t have; /* bit i set: v[i] was in the file */
};

static inline bool pl__status_has(const struct pl_pid_status *s, enum pl_status_field f)
{
	return (s->have >> f) & 1u;
}

/* -EINVAL unless the text carries Tgid and Pid lines (every status file of
 * every supported kernel does; their absence means it is not one). */
int pl__parse_pid_status(const char *buf, struct pl_pid_status *out);

/* /proc/PID/schedstat and /proc/PID/task/TID/schedstat (CONFIG_SCHED_INFO):
 * "run_ns wait_ns timeslices\n". With sched_info switched off at run time the
 * kernel writes "0 0 0", which is what it measured, so it is reported. */
struct pl_schedstat {
	uint64_t run_ns;     /* time spent on a CPU */
	uint64_t wait_ns;    /* time spent runnable, waiting for a CPU */
	uint64_t timeslices; /* times it was run */
};
int pl__parse_schedstat(const char *buf, struct pl_schedstat *out);

/* Sums over /proc/PID/smaps (one block per mapping) or smaps_rollup (one
 * block for the whole process; 4.14+). Every value is in kB. Summing smaps
 * rounds each mapping's Pss down to a kB, so its total can be a little lower
 * than smaps_rollup's for the same memory. */
enum pl_smaps_field {
	PL_SM_RSS,
	PL_SM_PSS,
	PL_SM_PSS_DIRTY,
	PL_SM_PSS_ANON,
	PL_SM_PSS_FILE,
	PL_SM_PSS_SHMEM,
	PL_SM_SHARED_CLEAN,
	PL_SM_SHARED_DIRTY,
	PL_SM_PRIVATE_CLEAN,
	PL_SM_PRIVATE_DIRTY,
	PL_SM_REFERENCED,
	PL_SM_ANONYMOUS,
	PL_SM_SWAP,
	PL_SM_SWAP_PSS,
	PL_SM_LOCKED,
	PL_SM_COUNT
};
extern const char *const pl__smaps_keys[PL_SM_COUNT];

struct pl_smaps_sum {
	uint64_t kb[PL_SM_COUNT];
	uint64_t have;     /* bit i set: at least one line of field i was seen */
	uint64_t mappings; /* header lines: one per mapping; 1 for smaps_rollup */
};

void pl__smaps_sum_init(struct pl_smaps_sum *s);
/* One line, without its newline. A mapping header counts a mapping; a
 * "Key: N kB" line of a summed field is added; other "Key: ..." lines
 * (KernelPageSize, VmFlags, THPeligible, ...) are skipped. -EINVAL for a
 * line that is neither, a summed field without its " kB", or a sum that
 * would overflow. */
int pl__smaps_add_line(struct pl_smaps_sum *s, const char *line, size_t len);
/* A whole smaps or smaps_rollup text held in memory. */
int pl__parse_smaps(const char *buf, struct pl_smaps_sum *out);

/* One line of /proc/buddyinfo: "Node 0, zone   Normal  4800 1237 ...", the
 * number of free blocks of each order (order k is 2^k pages). */
#define PL_BUDDY_MAX_ORDERS 16
struct pl_buddy_zone {
	int node;
	char zone[16];
	unsigned n_orders;
	uint64_t free_blocks[PL_BUDDY_MAX_ORDERS];
};
/* Parse the line at *cursor and advance past it: 1 parsed, 0 at the end,
 * -EINVAL for a malformed line (the cursor still advances). */
int pl__parse_buddyinfo_next(const char **cursor, struct pl_buddy_zone *out);

/* Walk a "key value" (/proc/vmstat) or "Key: value [kB]" (/proc/meminfo)
 * file one line at a time. On 1, *key points into the buffer (not
 * NUL-terminated, *key_len long) and *value holds the number. 0 at the end,
 * -EINVAL for a line whose value is not a plain number (cursor advances). */
int pl__parse_kv_next(const char **cursor, const char **key, size_t *key_len,
		      uint64_t *value);

/* A sysctl file holding one integer, e.g. "60\n". */
int pl__parse_sysctl_i64(const char *buf, int64_t *out);

#endif
