/* The unit of CPU work of the renderer test workload: the same loop body
 * everywhere, so that iteration counts split CPU time in known shares. */
#ifndef PL_TEST_SPIN_H
#define PL_TEST_SPIN_H

#include <stdint.h>

static inline __attribute__((always_inline)) uint64_t spin(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

#endif
