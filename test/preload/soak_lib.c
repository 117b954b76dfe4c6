/* libsoakdl.so: loaded and unloaded without pause by the sampler soak
 * (test/preload/soak.c), so that samples land in code that is mapped one
 * moment and gone the next. */
#include <stdint.h>

__attribute__((visibility("default"))) uint64_t soak_work(uint64_t n);

uint64_t soak_work(uint64_t n)
{
	uint64_t x = n;

	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}
