/* Parsers for /proc text files. Each takes a NUL-terminated buffer (what
 * pl__procfile_read leaves), never allocates, and returns 0 or -EINVAL for
 * text it cannot trust. Input is treated as hostile: a truncated file, a
 * missing field, or a number that overflows is an error or an absent field,
 * never a guess.
 *
 * Field numbers follow proc(5), 1-based. */
#ifndef PL_COMMON_PROC_PARSE_H
#define PL_COMMON_PROC_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PL_COMM_MAX 64 /* TASK_COMM_LEN is 16; kernel threads' names can be longer */

/* /proc/PID/stat and /proc/PID/task/TID/stat */
struct pl_pid_stat {
	int pid;
	char comm[PL_COMM_MAX]; /* between the first '(' and the last ')' */
	char state;             /* field 3 */
	int ppid;               /* field 4 */
	uint64_t minflt;        /* field 10 */
	uint64_t majflt;        /* field 12 */
	uint64_t utime_ticks;   /* field 14 */
	uint64_t stime_ticks;   /* field 15 */
	int64_t priority;       /* field 18 */
	int64_t nice;           /* field 19 */
	int64_t num_threads;    /* field 20 */
	uint64_t starttime_ticks; /* field 22: with pid, identifies the process */
	uint64_t vsize_bytes;   /* field 23 */
	int64_t rss_pages;      /* field 24 */
	int exit_signal;        /* field 38: -1 for a thread that is not a leader */
	int processor;          /* field 39, -1 when absent */
	uint64_t blkio_ticks;   /* field 42, delayacct_blkio_ticks */
	bool has_blkio;         /* false on kernels whose stat stops before 42 */
};

int pl__parse_pid_stat(const char *buf, struct pl_pid_stat *out);

/* /proc/PID/io. Fields a kernel lacks stay 0 with their bit clear in have. */
struct pl_pid_io {
	uint64_t rchar, wchar, syscr, syscw;
	uint64_t read_bytes, write_bytes, cancelled_write_bytes;
	unsigned have; /* PL_IO_HAVE_* bits */
};
enum {
	PL_IO_HAVE_RCHAR = 1u << 0,
	PL_IO_HAVE_WCHAR = 1u << 1,
	PL_IO_HAVE_READ_BYTES = 1u << 2,
	PL_IO_HAVE_WRITE_BYTES = 1u << 3,
};
int pl__parse_pid_io(const char *buf, struct pl_pid_io *out);

/* One line of /proc/diskstats. Kernels before 4.18 have 14 fields, later ones
 * 18 or 20; only the first 14 are needed here. */
struct pl_diskstat {
	char name[32];
	uint64_t reads, sectors_read;
	uint64_t writes, sectors_written; /* fields 8 and 10 */
	uint64_t in_flight;               /* field 12 */
	uint64_t io_ms;                   /* field 13: ms the device was busy */
	uint64_t weighted_io_ms;          /* field 14 */
};
/* Parse the line starting at *cursor and advance *cursor past it. Returns 1
 * when a line was parsed, 0 at the end, -EINVAL for a malformed line (the
 * cursor still advances, so callers skip it). */
int pl__parse_diskstats_next(const char **cursor, struct pl_diskstat *out);

/* Files of "key value" lines (/proc/vmstat) or "Key: value kB" lines
 * (/proc/meminfo, /proc/PID/status, smaps_rollup). For each of n keys, the
 * value of the first line whose key matches exactly is stored in vals[i] and
 * bit i of the returned mask is set; keys not present leave vals[i]
 * untouched. A line whose value is not a decimal number is skipped (a later
 * line of the same key may still count). At most 64 keys; an empty key
 * matches nothing. */
uint64_t pl__parse_keyed_u64(const char *buf, const char *const *keys, unsigned n,
			     uint64_t *vals);

/* /proc/pressure/{io,memory,cpu}: "some avg10=.. avg60=.. avg300=.. total=.."
 * and, except for cpu on older kernels, a "full" line. */
struct pl_psi_line {
	double avg10, avg60, avg300;
	uint64_t total_us;
};
struct pl_psi {
	struct pl_psi_line some, full;
	bool has_some, has_full;
};
int pl__parse_pressure(const char *buf, struct pl_psi *out);

/* /proc/stat's first line, "cpu  user nice system idle iowait irq softirq
 * steal ...", in clock ticks summed over every CPU: how busy the whole
 * machine was between two readings. Busy is everything but idle and
 * iowait (guest time is inside user already). Kernels before 2.6.11 have
 * no steal: 0. 0, or -EINVAL without a well-formed "cpu " line first. */
struct pl_stat_cpu {
	uint64_t busy, all;
};
int pl__parse_stat_cpu(const char *buf, struct pl_stat_cpu *out);

/* Strict unsigned decimal: digits only, no sign, no overflow. Advances *p
 * past the digits. Returns 0 or -EINVAL. */
int pl__parse_u64(const char **p, uint64_t *out);
/* The whole of s (NULL or empty: false) is one such number, as a JSON
 * reader hands a value over. */
bool pl__parse_u64_all(const char *s, uint64_t *out);
/* The same with an optional leading '-'. */
int pl__parse_i64(const char **p, int64_t *out);

#endif
