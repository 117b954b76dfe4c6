/* What loading libperflink-preload.so costs a process start, side by side
 * in one run: /bin/true spawned bare, with the shim dormant (LD_PRELOAD
 * only), with the stage profiler on, and with the render sampler on, and
 * the same for a second shim given with --before (an older build), so the
 * two can be compared on the same machine at the same moment.
 *
 * Every shim mode loads the shim into a program that ends at once, which is
 * what a shell loop, a build or a service manager does to every process the
 * shim is set for. The modes take turns, a batch of spawns each, over
 * several rounds; each mode's figure is the median of its batches (this
 * machine is shared and noisy: a batch hit by a neighbour does not move a
 * median).
 *
 * Budget (issue 16): dormant at most 0.1 ms a process start over bare.
 * With --floor EMPTY_LIB, a library with nothing in it is preloaded in
 * turn with the others: what LD_PRELOAD itself costs here, the part of
 * the dormant figure no shim can remove; the rest is the shim's own.
 *
 *   preload_exec --shim PATH [--before PATH] [--floor EMPTY_LIB] [--spawns N]
 *                [--rounds R] */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "median.h"

#define MAX_ROUNDS 64

enum mode { BARE, DORMANT, PROFILER, SAMPLER, MODES };

static const char *const mode_name[MODES] = {
	[BARE] = "bare",
	[DORMANT] = "dormant",
	[PROFILER] = "profiler on",
	[SAMPLER] = "sampler on",
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* µs a process: n spawns of /bin/true with env, one after another. */
static double batch(char *const env[], int n)
{
	char *argv[] = { (char *)"/bin/true", NULL };
	double t0 = now_us();

	for (int i = 0; i < n; i++) {
		pid_t pid;
		int status;

		if (posix_spawn(&pid, argv[0], NULL, NULL, argv, env) != 0 ||
		    waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			return -1;
	}
	return (now_us() - t0) / n;
}

/* The environment of one mode under one shim (NULL for bare). */
static void mode_env(char *env[8], char preload[4200], enum mode m, const char *shim)
{
	int k = 0;

	env[k++] = (char *)"PATH=/usr/bin:/bin";
	if (m != BARE) {
		snprintf(preload, 4200, "LD_PRELOAD=%s", shim);
		env[k++] = preload;
	}
	if (m == PROFILER) {
		env[k++] = (char *)"PERFLINK_PROFILE=1";
		env[k++] = (char *)"PERFLINK_PROFILE_SYSLOG=off";
		env[k++] = (char *)"PERFLINK_SOCKET=off";
	}
	if (m == SAMPLER) {
		env[k++] = (char *)"PERFLINK_SAMPLE=1";
		env[k++] = (char *)"PERFLINK_SAMPLE_OUT=/dev/null";
		env[k++] = (char *)"PERFLINK_SOCKET=off";
	}
	env[k] = NULL;
}

int main(int argc, char **argv)
{
	const char *shim[2] = { NULL, NULL }; /* this build, --before */
	const char *floor_lib = NULL;
	int spawns = 100, rounds = 9;
	double v[2][MODES][MAX_ROUNDS], med[2][MODES], floor_v[MAX_ROUNDS], floor_med = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--shim") == 0 && i + 1 < argc)
			shim[0] = argv[++i];
		else if (strcmp(argv[i], "--before") == 0 && i + 1 < argc)
			shim[1] = argv[++i];
		else if (strcmp(argv[i], "--floor") == 0 && i + 1 < argc)
			floor_lib = argv[++i];
		else if (strcmp(argv[i], "--spawns") == 0 && i + 1 < argc)
			spawns = atoi(argv[++i]);
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else
			shim[0] = NULL, i = argc;
	}
	if (!shim[0] || spawns < 10 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: preload_exec --shim LIB [--before LIB] [--floor EMPTY_LIB] "
				"[--spawns N] [--rounds R]\n");
		return 2;
	}
	for (int r = 0; r < rounds; r++) {
		if (floor_lib) {
			char *env[8], preload[4200];

			/* the dormant environment, with the empty library */
			mode_env(env, preload, DORMANT, floor_lib);
			if ((floor_v[r] = batch(env, spawns)) < 0) {
				fprintf(stderr, "preload_exec: /bin/true failed under %s\n", floor_lib);
				return 1;
			}
		}
		for (int s = 0; s < 2; s++)
			for (int m = 0; m < MODES; m++) {
				char *env[8], preload[4200];

				if (!shim[s] || (s == 1 && m == BARE))
					continue;
				mode_env(env, preload, (enum mode)m, shim[s]);
				v[s][m][r] = batch(env, spawns);
				if (v[s][m][r] < 0) {
					fprintf(stderr, "preload_exec: /bin/true failed under %s (%s)\n",
						shim[s], mode_name[m]);
					return 1;
				}
			}
	}
	if (floor_lib)
		floor_med = bench_median(floor_v, rounds);
	for (int s = 0; s < 2; s++)
		for (int m = 0; m < MODES; m++)
			if (shim[s] && !(s == 1 && m == BARE))
				med[s][m] = bench_median(v[s][m], rounds);
	med[1][BARE] = med[0][BARE];

	printf("/bin/true spawned, µs a process start (median of %d rounds of %d spawns)\n\n",
	       rounds, spawns);
	printf("%-14s %12s %12s", "mode", "this shim", "vs bare");
	if (shim[1])
		printf(" %12s %12s %10s", "--before", "vs bare", "ratio");
	printf("\n");
	for (int m = 0; m < MODES; m++) {
		printf("%-14s %12.1f %+12.1f", mode_name[m], med[0][m], med[0][m] - med[0][BARE]);
		if (shim[1] && m != BARE)
			printf(" %12.1f %+12.1f %9.2fx", med[1][m], med[1][m] - med[0][BARE],
			       (med[1][m] - med[0][BARE]) / (med[0][m] - med[0][BARE] > 1
								? med[0][m] - med[0][BARE]
								: 1));
		printf("\n");
	}
	if (floor_lib)
		printf("%-14s %12.1f %+12.1f\n", "empty library", floor_med,
		       floor_med - med[0][BARE]);
	if (shim[1])
		printf("\nratio: what --before adds to a process start over what this shim adds\n"
		       "(this shim's addition floored at 1 µs).\n");
	printf("\ndormant: %+.1f µs a process start over bare. Budget 100 µs: %s\n",
	       med[0][DORMANT] - med[0][BARE],
	       med[0][DORMANT] - med[0][BARE] <= 100 ? "met" : "MISSED");
	if (floor_lib)
		printf("of which preloading any library (the empty one): %+.1f µs; the shim's "
		       "own: %+.1f µs\n",
		       floor_med - med[0][BARE], med[0][DORMANT] - floor_med);
	return 0;
}
