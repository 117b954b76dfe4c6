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

/* the swap itself, reached by eglSwapBuffers and handed out by
 * glXGetProcAddressARB: as in a real GL library, what GetProcAddress gives
 * is the library's own code, not its exported (interposable) symbol */
static unsigned int swap_buffers(void *dpy, void *surface)
{
	struct timespec vsync = { 0, 1000000 };

	(void)dpy;
	(void)surface;
	sink = spin(swap_iterations, sink);
	while (nanosleep(&vsync, &vsync) != 0)
		;
	return 1;
}

unsigned int eglSwapBuffers(void *dpy, void *surface)
{
	return swap_buffers(dpy, surface);
}

/* GLX's way to hand out its functions, for test/preload/lookup_renderer.c:
 * this stand-in knows one. */
__attribute__((visibility("default"))) void (*glXGetProcAddressARB(const unsigned char *name))(void);

void (*glXGetProcAddressARB(const unsigned char *name))(void)
{
	unsigned int (*swap)(void *, void *) = swap_buffers;
	void (*f)(void);

	if (!name || __builtin_strcmp((const char *)name, "eglSwapBuffers") != 0)
		return 0;
	__builtin_memcpy(&f, &swap, sizeof(f));
	return f;
}
