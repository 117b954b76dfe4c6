/* libplunloading.so: a library whose destructor spins for a while, as
 * libLLVM's static destructors do when a GL driver is unloaded at
 * eglTerminate (test/preload/unloading_caller.c). While they run, glibc
 * holds the loader's lock: the library is still on the loader's list, but
 * a dlopen(RTLD_NOLOAD) of it waits for the close and then fails. */
#include "spin.h"

#include <time.h>

__attribute__((visibility("default"))) void unloading_arm(double seconds);

static double dtor_seconds;
static volatile uint64_t sink;

void unloading_arm(double seconds)
{
	dtor_seconds = seconds;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((destructor)) static void spin_while_unloading(void)
{
	double end = cpu_s() + dtor_seconds;

	while (cpu_s() < end)
		sink = spin(200000, sink);
}
