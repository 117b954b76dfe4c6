/* Quantiles of per-tick costs over a whole run in fixed memory. */
#ifndef PL_DAEMON_TRACER_HIST_H
#define PL_DAEMON_TRACER_HIST_H

#include <stdint.h>

/* Log-linear buckets of microseconds, under 1% relative error. */
#define PL_QHIST_BUCKETS (256 + 40 * 128)
struct pl_qhist {
	uint32_t b[PL_QHIST_BUCKETS];
	uint64_t n;
	double max_ms;
};
void pl__qhist_add(struct pl_qhist *h, double ms);
/* q in [0, 1]; 0 when empty. */
double pl__qhist_quantile(const struct pl_qhist *h, double q);

#endif
