/* The progress line of a long run: once a second, when stdout is a
 * terminal, one line rewritten in place (\r): frames, MB/s over the last
 * second, and the latency percentiles so far (coarse, from the latency
 * table's histograms). Nothing at all when stdout is not a terminal, so
 * logs and pipes stay clean. */
#ifndef PL_HOST_PROGRESS_H
#define PL_HOST_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "latency_table.h"

struct pl_progress {
	FILE *out;
	bool enabled, shown;
	uint64_t last_ns, last_bytes;
};

/* enabled: normally isatty(fileno(out)). */
void pl__progress_init(struct pl_progress *p, FILE *out, bool enabled);
/* Call often; draws at most once a second. */
void pl__progress_tick(struct pl_progress *p, uint64_t now_ns, uint64_t frames, uint64_t bytes,
		       const struct pl_latency_table *t);
/* End the line, if one was drawn, so what follows starts on its own. */
void pl__progress_end(struct pl_progress *p);

#endif
