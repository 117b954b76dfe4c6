/* XXH3-64 compiled from xxhash.h with its plain 64-bit scalar code, whatever
 * vector unit the target has: one of the candidates of payload_hash.c. In a
 * file of its own because XXH_VECTOR applies to a whole translation unit, and
 * XXH_INLINE_ALL gives its functions internal names that cannot clash with
 * the library's. common/meson.build compiles this file at -O3, where GCC
 * keeps the eight accumulators in registers. */
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#undef XXH_VECTOR
#define XXH_VECTOR 0 /* XXH_SCALAR */
#include <xxhash.h>

#include "payload_hash_builds.h"

uint64_t pl__xxh3_scalar(const void *data, size_t len)
{
	return XXH3_64bits(data, len);
}
