/* Messages from inside a target process: "perflink-preload: ..." on stderr
 * with one write(2) from a fixed buffer and a tiny formatter (jemalloc's
 * malloc_write), because the target's stdio, locale and heap are not ours
 * to touch. Async-signal-safe; leaves errno alone.
 *
 * Formats: %s, %d, %u, %lu, %llu, %x, %lx (hex with 0x), %%. A message
 * longer than the buffer (512 bytes) is cut. */
#ifndef PL_PRELOAD_DIAG_H
#define PL_PRELOAD_DIAG_H

#include <stdarg.h>
#include <stddef.h>

void pl__diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The formatter itself, for callers that build lines elsewhere. Always
 * NUL-terminates; returns the length written. */
size_t pl__vfmt(char *buf, size_t cap, const char *fmt, va_list ap);
size_t pl__fmt(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
