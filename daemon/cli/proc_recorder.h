/* Records /proc as numbered snapshots that the tracer replays through
 * --proc-root: DIR/0000/, DIR/0001/, ... each holding exactly the files the
 * tracer reads (every pid's stat, io and schedstat; diskstats, vmstat,
 * meminfo, loadavg, pressure/{io,memory,cpu}, the delay-accounting and dirty-page sysctls)
 * and .perflink-time with "wall mono" in seconds, written last so that a
 * snapshot cut short by a stop is not replayed. */
#ifndef PL_DAEMON_PROC_RECORDER_H
#define PL_DAEMON_PROC_RECORDER_H

#include <signal.h>
#include <stddef.h>

struct pl_recorder_config {
	const char *out_dir;   /* created if missing; must not hold snapshots */
	const char *proc_root; /* normally /proc */
	double hz;
	double seconds;        /* 0: until *stop */
};

struct pl_recorder_stats {
	size_t snapshots, files, skipped; /* skipped: vanished or unreadable */
};

/* 0 or -errno (messages logged). Stops early when *stop becomes non-zero. */
int pl__proc_record(const struct pl_recorder_config *cfg, volatile sig_atomic_t *stop,
		    struct pl_recorder_stats *stats);

#endif
