/* The benchmarks' one statistic: the median of n values (sorted in place).
 * These machines are noisy and shared; a median is what a neighbour's
 * burst in one round does not move. */
#ifndef PL_BENCH_MEDIAN_H
#define PL_BENCH_MEDIAN_H

#include <stdlib.h>

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
