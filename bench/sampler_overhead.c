/* What the render sampler costs a CPU-bound program, side by side with
 * gperftools' CPU profiler at the same rate, in one run: the same program
 * bare, under libperflink-preload.so (PERFLINK_SAMPLE_HZ=100) and under
 * libprofiler.so (CPUPROFILE_FREQUENCY=100). The modes take turns over
 * several rounds (so drift in the machine's speed hits all three alike);
 * each figure is the median of its rounds.
 *
 * Per run: the CPU time of the work thread (its handlers included), and
 * the CPU time of the whole process (wait4: every thread, start-up, the
 * naming of samples and the profile written at exit). The naming is
 * perflink's alone (gperftools leaves it to pprof, after the run) and
 * mostly a one-time cost: the first sample named in a module whose debug
 * information is installed loads its line tables (libc with libc6-dbg:
 * some 50 ms here, once a process), so the work stays in the program's
 * own functions and the comparison is of sampling. CPU time, not wall
 * time: on a shared machine the wait for a CPU would swamp both. Overhead is
 * against bare; the last lines give perflink's overhead over gperftools'
 * (target: at most 1, DESIGN.md).
 *
 * At 100 Hz both overheads are a fraction of a percent, below the spread
 * of the machine's speed from run to run, so the medians alone decide
 * little. The runs of a round are next to each other in time, so the
 * comparison is also made within each round (perflink's run against
 * gperftools' of the same round) and judged by a sign test: how many
 * rounds perflink cost less, and how likely that count is if neither were
 * cheaper. --hz raises the rate for both alike, to resolve the cost of one
 * sample above the noise.
 *
 * The work is one thread in a few functions a handful of frames deep, so
 * that both profilers unwind something. perflink samples one thread: the
 * work thread names itself and PERFLINK_SAMPLE_THREAD picks it (no swap
 * to find it by); gperftools samples the process, which is that thread.
 *
 *   sampler_overhead --shim PATH [--profiler LIB] [--rounds N] [--work-ms N] [--hz N]
 *   sampler_overhead --work N      (the program itself) */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "median.h"

#define MAX_ROUNDS 50
#define THREAD_NAME "plbench-work"

extern char **environ;

enum mode { BARE, PERFLINK, GPERFTOOLS, MODES };
static const char *const mode_name[MODES] = { "bare", "perflink", "gperftools" };

static volatile uint64_t sink;

/* The work thread's own CPU time: it includes the signal handlers that
 * run on it (the profilers' cost to the program), not the wait for a CPU
 * on a loaded machine. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --- the program ------------------------------------------------------ */

__attribute__((noinline)) static uint64_t leaf(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) static uint64_t nest(int depth, uint64_t n, uint64_t x)
{
	if (depth == 0)
		return leaf(n, x);
	x = nest(depth - 1, n, x);
	__asm__ volatile("" : "+r"(x)); /* no tail call: keep the frames */
	return x;
}

static int run_work(uint64_t units)
{
	double t0;
	uint64_t i;

	prctl(PR_SET_NAME, THREAD_NAME, 0, 0, 0);
	t0 = now_s();
	for (i = 0; i < units; i++)
		sink = nest((int)(i % 8) + 2, 10000, sink);
	printf("work_s %.6f\n", now_s() - t0);
	return 0;
}

/* --- the driver -------------------------------------------------------- */

struct result {
	double work_s, cpu_s;
	unsigned long samples; /* as the profiler reports them */
};

static unsigned long perflink_samples(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	unsigned long total = 0, n;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		const char *of = strstr(line, "% of ");

		if (strncmp(line, "==== ", 5) == 0 && of && sscanf(of, "%% of %lu", &n) == 1)
			total += n;
	}
	fclose(f);
	return total;
}

