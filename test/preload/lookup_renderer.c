/* A renderer that does not link its swap library, as glmark2 does not
 * link libGL: it dlopens libtestswap.so (RTLD_LOCAL) and finds
 * eglSwapBuffers there with dlsym (MODE dlsym) or through the library's
 * glXGetProcAddressARB, itself found with dlsym (MODE getproc). MODE
 * plugin: SWAP_LIB is a plugin (gl_plugin.c) whose plugin_swap calls
 * eglSwapBuffers by symbol, as a GStreamer GL plugin does.
 *
 *   lookup_renderer SECONDS dlsym|getproc|plugin SWAP_LIB
 *
 * Prints "swap_from MODULE frames N fps F [fps_after5 G]": MODULE is the
 * object the swap pointer it got lies in; G, in a run longer than 5 s, its
 * rate from 5 s to the end: what the sampler's render_stats at exit covers
 * (its first period ends 5 s after the shim's start, a few ms before the
 * program's, and the last runs to exit), so that the two can be compared
 * on a machine whose load changes during the run. */
#include "spin.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef unsigned int (*swap_fn)(void *, void *);
typedef void (*(*get_proc_fn)(const unsigned char *))(void);

static volatile uint64_t sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	void *lib, *p = NULL;
	swap_fn swap;
	Dl_info where;
	double start, end, at5 = 0;
	unsigned long frames = 0, frames_at5 = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: lookup_renderer SECONDS dlsym|getproc|plugin SWAP_LIB\n");
		return 2;
	}
	lib = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "lookup_renderer: %s\n", dlerror());
		return 1;
	}
	if (strcmp(argv[2], "dlsym") == 0) {
		p = dlsym(lib, "eglSwapBuffers");
	} else if (strcmp(argv[2], "plugin") == 0) {
		p = dlsym(lib, "plugin_swap");
	} else {
		get_proc_fn get_proc;
		void (*f)(void);
		void *g = dlsym(lib, "glXGetProcAddressARB");

		if (g) {
			memcpy(&get_proc, &g, sizeof(get_proc));
			f = get_proc((const unsigned char *)"eglSwapBuffers");
			memcpy(&p, &f, sizeof(p));
		}
	}
	if (!p) {
		fprintf(stderr, "lookup_renderer: no swap function\n");
		return 1;
	}
	memcpy(&swap, &p, sizeof(swap));
	if (!dladdr(p, &where) || !where.dli_fname)
		where.dli_fname = "?";
	start = now_s();
	end = start + atof(argv[1]);
	for (double t = start; t < end; t = now_s()) {
		if (!at5 && t >= start + 5) {
			at5 = t;
			frames_at5 = frames;
		}
		sink = spin(1000000, sink);
		swap(NULL, NULL);
		frames++;
	}
	end = now_s();
	printf("swap_from %s frames %lu fps %.1f",
	       strrchr(where.dli_fname, '/') ? strrchr(where.dli_fname, '/') + 1 : where.dli_fname,
	       frames, (double)frames / (end - start));
	if (at5 > 0 && end > at5)
		printf(" fps_after5 %.1f", (double)(frames - frames_at5) / (end - at5));
	printf("\n");
	return 0;
}
