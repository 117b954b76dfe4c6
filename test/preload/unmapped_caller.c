/* A render thread whose caller is unmapped under it: main calls
 * unmapped_call() in libplunmapped.so, which calls back into main; the
 * callback dlcloses the library (its only reference, so glibc unmaps it),
 * checks /proc/self/maps no longer shows it, then spins and swaps for
 * SECONDS. Every sample taken then has a return address into memory that
 * is not mapped any more. The callback ends the program with exit(0): it
 * can never return.
 *
 *   unmapped_caller SECONDS LIB
 *
 * Prints "unmapped yes|no swaps N". */
#include "mapped.h"
#include "spin.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

unsigned int eglSwapBuffers(void *dpy, void *surface);

static void *lib;
static const char *lib_path;
static double seconds;
static volatile uint64_t sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((visibility("default"), noinline)) void spin_after_close(void);

void spin_after_close(void)
{
	double end;
	unsigned long swaps = 0;

	dlclose(lib);
	printf("unmapped %s ", still_mapped(lib_path) == 0 ? "yes" : "no");
	end = now_s() + seconds;
	while (now_s() < end) {
		sink = spin(2000000, sink);
		eglSwapBuffers(NULL, NULL);
		swaps++;
	}
	printf("swaps %lu\n", swaps);
	fflush(stdout);
	exit(0); /* returning would jump into the unmapped library */
}

int main(int argc, char **argv)
{
	void (*call)(void (*)(void));

	if (argc != 3) {
		fprintf(stderr, "usage: unmapped_caller SECONDS LIB\n");
		return 2;
	}
	seconds = atof(argv[1]);
	lib_path = argv[2];
	eglSwapBuffers(NULL, NULL); /* this thread renders */
	lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "unmapped_caller: %s\n", dlerror());
		return 1;
	}
	*(void **)&call = dlsym(lib, "unmapped_call");
	if (!call) {
		fprintf(stderr, "unmapped_caller: %s\n", dlerror());
		return 1;
	}
	call(spin_after_close);
	return 1;
}
