/* Clock reads used everywhere. All return nanoseconds; all are
 * async-signal-safe (clock_gettime is). */
#ifndef PL_COMMON_CLOCK_H
#define PL_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t pl__clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t pl__mono_ns(void) { return pl__clock_ns(CLOCK_MONOTONIC); }
static inline uint64_t pl__wall_ns(void) { return pl__clock_ns(CLOCK_REALTIME); }
static inline uint64_t pl__process_cpu_ns(void) { return pl__clock_ns(CLOCK_PROCESS_CPUTIME_ID); }
static inline uint64_t pl__thread_cpu_ns(void) { return pl__clock_ns(CLOCK_THREAD_CPUTIME_ID); }

#endif
