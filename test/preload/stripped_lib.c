/* libplstripped.so, installed stripped (only .dynsym): its hot code is a
 * static function, placed after a small exported one. The nearest exported
 * symbol below the hot pc is stripped_tiny, which does not contain it: the
 * sampler must not name the hot code so (test_sampler_cxx.sh). Nothing
 * calls stripped_tiny, so that no sample can be in it rightly: when
 * stripped_entry called it, a sample once fell in its two instructions. */
#include <stdint.h>

__attribute__((visibility("default"))) uint64_t stripped_tiny(uint64_t x);
__attribute__((visibility("default"))) uint64_t stripped_entry(uint64_t n);

uint64_t stripped_tiny(uint64_t x)
{
	return x + 1;
}

static __attribute__((noinline)) uint64_t stripped_burn(uint64_t n)
{
	uint64_t x = n;

	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

uint64_t stripped_entry(uint64_t n)
{
	return stripped_burn(n) + 1;
}
