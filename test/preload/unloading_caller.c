/* A render thread that runs code the sampler can name only if it looks
 * again at the right moment (test/preload/test_sampler_unloading.sh):
 *
 * - a library's destructor, spinning while dlclose unloads it (the
 *   library is listed by the loader, but cannot be held any more);
 * - three regions of code made at run time, as a JIT makes them (llvmpipe's
 *   shaders): each mapped after the one before it was run (and so after the
 *   sampler last read /proc/self/maps), the last unmapped as soon as it
 *   returns, before the sampler has named its samples.
 *
 * Each part runs for SECONDS of CPU (the code regions' with a frame swap
 * every few milliseconds), between frames of plain spinning.
 *
 *   unloading_caller SECONDS LIB
 *
 * Prints "unloaded yes|no jit 3" ("no": a C library whose dlclose never
 * unloads, as musl's; the destructor then is not armed). */
#include "mapped.h"
#include "spin.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

unsigned int eglSwapBuffers(void *dpy, void *surface);

static volatile uint64_t sink;

/* The code copied into each region: a leaf loop on registers and
 * immediates, with no call and no address of its own, so that it runs
 * anywhere it is copied. Its own section gives its bounds. */
uint64_t jit_spin(uint64_t n, uint64_t x);

__attribute__((section("pl_jit_text"), noinline, used)) uint64_t jit_spin(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}
extern const char __start_pl_jit_text[], __stop_pl_jit_text[];

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Frames of plain work, so that the render thread is known and the walks
 * between the parts are ordinary ones. */
static void frames(double seconds)
{
	double end = cpu_s() + seconds;

	while (cpu_s() < end) {
		sink = spin(1000000, sink);
		eglSwapBuffers(NULL, NULL);
	}
}

static int run_jit_region(double seconds, int unmap_at_once)
{
	size_t len = (size_t)(__stop_pl_jit_text - __start_pl_jit_text);
	uint64_t (*fn)(uint64_t, uint64_t);
	double end;
	void *code = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (code == MAP_FAILED)
		return -1;
	memcpy(code, __start_pl_jit_text, len);
	__builtin___clear_cache((char *)code, (char *)code + len);
	if (mprotect(code, len, PROT_READ | PROT_EXEC) != 0)
		return -1;
	*(void **)&fn = code;
	end = cpu_s() + seconds;
	while (cpu_s() < end) {
		sink = fn(2000000, sink);
		eglSwapBuffers(NULL, NULL);
	}
	if (unmap_at_once)
		munmap(code, len);
	return 0;
}

int main(int argc, char **argv)
{
	void (*arm)(double);
	double seconds;
	void *lib;
	int unloaded, i;

	if (argc != 3) {
		fprintf(stderr, "usage: unloading_caller SECONDS LIB\n");
		return 2;
	}
	seconds = atof(argv[1]);
	eglSwapBuffers(NULL, NULL); /* this thread renders */
	frames(0.5);
	lib = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "unloading_caller: %s\n", dlerror());
		return 1;
	}
	*(void **)&arm = dlsym(lib, "unloading_arm");
	if (!arm) {
		fprintf(stderr, "unloading_caller: %s\n", dlerror());
		return 1;
	}
	arm(seconds);
	dlclose(lib);
	unloaded = still_mapped(argv[2]) == 0;
	if (!unloaded)
		arm(0); /* never unloaded (musl): its destructor would spin at exit */
	frames(0.3);
	for (i = 0; i < 3; i++) {
		if (run_jit_region(seconds, i == 2) != 0) {
			perror("unloading_caller: a code region");
			return 1;
		}
		frames(0.3);
	}
	printf("unloaded %s jit 3\n", unloaded ? "yes" : "no");
	return 0;
}
