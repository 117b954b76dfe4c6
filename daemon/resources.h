/* The resource sampler: once a second, per chosen process, CPU ticks,
 * faults, per-thread scheduling and context switches, VM counters, memory
 * totals and free page orders; PSS every ten seconds. Writes resources.jsonl.
 * `perflink resources` drives it with its own timer; perflinkd calls
 * pl__resources_tick from its event loop.
 *
 * Not thread-safe: one thread owns a sampler. */
#ifndef PL_DAEMON_RESOURCES_H
#define PL_DAEMON_RESOURCES_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"

struct pl_resources;

struct pl_resources_config {
	char *out_path;    /* --out: resources.jsonl */
	char *pids;        /* --pids: comma-separated pids */
	char *names;       /* --names: comm substrings */
	char *proc_root;   /* --proc-root */
	double interval_s; /* --interval, default 1 */
	double pss_interval_s; /* --pss-interval, default 10 */
	/* further fields are the sampler's own */
	/* Called with each JSON line (ending in '\n'), for perflinkd to
	 * forward; may be NULL. */
	void (*on_line)(void *ctx, const char *json_line);
	void *on_line_ctx;
};

struct pl_resources_stats {
	uint64_t samples;
	uint64_t processes; /* processes sampled in the last tick */
	double sampler_ms_last, sampler_ms_max;
};

void pl__resources_config_init(struct pl_resources_config *cfg);
void pl__resources_config_free(struct pl_resources_config *cfg);
/* The options `perflink resources` takes, bound to cfg, ending in PL_OPT_END.
 * perflinkd offers the same ones as config keys prefixed with "resources-". */
const struct pl_option *pl__resources_options(struct pl_resources_config *cfg);

/* Children of a command: `perflink resources -- CMD ARGS` samples CMD and all
 * its descendants. pl__resources_add_root_pid adds such a root. */
int pl__resources_open(struct pl_resources **out, const struct pl_resources_config *cfg);
void pl__resources_add_root_pid(struct pl_resources *r, int pid);
int pl__resources_tick(struct pl_resources *r);
uint64_t pl__resources_interval_ns(const struct pl_resources *r);
void pl__resources_get_stats(const struct pl_resources *r, struct pl_resources_stats *out);
void pl__resources_close(struct pl_resources *r);

#endif
