/* The builds of XXH3 that payload_hash.c chooses from, each in its own file
 * (internal to common/). */
#ifndef PL_COMMON_PAYLOAD_HASH_BUILDS_H
#define PL_COMMON_PAYLOAD_HASH_BUILDS_H

#include <stddef.h>
#include <stdint.h>

uint64_t pl__xxh3_scalar(const void *data, size_t len); /* payload_hash_scalar.c */

#endif
