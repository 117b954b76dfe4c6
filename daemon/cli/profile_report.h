/* Reading the stage profiler's reports back (the JSON lines that
 * libperflink-preload.so appends to PERFLINK_PROFILE_OUT), for
 * `perflink compare`.
 *
 * A file may hold the reports of several processes (a fork child, an exec,
 * several runs appended): a report is chosen by its number and pid, or the
 * last one in the file is taken. Every number is checked: a report missing
 * a field, or with one that is not an unsigned integer, is refused rather
 * than read as zero. */
#ifndef PL_DAEMON_PROFILE_REPORT_H
#define PL_DAEMON_PROFILE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#define PL_PROFILE_MAX_STAGES 64
#define PL_PROFILE_NAME_MAX 64

struct pl_profile_stage {
	char name[PL_PROFILE_NAME_MAX];
	char kind[16];
	uint64_t calls, errors, eagain, enodata, eintr;
	uint64_t wall_total_ns, wall_max_ns, cpu_total_ns, cpu_max_ns;
	uint64_t cache_bytes, stream_bytes;
};

struct pl_profile_report {
	char comm[PL_PROFILE_NAME_MAX];
	uint64_t pid, report, interval_frames, frames, elapsed_ns, dropped_calls;
	struct pl_profile_stage stage[PL_PROFILE_MAX_STAGES];
	unsigned n_stages;
	size_t line;            /* where it was in the file, from 1 */
	unsigned skipped_lines; /* lines that were not reports (malformed, other types) */
};

/* Which report: number 0 means the last one; pid 0 means any process. */
struct pl_profile_pick {
	uint64_t report;
	uint64_t pid;
};

/* Load the chosen report of the file at path. 0, or -errno with a sentence
 * in err: -ENOENT no such report (or file), -EINVAL a malformed report. */
int pl__profile_report_load(const char *path, const struct pl_profile_pick *pick,
			    struct pl_profile_report *out, char *err, size_t errlen);

/* The stage named name, or NULL. */
const struct pl_profile_stage *pl__profile_stage(const struct pl_profile_report *r,
						 const char *name);

#endif
