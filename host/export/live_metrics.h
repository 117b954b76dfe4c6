/* DIR/metrics.prom while the run goes on (docs/host-export.md, "Metrics"):
 * node_exporter's textfile collector reads it every scrape, so perflink-host
 * --out replaces it atomically every few seconds, not only at exit.
 *
 * It is written by the same code as at exit (metrics_prom.c) from a
 * recording kept up to date here, not read back from the files: each
 * telemetry line the metrics use (link_diag, perflink-profile, stall,
 * resources) is taken as it arrives, and the frames are copied from the
 * latency table at each write, with the round trips that came since. So a
 * write costs the frames of the run so far and never the telemetry files'
 * size; the per-call events and render windows, which the metrics do not
 * use, are not kept. */
#ifndef PL_HOST_LIVE_METRICS_H
#define PL_HOST_LIVE_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "latency_table.h"
#include "recording.h"

struct pl_live_metrics {
	char *path;           /* DIR/metrics.prom */
	uint64_t interval_ns; /* 0: off */
	uint64_t next_ns;     /* host CLOCK_MONOTONIC of the next write */
	struct pl_recording rec;
	uint64_t writes, failures;
	bool out_of_memory;   /* said once; no more lines taken */
};

/* Off when interval_s is 0. 0 or -ENOMEM. */
int pl__live_metrics_init(struct pl_live_metrics *m, const char *dir, double interval_s,
			  uint64_t now_ns);
/* A valid telemetry line of the given type (NULL: it had none). */
void pl__live_metrics_line(struct pl_live_metrics *m, const char *type, const char *line,
			   size_t len);
/* Write metrics.prom when the interval has passed since the last write;
 * the frames with their one-way latency through the clock offset given
 * (have_offset false: only those with an offset of their own). */
void pl__live_metrics_tick(struct pl_live_metrics *m, uint64_t now_ns,
			   const struct pl_latency_table *t, bool have_offset, int64_t offset_ns);
void pl__live_metrics_free(struct pl_live_metrics *m);

#endif