static int run(const char *self, enum mode m, uint64_t units, int hz, const char *shim,
	       const char *profiler, const char *dir, struct result *r)
{
	char units_s[32], pre[600], out[300], env_out[320], prof[320], err_path[300];
	char hz_perflink[48], hz_gperf[48];
	char *argv[] = { (char *)self, "--work", units_s, NULL };
	char *envp[600];
	struct rusage ru;
	int fds[2], status, k = 0, i;
	pid_t pid;
	FILE *f;
	char line[256];

	memset(r, 0, sizeof(*r));
	snprintf(units_s, sizeof(units_s), "%llu", (unsigned long long)units);
	snprintf(out, sizeof(out), "%s/perflink.txt", dir);
	snprintf(prof, sizeof(prof), "CPUPROFILE=%s/gperftools.prof", dir);
	snprintf(err_path, sizeof(err_path), "%s/stderr", dir);
	snprintf(hz_perflink, sizeof(hz_perflink), "PERFLINK_SAMPLE_HZ=%d", hz);
	snprintf(hz_gperf, sizeof(hz_gperf), "CPUPROFILE_FREQUENCY=%d", hz);
	for (i = 0; environ[i] && k < 580; i++) {
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 && strncmp(environ[i], "PERFLINK_", 9) != 0 &&
		    strncmp(environ[i], "CPUPROFILE", 10) != 0)
			envp[k++] = environ[i];
	}
	if (m == PERFLINK) {
		snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", shim);
		snprintf(env_out, sizeof(env_out), "PERFLINK_SAMPLE_OUT=%s", out);
		envp[k++] = pre;
		envp[k++] = "PERFLINK_SAMPLE=1";
		envp[k++] = hz_perflink;
		envp[k++] = "PERFLINK_SAMPLE_THREAD=" THREAD_NAME;
		envp[k++] = env_out;
		unlink(out);
	} else if (m == GPERFTOOLS) {
		snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", profiler);
		envp[k++] = pre;
		envp[k++] = prof;
		envp[k++] = hz_gperf;
	}
	envp[k] = NULL;
	if (pipe(fds) < 0)
		return -errno;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		FILE *e = freopen(err_path, "w", stderr);

		(void)e;
		dup2(fds[1], 1);
		close(fds[0]);
		execve(self, argv, envp);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "work_s %lf", &r->work_s);
	if (f)
		fclose(f);
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || r->work_s <= 0)
		return -ECHILD;
	r->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	if (m == PERFLINK)
		r->samples = perflink_samples(out);
	if (m == GPERFTOOLS) {
		/* "PROFILE: interrupts/evictions/bytes = 208/0/296" at exit */
		f = fopen(err_path, "r");
		while (f && fgets(line, sizeof(line), f))
			sscanf(line, "PROFILE: interrupts/evictions/bytes = %lu", &r->samples);
		if (f)
			fclose(f);
		if (r->samples == 0)
			return -ENOENT;
	}
	return 0;
}

/* P(X >= k) for X ~ Binomial(n, 1/2): how likely perflink comes out
 * cheaper in k of n rounds if neither profiler were cheaper. */
static double sign_test_p(int k, int n)
{
	double p = 0, c = 1; /* c = C(n, i) */

	for (int i = 0; i <= n; i++) {
		if (i >= k)
			p += c;
		c = c * (n - i) / (i + 1);
	}
	return p / pow(2, n);
}

/* perflink's run against gperftools' of the same round. The verdict on
 * the target (perflink's overhead no larger than gperftools'): met when
 * perflink costs less in more rounds than not and by a median that is not
 * above zero; shown when the sign test also puts chance below 5%. */
static void paired_compare(const char *what, const double *p, const double *g, int rounds,
			   double scale, const char *unit)
{
	double d[MAX_ROUNDS];
	int cheaper = 0, n = 0;

	for (int i = 0; i < rounds; i++) {
		d[i] = p[i] - g[i];
		if (d[i] != 0) /* a tie says nothing either way */
			n++;
		if (d[i] < 0)
			cheaper++;
	}
	double med = bench_median(d, rounds), pv = n ? sign_test_p(cheaper, n) : 1;

	printf("%-17s perflink cheaper than gperftools in %d of %d rounds (sign test p = %.3f), "
	       "median difference %+.1f %s: %s\n",
	       what, cheaper, n, pv, med * scale, unit,
	       med <= 0 && 2 * cheaper >= n ? (pv < 0.05 ? "target met" : "target met, within noise")
					    : "target missed");
}

