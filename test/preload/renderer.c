/* A stand-in renderer for the sampler tests: several threads, and one
 * render thread whose CPU time splits in known shares: 60% in hot_a, 30%
 * in hot_b, 10% inside eglSwapBuffers (libtestswap.so), which the sampler
 * must count as idle. A worker thread burns CPU too, and a third sleeps,
 * so a sampler that looked at the wrong thread would be caught.
 *
 *   renderer SECONDS [--own-handler | --probe-arming | --contended | --close-all]
 *
 * SECONDS is CPU time of the render thread.
 *
 * --own-handler installs a SIGPROF handler first, as a program with its
 * own profiler would. Prints "frames N" and the render thread's CPU
 * milliseconds in each part ("cpu_ms hot_a=A hot_b=B swap=S").
 *
 * --contended: on CPU 0 with three busy processes (contend(), below).
 *
 * --close-all: 0.3 s in, close every descriptor above stderr, as a daemon
 * does; prints "perf_event_after_close_all yes" when a perf event (the
 * sampler's task clock) is still open after it.
 *
 * --probe-arming: after the first frame (its swap names the render thread
 * to the sampler), keep rendering's CPU busy and watch for the sampler's
 * clock (a perf event among the fds, or a timer in /proc/self/timers);
 * prints "armed_ms M" (wall milliseconds from the first swap's return) or
 * "armed_ms none" after 1 s.
 *
 * Built with -DRENDERER_HOT_STATIC (symbols_renderer, for the
 * preload_sampler_symbols test), hot_a and hot_b are static, as the hot
 * code of a vendor's program is: once it is stripped, only its debug file
 * names them. */
#include "spin.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* Whether this process has a perf event open (the sampler's task clock:
 * the program opens none). */
static int has_perf_event(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d)) != NULL) {
		char path[300], target[64];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = '\0';
			found = strcmp(target, "anon_inode:[perf_event]") == 0;
		}
	}
	closedir(d);
	return found;
}

/* Whether the sampler's clock is set: its task clock, or a POSIX timer
 * (the program makes none), which needs CONFIG_CHECKPOINT_RESTORE to be
 * seen; -1 when neither is there and timers cannot be seen. */
static int has_sampling_clock(void)
{
	FILE *f;
	char line[128];
	int found = 0;

	if (has_perf_event())
		return 1;
	if (!(f = fopen("/proc/self/timers", "r")))
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
		int h = has_sampling_clock();

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

/* --contended: the process on CPU 0 with HOGS busy processes of the same
 * priority, as on a device whose CPU other work wants: the render thread
 * then runs in slices that the scheduler ends at its tick. */
#define HOGS 3
static pid_t hogs[HOGS];

static int contend(void)
{
	cpu_set_t cpu0;

	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (sched_setaffinity(0, sizeof(cpu0), &cpu0) < 0)
		return -1;
	for (int i = 0; i < HOGS; i++) {
		hogs[i] = fork(); /* pinned as the parent is */
		if (hogs[i] < 0)
			return -1;
		if (hogs[i] == 0) {
			for (;;)
				sink = spin(1000000, sink);
		}
	}
	return 0;
}

static void end_contention(void)
{
	for (int i = 0; i < HOGS; i++) {
		if (hogs[i] > 0) {
			kill(hogs[i], SIGKILL);
			waitpid(hogs[i], NULL, 0);
		}
	}
}

int main(int argc, char **argv)
{
	pthread_t render, worker, sleeper;
	double seconds;
	bool contended, close_all;

	if (argc < 2 || (seconds = atof(argv[1])) <= 0) {
		fprintf(stderr, "usage: renderer SECONDS [--own-handler | --probe-arming | "
				"--contended | --close-all]\n");
		return 2;
	}
	if (argc > 2 && strcmp(argv[2], "--own-handler") == 0)
		signal(SIGPROF, own_handler);
	probe_arming = argc > 2 && strcmp(argv[2], "--probe-arming") == 0;
	contended = argc > 2 && strcmp(argv[2], "--contended") == 0;
	close_all = argc > 2 && strcmp(argv[2], "--close-all") == 0;
	calibrate();
	testswap_set_spin(per_ms);
	if (contended && contend() < 0) {
		perror("renderer: --contended");
		end_contention();
		return 1;
	}
	if (pthread_create(&worker, NULL, worker_main, NULL) != 0 ||
	    pthread_create(&sleeper, NULL, sleeper_main, NULL) != 0 ||
	    pthread_create(&render, NULL, render_main, &seconds) != 0) {
		fprintf(stderr, "renderer: cannot start threads\n");
		return 1;
	}
	pthread_setname_np(render, "render");
	pthread_setname_np(worker, "worker");
	if (close_all) {
		/* as a daemon does: every descriptor above stderr closed, once
		 * the sampler has started (within 15 ms of the first swap) */
		struct timespec settle = { 0, 300000000 };

		nanosleep(&settle, NULL);
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	}
	pthread_join(render, NULL);
	pthread_join(worker, NULL);
	pthread_join(sleeper, NULL);
	end_contention();
	printf("frames %lu\n", frames);
	printf("cpu_ms hot_a=%.0f hot_b=%.0f swap=%.0f\n", cpu_a * 1e3, cpu_b * 1e3, cpu_swap * 1e3);
	if (close_all)
		printf("perf_event_after_close_all %s\n", has_perf_event() ? "yes" : "no");
	if (probe_arming && armed_ms >= 0)
		printf("armed_ms %.1f\n", armed_ms);
	else if (probe_arming)
		printf("armed_ms %s\n", armed_ms == -2 ? "unknown" : "none");
	return 0;
}
