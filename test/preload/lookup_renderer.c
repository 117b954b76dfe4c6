/* A renderer that does not link its swap library, as glmark2 does not
 * link libGL: it dlopens libtestswap.so (RTLD_LOCAL) and finds
 * eglSwapBuffers there with dlsym (MODE dlsym) or through the library's
 * glXGetProcAddressARB, itself found with dlsym (MODE getproc). MODE
 * plugin: SWAP_LIB is a plugin (gl_plugin.c) whose plugin_swap calls
 * eglSwapBuffers by symbol, as a GStreamer GL plugin does.
 *
 *   lookup_renderer SECONDS dlsym|getproc|plugin SWAP_LIB
 *
 * Prints "swap_from MODULE frames N fps F": MODULE is the object the
 * swap pointer it got lies in. */
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
	double start, end;
	unsigned long frames = 0;

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
	while (now_s() < end) {
		sink = spin(1000000, sink);
		swap(NULL, NULL);
		frames++;
	}
	printf("swap_from %s frames %lu fps %.1f\n",
	       strrchr(where.dli_fname, '/') ? strrchr(where.dli_fname, '/') + 1 : where.dli_fname,
	       frames, (double)frames / (now_s() - start));
	return 0;
}
