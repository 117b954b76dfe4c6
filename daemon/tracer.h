/* The /proc I/O stall tracer: io_stall_tracer.py in C, made cheap.
 *
 * One pl_tracer samples /proc (or a recorded tree) once per tick and writes
 * the Python tool's CSV rows, stall events as JSON lines, and per-tick cost.
 * It is driven from outside: `perflink trace` runs its own timer loop,
 * perflinkd calls pl__tracer_tick from its event loop's timerfd.
 *
 * Not thread-safe: one thread owns a tracer. */
#ifndef PL_DAEMON_TRACER_H
#define PL_DAEMON_TRACER_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"

struct pl_tracer;

/* Settings; pl__tracer_config_init fills the defaults. Strings are owned
 * (malloc-ed) so that the option table can replace them. */
struct pl_tracer_config {
	char *out_path;     /* --out: the CSV */
	double hz;          /* --hz, default 10 */
	char *disks;        /* --disk: comma-separated */
	char *names;        /* --names: comm substrings to watch */
	char *events_path;  /* --events: stall events, one JSON object a line */
	char *proc_root;    /* --proc-root: a live or recorded /proc tree */
	/* further fields are the tracer's own (thresholds, priority, ...) */
	double blkio_stall_ms;
	double dstate_stall_ms;
	long nice;
	char *cpus;
	bool enable_delayacct;
	/* Called with each stall event's JSON line (ending in '\n'), for
	 * perflinkd to forward; may be NULL. */
	void (*on_event)(void *ctx, const char *json_line);
	void *on_event_ctx;
};

struct pl_tracer_stats {
	uint64_t ticks;
	uint64_t rows;          /* CSV rows written, SYS rows included */
	uint64_t stall_events;
	uint64_t processes;     /* processes seen in the last tick */
	double sampler_ms_last, sampler_ms_p50, sampler_ms_p99, sampler_ms_max;
	uint64_t read_errors;   /* files that vanished or failed mid-read */
};

void pl__tracer_config_init(struct pl_tracer_config *cfg);
void pl__tracer_config_free(struct pl_tracer_config *cfg);
/* The options `perflink trace` takes, bound to cfg, ending in PL_OPT_END.
 * perflinkd offers the same ones as config keys prefixed with "trace-". */
const struct pl_option *pl__tracer_options(struct pl_tracer_config *cfg);

/* 0 or -errno; on failure a message has been logged. */
int pl__tracer_open(struct pl_tracer **out, const struct pl_tracer_config *cfg);
/* Take one sample. 0, or -errno for a failure that should stop the tracer
 * (an unwritable output); a vanished process is not a failure. In replay mode
 * (a recorded sequence under --proc-root), -ENODATA after the last tick. */
int pl__tracer_tick(struct pl_tracer *t);
uint64_t pl__tracer_interval_ns(const struct pl_tracer *t);
void pl__tracer_get_stats(const struct pl_tracer *t, struct pl_tracer_stats *out);
void pl__tracer_close(struct pl_tracer *t);

#endif
