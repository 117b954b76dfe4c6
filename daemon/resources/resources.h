/* The resource sampler: once a second, per chosen process, CPU ticks,
 * faults, per-thread scheduling and context switches, VM counters, memory
 * totals and free page orders; PSS every ten seconds. Writes resources.jsonl
 * (the line format is in docs/resources.md).
 * `perflink resources` drives it with its own timer; perflinkd calls
 * pl__resources_tick from its event loop.
 *
 * Processes are chosen by pid (--pids: the process that has the pid when the
 * sampler starts, never a later one that reuses it), by name (--names: comm
 * substrings, looked for on every tick) and as the descendants of a root
 * (every process whose parent chain leads to it, looked for on every tick).
 * Once chosen, a process stays chosen until it exits, even if it is renamed
 * or reparented.
 *
 * pl__resources_open raises the soft RLIMIT_NOFILE to the hard limit: the
 * sampler keeps /proc files open (one pread per file per tick) within a
 * budget of half the soft limit, and opens and closes the rest each tick.
 *
 * Not thread-safe: one thread owns a sampler. */
#ifndef PL_DAEMON_RESOURCES_H
#define PL_DAEMON_RESOURCES_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"

struct pl_resources;

struct pl_resources_config {
	char *out_path;    /* --out: resources.jsonl; "" writes no file */
	char *pids;        /* --pids: comma-separated pids */
	char *names;       /* --names: comm substrings */
	char *proc_root;   /* --proc-root */
	double interval_s; /* --interval, default 1 */
	double pss_interval_s; /* --pss-interval, default 10; 0: no PSS */
	/* further fields are the sampler's own */
	bool threads;      /* --threads: per-thread detail, default yes */
	/* /proc descriptors kept open at most; 0: half of what the process
	 * may keep (common/fd_budget.h). perflinkd gives a share when the
	 * tracer keeps some too. */
	long fd_budget;
	struct pl_option options[8]; /* filled by pl__resources_options */
	/* Called with each JSON line (ending in '\n'), for perflinkd to
	 * forward; may be NULL. */
	void (*on_line)(void *ctx, const char *json_line);
	void *on_line_ctx;
};

struct pl_resources_stats {
	uint64_t samples;
	uint64_t processes; /* processes sampled in the last tick */
	double sampler_ms_last, sampler_ms_max;
	uint64_t threads;   /* threads listed in the last tick */
	uint64_t exited;    /* processes seen to exit, over the whole run */
	uint64_t read_errors; /* files that failed for a reason other than exit */
	uint64_t kept_fds;  /* /proc files held open now */
	uint64_t fd_budget; /* kept at most */
};

void pl__resources_config_init(struct pl_resources_config *cfg);
void pl__resources_config_free(struct pl_resources_config *cfg);
/* The options `perflink resources` takes, bound to cfg, ending in PL_OPT_END.
 * perflinkd offers the same ones as config keys prefixed with "resources-". */
const struct pl_option *pl__resources_options(struct pl_resources_config *cfg);

/* 0 or -errno (-EINVAL for a bad --pids/--names, with a message logged; the
 * output file's open error). The config is copied: cfg may be freed after. */
int pl__resources_open(struct pl_resources **out, const struct pl_resources_config *cfg);
/* Children of a command: `perflink resources -- CMD ARGS` samples CMD and all
 * its descendants. pl__resources_add_root_pid adds such a root: the process
 * that has this pid at the next tick and every descendant of it. */
void pl__resources_add_root_pid(struct pl_resources *r, int pid);
/* Every descendant of pid but not pid itself. `perflink resources` is a
 * child subreaper and passes its own pid, so that a grandchild whose parent
 * exits between two ticks is still found (it is reparented to perflink). */
void pl__resources_add_descendants_of(struct pl_resources *r, int pid);
/* Take one sample and write one line (the header line first, on the first
 * call). 0, or -errno when the output cannot be written (the caller should
 * stop); a process that exits or cannot be read is not an error. */
int pl__resources_tick(struct pl_resources *r);
uint64_t pl__resources_interval_ns(const struct pl_resources *r);
void pl__resources_get_stats(const struct pl_resources *r, struct pl_resources_stats *out);
void pl__resources_close(struct pl_resources *r);

#endif
