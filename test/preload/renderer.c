/* A stand-in renderer for the sampler tests: several threads, and one
 * render thread whose CPU time splits in known shares: 60% in hot_a, 30%
 * in hot_b, 10% inside eglSwapBuffers (libtestswap.so), which the sampler
 * must count as idle. A worker thread burns CPU too, and a third sleeps,
 * so a sampler that looked at the wrong thread would be caught.
 *
 *   renderer SECONDS [--own-handler]
 *
 * SECONDS is CPU time of the render thread.
 *
 * --own-handler installs a SIGPROF handler first, as a program with its
 * own profiler would. Prints "frames N" and the render thread's CPU
 * milliseconds in each part ("cpu_ms hot_a=A hot_b=B swap=S").
 *
 * --probe-arming: after the first frame (its swap names the render thread
 * to the sampler), keep rendering's CPU busy and watch /proc/self/timers
 * for the sampler's timer; prints "armed_ms M" (wall milliseconds from the
 * first swap's return) or "armed_ms none" after 1 s.
 *
 * Built with -DRENDERER_HOT_STATIC (symbols_renderer, for the
 * preload_sampler_symbols test), hot_a and hot_b are static, as the hot
 * code of a vendor's program is: once it is stripped, only its debug file
 * names them. */
#include "spin.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void testswap_set_spin(uint64_t iterations);
unsigned int eglSwapBuffers(void *dpy, void *surface);
#ifdef RENDERER_HOT_STATIC
#define HOT_LINKAGE static
#else
#define HOT_LINKAGE
#endif
HOT_LINKAGE uint64_t hot_a(uint64_t n);
HOT_LINKAGE uint64_t hot_b(uint64_t n);
void render_frame(void);

static uint64_t per_ms; /* spin iterations a millisecond of CPU */
static volatile uint64_t sink;
static volatile int stop;
static unsigned long frames;
static double cpu_a, cpu_b, cpu_swap; /* the truth, measured */
static int probe_arming;
static double armed_ms = -1;

static double now_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* exported, not inlined: the sampler names them through dladdr */
HOT_LINKAGE __attribute__((noinline, noclone)) uint64_t hot_a(uint64_t n)
{
	return spin(n, sink);
}

HOT_LINKAGE __attribute__((noinline, noclone)) uint64_t hot_b(uint64_t n)
{
	return spin(n, sink + 1);
}

/* Each part timed on the thread's CPU clock: the test compares the
 * sampler's shares with these, not with the intended 60/30/10. */
__attribute__((noinline, noclone)) void render_frame(void)
{
	double t0 = now_s(CLOCK_THREAD_CPUTIME_ID), t1, t2, t3;

	sink = hot_a(6 * per_ms);
	t1 = now_s(CLOCK_THREAD_CPUTIME_ID);
	sink = hot_b(3 * per_ms);
	t2 = now_s(CLOCK_THREAD_CPUTIME_ID);
	eglSwapBuffers(NULL, NULL);
	t3 = now_s(CLOCK_THREAD_CPUTIME_ID);
	cpu_a += t1 - t0;
	cpu_b += t2 - t1;
	cpu_swap += t3 - t2;
}

/* Whether this process has a POSIX timer (the sampler's: the program
 * makes none). Needs CONFIG_CHECKPOINT_RESTORE; -1 without the file. */
static int has_posix_timer(void)
{
	FILE *f = fopen("/proc/self/timers", "r");
	char line[128];
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = strncmp(line, "ID:", 3) == 0;
	fclose(f);
	return found;
}

static void probe_first_swap(void)
{
	double t0 = now_s(CLOCK_MONOTONIC), t = t0;

	for (; t - t0 < 1.0; t = now_s(CLOCK_MONOTONIC)) {
		int h = has_posix_timer();

		if (h != 0) {
			armed_ms = h > 0 ? (t - t0) * 1e3 : -2;
			return;
		}
		sink = spin(per_ms / 4, sink);
	}
}

/* Runs until its own CPU time reaches the budget, so that the number of
 * samples does not depend on how loaded the machine is (a wall-clock cap
 * of ten times the budget keeps a starved run finite). */
static void *render_main(void *arg)
{
	double budget = *(double *)arg;
	double end = now_s(CLOCK_MONOTONIC) + 10 * budget + 5;

	while (cpu_a + cpu_b + cpu_swap < budget && now_s(CLOCK_MONOTONIC) < end) {
		render_frame();
		if (frames++ == 0 && probe_arming)
			probe_first_swap();
	}
	stop = 1;
	return NULL;
}

static void *worker_main(void *arg)
{
	struct timespec rest = { 0, 9000000 };

	(void)arg;
	while (!stop) {
		sink = spin(per_ms, sink);
		nanosleep(&rest, NULL);
	}
	return NULL;
}

static void *sleeper_main(void *arg)
{
	struct timespec rest = { 0, 20000000 };

	(void)arg;
	while (!stop)
		nanosleep(&rest, NULL);
	return NULL;
}

static void calibrate(void)
{
	uint64_t n = 1000000;
	double t0, t;

	for (;;) {
		t0 = now_s(CLOCK_THREAD_CPUTIME_ID);
		sink = spin(n, sink);
		t = now_s(CLOCK_THREAD_CPUTIME_ID) - t0;
		if (t > 0.05)
			break;
		n *= 2;
	}
	per_ms = (uint64_t)((double)n / (t * 1000.0));
}

static void own_handler(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	pthread_t render, worker, sleeper;
	double seconds;

	if (argc < 2 || (seconds = atof(argv[1])) <= 0) {
		fprintf(stderr, "usage: renderer SECONDS [--own-handler]\n");
		return 2;
	}
	if (argc > 2 && strcmp(argv[2], "--own-handler") == 0)
		signal(SIGPROF, own_handler);
	probe_arming = argc > 2 && strcmp(argv[2], "--probe-arming") == 0;
	calibrate();
	testswap_set_spin(per_ms);
	if (pthread_create(&worker, NULL, worker_main, NULL) != 0 ||
	    pthread_create(&sleeper, NULL, sleeper_main, NULL) != 0 ||
	    pthread_create(&render, NULL, render_main, &seconds) != 0) {
		fprintf(stderr, "renderer: cannot start threads\n");
		return 1;
	}
	pthread_setname_np(render, "render");
	pthread_setname_np(worker, "worker");
	pthread_join(render, NULL);
	pthread_join(worker, NULL);
	pthread_join(sleeper, NULL);
	printf("frames %lu\n", frames);
	printf("cpu_ms hot_a=%.0f hot_b=%.0f swap=%.0f\n", cpu_a * 1e3, cpu_b * 1e3, cpu_swap * 1e3);
	if (probe_arming && armed_ms >= 0)
		printf("armed_ms %.1f\n", armed_ms);
	else if (probe_arming)
		printf("armed_ms %s\n", armed_ms == -2 ? "unknown" : "none");
	return 0;
}