static void usage(void)
{
	fprintf(stderr, "usage: sampler_overhead --shim PATH [--profiler LIB] [--rounds N] "
			"[--work-ms N] [--hz N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *shim = NULL, *profiler = "libprofiler.so.0";
	int rounds = 9, work_ms = 2000, hz = 100, i, r;
	double work[MODES][MAX_ROUNDS], cpu[MODES][MAX_ROUNDS], med_work[MODES], med_cpu[MODES];
	unsigned long samples[MODES] = { 0 };
	char self[4096], dir[] = "/tmp/pl-sampler-overhead.XXXXXX";
	uint64_t units;
	ssize_t n;
	bool have_gperf = true;

	if (argc == 3 && strcmp(argv[1], "--work") == 0)
		return run_work(strtoull(argv[2], NULL, 10));
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--shim") == 0 && i + 1 < argc)
			shim = argv[++i];
		else if (strcmp(argv[i], "--profiler") == 0 && i + 1 < argc)
			profiler = argv[++i];
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--work-ms") == 0 && i + 1 < argc)
			work_ms = atoi(argv[++i]);
		else if (strcmp(argv[i], "--hz") == 0 && i + 1 < argc)
			hz = atoi(argv[++i]);
		else
			usage();
	}
	/* perflink's ceiling (PERFLINK_SAMPLE_HZ) */
	if (!shim || rounds < 1 || rounds > MAX_ROUNDS || work_ms < 100 || hz < 1 || hz > 1000)
		usage();
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || !mkdtemp(dir)) {
		perror("sampler_overhead");
		return 1;
	}
	self[n] = '\0';

	/* size the work to work_ms bare */
	{
		struct result c;

		units = 200;
		if (run(self, BARE, units, hz, shim, profiler, dir, &c) < 0) {
			fprintf(stderr, "sampler_overhead: the work does not run\n");
			return 1;
		}
		units = (uint64_t)((double)units * (work_ms / 1000.0) / c.work_s) + 1;
	}
	printf("sampler_overhead: %d rounds of %llu units (~%d ms bare), modes interleaved, "
	       "both profilers at %d Hz\n", rounds, (unsigned long long)units, work_ms, hz);
	for (i = 0; i < rounds; i++) {
		for (int k = 0; k < MODES; k++) {
			enum mode m = (enum mode)((i + k) % MODES); /* rotate who goes first */
			struct result res;

			if (m == GPERFTOOLS && !have_gperf) {
				work[m][i] = cpu[m][i] = 0;
				continue;
			}
			r = run(self, m, units, hz, shim, profiler, dir, &res);
			if (r == -ENOENT && m == GPERFTOOLS) {
				printf("gperftools' profiler (%s) did not load: install libgoogle-perftools4 "
				       "or give --profiler PATH\n", profiler);
				have_gperf = false;
				work[m][i] = cpu[m][i] = 0;
				continue;
			}
			if (r < 0) {
				fprintf(stderr, "sampler_overhead: %s run failed (%s)\n", mode_name[m],
					strerror(-r));
				return 1;
			}
			work[m][i] = res.work_s;
			cpu[m][i] = res.cpu_s;
			samples[m] += res.samples;
			printf("  round %d %-11s work cpu %.3f s  process cpu %.3f s  samples %lu\n", i + 1,
			       mode_name[m], res.work_s, res.cpu_s, res.samples);
			fflush(stdout);
		}
	}
	if (have_gperf) {
		/* within each round, before bench_median() sorts the columns */
		printf("\n");
		paired_compare("work thread", work[PERFLINK], work[GPERFTOOLS], rounds, 1e3, "ms");
		paired_compare("process", cpu[PERFLINK], cpu[GPERFTOOLS], rounds, 1e3, "ms");
	}
	printf("\n%-18s %10s %10s %9s %9s %12s\n", "median of rounds", "work cpu s", "proc cpu s",
	       "work +%", "proc +%", "samples/run");
	for (int m = 0; m < MODES; m++) {
		if (m == GPERFTOOLS && !have_gperf)
			continue;
		med_work[m] = bench_median(work[m], rounds);
		med_cpu[m] = bench_median(cpu[m], rounds);
		printf("%-18s %10.3f %10.3f %9.2f %9.2f %12.0f\n", mode_name[m], med_work[m], med_cpu[m],
		       100 * (med_work[m] / med_work[BARE] - 1), 100 * (med_cpu[m] / med_cpu[BARE] - 1),
		       (double)samples[m] / rounds);
	}
	if (have_gperf) {
		double ow_p = med_work[PERFLINK] - med_work[BARE], ow_g = med_work[GPERFTOOLS] - med_work[BARE];
		double oc_p = med_cpu[PERFLINK] - med_cpu[BARE], oc_g = med_cpu[GPERFTOOLS] - med_cpu[BARE];
		double lo = work[BARE][0], hi = work[BARE][rounds - 1]; /* sorted by bench_median() */

		printf("\noverhead over bare, medians (perflink / gperftools): work thread %.1f / %.1f "
		       "ms, process %.1f / %.1f ms\n",
		       ow_p * 1e3, ow_g * 1e3, oc_p * 1e3, oc_g * 1e3);
		printf("per sample, work thread: perflink %.1f us, gperftools %.1f us\n",
		       samples[PERFLINK] ? ow_p * 1e6 / ((double)samples[PERFLINK] / rounds) : 0.0,
		       samples[GPERFTOOLS] ? ow_g * 1e6 / ((double)samples[GPERFTOOLS] / rounds) : 0.0);
		printf("noise: bare work thread %.3f .. %.3f s over the rounds\n", lo, hi);
	}
	{
		char p[300];

		snprintf(p, sizeof(p), "%s/perflink.txt", dir);
		unlink(p);
		snprintf(p, sizeof(p), "%s/perflink.txt.folded", dir);
		unlink(p);
		snprintf(p, sizeof(p), "%s/gperftools.prof", dir);
		unlink(p);
		snprintf(p, sizeof(p), "%s/stderr", dir);
		unlink(p);
		rmdir(dir);
	}
	return 0;
}
