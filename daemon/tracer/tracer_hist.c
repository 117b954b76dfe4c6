/* Quantiles of the tracer's per-tick cost over a run of any length, in
 * fixed memory (see tracer_hist.h). */
#include "tracer_hist.h"

static unsigned bucket(uint64_t us)
{
	unsigned e;

	if (us < 256)
		return (unsigned)us;
	e = 63u - (unsigned)__builtin_clzll(us); /* >= 8 */
	if (e > 47)
		return PL_QHIST_BUCKETS - 1;
	return 256u + (e - 8u) * 128u + (unsigned)((us >> (e - 7u)) & 127u);
}

/* The middle of a bucket, in microseconds. */
static double bucket_mid(unsigned i)
{
	unsigned e, sub;

	if (i < 256)
		return i;
	e = (i - 256u) / 128u + 8u;
	sub = (i - 256u) % 128u;
	return (double)((128u + sub) * (1ull << (e - 7u))) + (double)(1ull << (e - 7u)) / 2.0;
}

void pl__qhist_add(struct pl_qhist *h, double ms)
{
	double us = ms * 1000.0;
	unsigned i;

	if (!(us >= 0))
		us = 0;
	i = us >= 1e15 ? PL_QHIST_BUCKETS - 1 : bucket((uint64_t)us);
	if (h->b[i] < UINT32_MAX)
		h->b[i]++;
	h->n++;
	if (ms > h->max_ms)
		h->max_ms = ms;
}

double pl__qhist_quantile(const struct pl_qhist *h, double q)
{
	uint64_t want, seen = 0;
	double v;

	if (h->n == 0)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	want = (uint64_t)(q * (double)(h->n - 1)) + 1;
	for (unsigned i = 0; i < PL_QHIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= want) {
			v = bucket_mid(i) / 1000.0;
			return v > h->max_ms ? h->max_ms : v;
		}
	}
	return h->max_ms;
}
