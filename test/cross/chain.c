/* A known call chain for measuring the render sampler's unwinding on each
 * target: the main thread renders frames (eglSwapBuffers from the stand-in
 * libtestswap.so, so the sampler takes it as the render thread) and spends
 * its CPU time in chain_6, called through chain_1 .. chain_5:
 *
 *   main -> render_loop -> chain_1 -> ... -> chain_6 (spins)
 *
 * A sample that unwinds fully shows chain_1;...;chain_6 in the folded stacks.
 *
 *   chain SECONDS     (CPU time of the main thread)
 *
 * The chain functions are exported (the program is linked with
 * -export-dynamic) so the sampler names them through dladdr, and each one
 * does work after its call so the compiler can make no tail call of it. */
#include "../preload/spin.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

unsigned int eglSwapBuffers(void *dpy, void *surface);
uint64_t chain_1(uint64_t n);
uint64_t chain_2(uint64_t n);
uint64_t chain_3(uint64_t n);
uint64_t chain_4(uint64_t n);
uint64_t chain_5(uint64_t n);
uint64_t chain_6(uint64_t n);
void render_loop(double seconds);

static volatile uint64_t sink;

#define LINK(name, next)                                                  \
	__attribute__((noinline, noclone)) uint64_t name(uint64_t n)      \
	{                                                                 \
		uint64_t r = next(n);                                     \
		sink = r;                                                 \
		return r ^ n;                                             \
	}

__attribute__((noinline, noclone)) uint64_t chain_6(uint64_t n)
{
	return spin(n, sink);
}
LINK(chain_5, chain_6)
LINK(chain_4, chain_5)
LINK(chain_3, chain_4)
LINK(chain_2, chain_3)
LINK(chain_1, chain_2)

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline, noclone)) void render_loop(double seconds)
{
	unsigned long frames = 0;
	double end = cpu_s() + seconds;

	while (cpu_s() < end) {
		sink = chain_1(2000000);
		eglSwapBuffers(NULL, NULL);
		frames++;
	}
	printf("frames %lu\n", frames);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0;

	if (seconds <= 0) {
		fprintf(stderr, "usage: chain SECONDS\n");
		return 2;
	}
	render_loop(seconds);
	return 0;
}
