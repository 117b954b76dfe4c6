/* libtestswap.so: the renderer test's stand-in for a driver's
 * eglSwapBuffers. It spins for a set amount of work (a driver copying or
 * busy-waiting on the GPU), then sleeps a millisecond (the vsync wait).
 * The renderer links it like libEGL, so under LD_PRELOAD the shim's hook
 * runs first and forwards here through dlsym(RTLD_NEXT), the same path as
 * with a real libEGL. */
#include "spin.h"

#include <time.h>

__attribute__((visibility("default"))) void testswap_set_spin(uint64_t iterations);
__attribute__((visibility("default"))) unsigned int eglSwapBuffers(void *dpy, void *surface);

static uint64_t swap_iterations;
static volatile uint64_t sink;

void testswap_set_spin(uint64_t iterations)
{
	swap_iterations = iterations;
}

unsigned int eglSwapBuffers(void *dpy, void *surface)
{
	struct timespec vsync = { 0, 1000000 };

	(void)dpy;
	(void)surface;
	sink = spin(swap_iterations, sink);
	while (nanosleep(&vsync, &vsync) != 0)
		;
	return 1;
}
