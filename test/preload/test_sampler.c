/* The render sampler under a real program: test/preload/renderer.c, whose
 * render thread splits its CPU time between hot_a, hot_b and a busy swap
 * (libtestswap.so's eglSwapBuffers, reached through the shim's hook) and
 * prints what each part really took. The shares the sampler reports are
 * checked against those measurements, and its files against their format
 * and their cap.
 *
 *   test_sampler RENDERER        (PL_PRELOAD_LIB from the environment) */
#include "harness.h"
#include "read_file.h"
#include "tap.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOLERANCE 3.0 /* percentage points */

static const char *renderer, *preload_lib;
static char dir[256];

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static bool matches(const char *re, const char *line)
{
	regex_t r;
	bool ok;

	if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB) != 0)
		abort();
	ok = regexec(&r, line, 0, NULL, 0) == 0;
	regfree(&r);
	return ok;
}

#define HEADER_RE "^==== [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} UTC [0-9]+ s, " \
		  "rendering [0-9]+% of [0-9]+ samples.* ====$"
#define ENTRY_RE "^[ 0-9]{3}[0-9]\\.[0-9]% [^ ].*$"
#define STATS_RE "^render_stats fps=[0-9]+\\.[0-9] frame_ms=[0-9]+\\.[0-9]$"
#define FOLDED_RE "^[^ ;]+(;[^ ;]+)* [1-9][0-9]*$"

/* One window of a report, as read back. */
struct window {
	unsigned rendering_pct, samples;
	bool has_stats;
	double fps, frame_ms;
	double incl_a, incl_b, self_a, self_b, line_a; /* -1: absent */
	bool any_swap;       /* libtestswap named anywhere */
	unsigned bad_lines;  /* lines matching no format */
	char first_bad[200];
};

static void parse_window(const char *text, struct window *w)
{
	char *copy = strdup(text), *save = NULL, *line;
	int section = -1;

	memset(w, 0, sizeof(*w));
	w->incl_a = w->incl_b = w->self_a = w->self_b = -1;
	w->line_a = 0;
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		double pct;
		char name[160];

		if (strstr(line, "libtestswap"))
			w->any_swap = true;
		if (strncmp(line, "==== ", 5) == 0) {
			if (!matches(HEADER_RE, line))
				goto bad;
			sscanf(strstr(line, "rendering"), "rendering %u%% of %u", &w->rendering_pct,
			       &w->samples);
			continue;
		}
		if (strncmp(line, "render_stats ", 13) == 0) {
			if (!matches(STATS_RE, line))
				goto bad;
			w->has_stats = sscanf(line, "render_stats fps=%lf frame_ms=%lf", &w->fps,
					      &w->frame_ms) == 2;
			continue;
		}
		if (strncmp(line, "-- ", 3) == 0) {
			section = strstr(line, "on the stack") ? 0
				: strstr(line, "innermost function") ? 1
				: strstr(line, "innermost line") ? 2 : -1;
			if (section < 0)
				goto bad;
			continue;
		}
		if (!matches(ENTRY_RE, line) || section < 0 ||
		    sscanf(line, "%lf%% %159[^\n]", &pct, name) != 2)
			goto bad;
		if (section == 0 && strcmp(name, "hot_a (renderer)") == 0)
			w->incl_a = pct;
		if (section == 0 && strcmp(name, "hot_b (renderer)") == 0)
			w->incl_b = pct;
		if (section == 1 && strcmp(name, "hot_a (renderer)") == 0)
			w->self_a = pct;
		if (section == 1 && strcmp(name, "hot_b (renderer)") == 0)
			w->self_b = pct;
		/* "file.c:42 hot_a" with libdw, "renderer+0x15ef hot_a+0x2f" without */
		if (section == 2 &&
		    matches("^([^ ]+\\.[ch]:[0-9]+ hot_a|renderer\\+0x[0-9a-f]+ hot_a\\+0x[0-9a-f]+)$",
			    name))
			w->line_a += pct;
		continue;
bad:
		if (w->bad_lines++ == 0)
			snprintf(w->first_bad, sizeof(w->first_bad), "%s", line);
	}
	free(copy);
}

static int run(struct h_run *r, const char *seconds, const char *flag, const char *const env[])
{
	char *argv[] = { (char *)renderer, (char *)seconds, (char *)flag, NULL };

	return h_run(r, argv, env);
}

static void path_in(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/%s", dir, name);
}

static void test_bare(void)
{
	struct h_run r;
	unsigned long frames = 0;

	TAP_OK(run(&r, "1", NULL, NULL) == 0 && r.status == 0, "renderer runs without the shim");
	TAP_OK(sscanf(r.out, "frames %lu", &frames) == 1 && frames > 0,
	       "renderer swaps frames without the shim (libtestswap's eglSwapBuffers)");
	h_run_free(&r);
}

static void near(double got, double want, const char *what)
{
	TAP_OK(fabs(got - want) <= TOLERANCE, "%s: %.1f%%, measured %.1f%%", what, got, want);
}

static void test_shares(void)
{
	char out[300], env_lib[300], env_out[320], folded_path[330], rotated[330];
	const char *env[] = { env_lib, "PERFLINK_SAMPLE=1", "PERFLINK_SAMPLE_HZ=997", env_out,
			      NULL };
	double a = 0, b = 0, sw = 0, busy_truth, a_share, b_share;
	unsigned long long folded_total = 0, folded_a = 0;
	unsigned folded_bad = 0;
	struct window w;
	struct h_run r;
	char *text, *folded;

	path_in(out, sizeof(out), "shares.txt");
	snprintf(env_lib, sizeof(env_lib), "LD_PRELOAD=%s", preload_lib);
	snprintf(env_out, sizeof(env_out), "PERFLINK_SAMPLE_OUT=%s", out);
	/* CPU-time timers are checked at the kernel's tick (250 Hz here):
	 * 10 s of render CPU time gives ~2,500 samples, about one point of
	 * binomial error on a 2/3 share, so 3 points is 3 sigma */
	TAP_OK(run(&r, "10", NULL, env) == 0 && r.status == 0, "renderer runs under the sampler");
	TAP_OK(sscanf(strstr(r.out, "cpu_ms") ? strstr(r.out, "cpu_ms") : "",
		      "cpu_ms hot_a=%lf hot_b=%lf swap=%lf", &a, &b, &sw) == 3 && a > 0 && b > 0,
	       "renderer measured its own split");
	TAP_OK(!strstr(r.err, "perflink"), "no message from the shim: %s", h_oneline(r.err));
	h_run_free(&r);

	text = test_read_file(out);
	TAP_OK(text != NULL, "report file written at exit");
	if (!text)
		return;
	h_diag(text);
	parse_window(text, &w);
	TAP_OK(w.bad_lines == 0, "every line in the window format (first bad: '%s')", w.first_bad);
	TAP_EQ_U64(h_count(text, "==== "), 1, "one window (the one cut short by exit)");
	TAP_OK(w.samples >= 1500, "enough samples to judge shares: %u", w.samples);

	busy_truth = 100.0 * (a + b) / (a + b + sw);
	a_share = 100.0 * a / (a + b);
	b_share = 100.0 * b / (a + b);
	near(w.rendering_pct, busy_truth, "rendering share (swap samples are idle)");
	near(w.incl_a, a_share, "hot_a on the stack");
	near(w.incl_b, b_share, "hot_b on the stack");
	near(w.self_a, a_share, "hot_a innermost");
	near(w.self_b, b_share, "hot_b innermost");
	near(w.line_a, a_share, "innermost lines in hot_a");
	TAP_OK(!w.any_swap, "the swap's own code is never among the busy samples");
	TAP_OK(w.has_stats && w.fps > 0 && w.frame_ms > 0 && w.fps * w.frame_ms <= 1000.0 + 50.0,
	       "render_stats: fps %.1f, frame_ms %.1f (rendering no more than all the time)",
	       w.fps, w.frame_ms);
	free(text);

	snprintf(folded_path, sizeof(folded_path), "%s.folded", out);
	folded = test_read_file(folded_path);
	TAP_OK(folded != NULL && folded[0], "folded stacks written next to the report");
	if (folded) {
		char *save = NULL, *line;

		for (line = strtok_r(folded, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			unsigned long long n = strtoull(strrchr(line, ' ') ? strrchr(line, ' ') + 1 : "0",
							NULL, 10);

			if (!matches(FOLDED_RE, line))
				folded_bad++;
			folded_total += n;
			if (strstr(line, ";hot_a ") || strstr(line, ";hot_a;"))
				folded_a += n;
		}
		free(folded);
	}
	TAP_EQ_U64(folded_bad, 0, "every folded line is 'frame;frame;... N'");
	TAP_OK(folded_total > 0 && fabs(100.0 * (double)folded_total / w.samples - w.rendering_pct) <= 1.5,
	       "folded stacks hold the busy samples: %llu of %u", folded_total, w.samples);
	near(folded_total ? 100.0 * (double)folded_a / (double)folded_total : 0, a_share,
	     "hot_a in the folded stacks");
	snprintf(rotated, sizeof(rotated), "%s.1", out);
	TAP_OK(!h_exists(rotated), "no rotation below the cap");
}

/* The shares of a run of SECONDS with FLAG under CLOCK_ENV, judged as in
 * test_shares; what the header says of the clock, and the samples' count. */
static void shares_of_run(const char *label, const char *seconds, const char *flag,
			  const char *clock_env, const char *header_says, unsigned min_samples)
{
	char out[300], env_lib[300], env_out[320], what[160];
	const char *env[] = { env_lib, "PERFLINK_SAMPLE=1", "PERFLINK_SAMPLE_HZ=997", env_out,
			      clock_env, NULL };
	double a = 0, b = 0, sw = 0;
	struct window w;
	struct h_run r;
	char *text;

	path_in(out, sizeof(out), "clock.txt");
	unlink(out);
	snprintf(env_lib, sizeof(env_lib), "LD_PRELOAD=%s", preload_lib);
	snprintf(env_out, sizeof(env_out), "PERFLINK_SAMPLE_OUT=%s", out);
	TAP_OK(run(&r, seconds, flag, env) == 0 && r.status == 0, "%s: renderer runs", label);
	TAP_OK(sscanf(strstr(r.out, "cpu_ms") ? strstr(r.out, "cpu_ms") : "",
		      "cpu_ms hot_a=%lf hot_b=%lf swap=%lf", &a, &b, &sw) == 3 && a > 0 && b > 0,
	       "%s: renderer measured its own split", label);
	h_run_free(&r);
	text = test_read_file(out);
	if (!text)
		text = strdup("");
	h_diag(text);
	parse_window(text, &w);
	TAP_OK(header_says ? strstr(text, header_says) != NULL
			   : strstr(text, "timer") == NULL && strstr(text, "user time") == NULL,
	       "%s: the header says the clock: '%s'", label, header_says ? header_says : "(task clock)");
	TAP_OK(w.samples >= min_samples, "%s: %u samples, %u at least", label, w.samples, min_samples);
	if (a + b + sw <= 0 || a + b <= 0) {
		free(text);
		return;
	}
	snprintf(what, sizeof(what), "%s: rendering share", label);
	near(w.rendering_pct, 100.0 * (a + b) / (a + b + sw), what);
	snprintf(what, sizeof(what), "%s: hot_a on the stack", label);
	near(w.incl_a, 100.0 * a / (a + b), what);
	snprintf(what, sizeof(what), "%s: hot_b on the stack", label);
	near(w.incl_b, 100.0 * b / (a + b), what);
	free(text);
}

/* The clock the samples are taken on. The POSIX timer on the thread's CPU
 * clock is checked at the kernel's tick, while the thread runs: on a CPU
 * that three busy processes want too, it ran in slices ended at a tick,
 * each starting where a frame starts after the swap's sleep, and was
 * sampled 96% busy, hot_a 80%, at a third of the rate (measured: 89.9%,
 * 66.7%). Perf's task clock, the default where the kernel allows it, keeps
 * the shares there; the timer, asked for or where perf events are refused,
 * keeps them on a CPU of its own and says so in the header. */
static void test_clock(void)
{
	char env_lib[300];
	const char *env[] = { env_lib, "PERFLINK_SAMPLE=1", "PERFLINK_SAMPLE_HZ=997",
			      "PERFLINK_SAMPLE_OUT=/dev/null", NULL };
	struct h_run r;

	shares_of_run("contended, task clock", "3", "--contended", "PERFLINK_SAMPLE_CLOCK=auto",
		      NULL, 2000);
	shares_of_run("PERFLINK_SAMPLE_CLOCK=timer", "3", NULL, "PERFLINK_SAMPLE_CLOCK=timer",
		      ", on the CPU-time timer (tick-checked)", 500);
	/* the task clock's event is a descriptor, which a daemon's close of
	 * every one it did not open must leave alone (own_fds.h) */
	snprintf(env_lib, sizeof(env_lib), "LD_PRELOAD=%s", preload_lib);
	TAP_OK(run(&r, "1", "--close-all", env) == 0 && r.status == 0 &&
		       strstr(r.out, "perf_event_after_close_all yes") != NULL,
	       "a program that closes every descriptor above stderr leaves the task clock open: %s",
	       h_oneline(r.out));
	h_run_free(&r);
	shares_of_run("closing every descriptor", "2", "--close-all", "PERFLINK_SAMPLE_CLOCK=auto",
		      NULL, 1500);
}

static void test_rotation(void)
{
	char out[300], env_lib[300], env_out[320], p[340];
	const char *env[] = { env_lib, "PERFLINK_SAMPLE=1", "PERFLINK_SAMPLE_HZ=997",
			      "PERFLINK_SAMPLE_WINDOW=1", "PERFLINK_SAMPLE_MAX_BYTES=1024",
			      "PERFLINK_SAMPLE_SIGNAL=KILL", env_out, NULL };
	const char *files[] = { "", ".1", ".folded", ".folded.1" };
	struct h_run r;
	size_t i;

	path_in(out, sizeof(out), "rot.txt");
	snprintf(env_lib, sizeof(env_lib), "LD_PRELOAD=%s", preload_lib);
	snprintf(env_out, sizeof(env_out), "PERFLINK_SAMPLE_OUT=%s", out);
	/* The report grows past 1 KiB in two or three windows; the folded
	 * stacks (two short lines a window) would take many, so that file
	 * starts nearly full, beside a stale .1 that must be replaced. */
	{
		char seed[1024] = "";

		while (strlen(seed) + 14 < 1000)
			strcat(seed, "seed;frame 1\n");
		snprintf(p, sizeof(p), "%s.folded", out);
		if (h_write_file(p, seed) < 0)
			abort();
		snprintf(p, sizeof(p), "%s.folded.1", out);
		if (h_write_file(p, "stale 1\n") < 0)
			abort();
	}
	TAP_OK(run(&r, "3", NULL, env) == 0 && r.status == 0, "renderer runs with a 1 KiB cap");
	TAP_EQ_U64(h_count(r.err, "PERFLINK_SAMPLE_SIGNAL='KILL'"), 1,
		   "a bad signal is said once and SIGPROF used");
	h_run_free(&r);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		long n;
		char *text;

		snprintf(p, sizeof(p), "%s%s", out, files[i]);
		n = file_size(p);
		TAP_OK(n > 0 && n <= 1024, "rot.txt%s exists within the cap: %ld bytes", files[i], n);
		text = test_read_file(p);
		if (text && i < 2) {
			struct window w;

			TAP_OK(strncmp(text, "==== ", 5) == 0, "rot.txt%s starts with a window", files[i]);
			parse_window(text, &w);
			TAP_OK(w.bad_lines == 0, "rot.txt%s in the window format (first bad: '%s')",
			       files[i], w.first_bad);
		}
		if (text && i >= 2) {
			char *save = NULL, *line;
			unsigned bad = 0;

			for (line = strtok_r(text, "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save))
				bad += !matches(FOLDED_RE, line) || strncmp(line, "stale", 5) == 0;
			TAP_EQ_U64(bad, 0, i == 3 ? "rot.txt.folded.1 replaced the previous .1"
					     : "rot.txt.folded holds folded lines");
		}
		free(text);
	}
}

static void test_own_handler(void)
{
	char out[300], env_lib[300], env_out[320];
	const char *env[] = { env_lib, "PERFLINK_SAMPLE=1", env_out, NULL };
	struct h_run r;

	path_in(out, sizeof(out), "own.txt");
	snprintf(env_lib, sizeof(env_lib), "LD_PRELOAD=%s", preload_lib);
	snprintf(env_out, sizeof(env_out), "PERFLINK_SAMPLE_OUT=%s", out);
	TAP_OK(run(&r, "1", "--own-handler", env) == 0 && r.status == 0,
	       "a program with its own SIGPROF handler runs");
	TAP_EQ_U64(h_count(r.err, "handles signal"), 1, "the sampler says once that it stays off");
	TAP_OK(!h_exists(out), "and writes no report");
	h_run_free(&r);
}

static void test_named_thread(void)
{
	char out[300], folded[320], env_lib[300], env_out[320];
	const char *env[] = { env_lib, "PERFLINK_SAMPLE=1", "PERFLINK_SAMPLE_HZ=997",
			      "PERFLINK_SAMPLE_THREAD=worker", env_out, NULL };
	struct h_run r;
	char *text;

	path_in(out, sizeof(out), "named.txt");
	snprintf(env_lib, sizeof(env_lib), "LD_PRELOAD=%s", preload_lib);
	snprintf(env_out, sizeof(env_out), "PERFLINK_SAMPLE_OUT=%s", out);
	TAP_OK(run(&r, "1", NULL, env) == 0 && r.status == 0, "renderer runs, sampling 'worker'");
	h_run_free(&r);
	text = test_read_file(out);
	TAP_OK(text && !strstr(text, "hot_a") && !strstr(text, "render_stats"),
	       "PERFLINK_SAMPLE_THREAD samples that thread, not the one that swaps");
	free(text);
	/* a thread that never swapped: its stack is copied through
	 * process_vm_readv (no bounds taken on it), and walked whole */
	snprintf(folded, sizeof(folded), "%s.folded", out);
	text = test_read_file(folded);
	TAP_OK(text && strstr(text, "start_thread;worker_main"),
	       "its stacks are walked from the thread's start to the worker's loop");
	free(text);
}

/* The render thread becomes known at its first swap; the sampler arms its
 * timer then, not at its thread's next 0.1 s tick (the first frames would
 * go unsampled). The renderer watches /proc/self/timers after its first
 * frame. */
static void test_arming(void)
{
	char out[300], env_lib[300], env_out[320];
	const char *env[] = { env_lib, "PERFLINK_SAMPLE=1", "PERFLINK_SAMPLE_HZ=997", env_out, NULL };
	struct h_run r;
	const char *armed;
	double ms = -1;

	path_in(out, sizeof(out), "arming.txt");
	snprintf(env_lib, sizeof(env_lib), "LD_PRELOAD=%s", preload_lib);
	snprintf(env_out, sizeof(env_out), "PERFLINK_SAMPLE_OUT=%s", out);
	TAP_OK(run(&r, "0.1", "--probe-arming", env) == 0 && r.status == 0,
	       "renderer runs, watching for the sampler's clock");
	armed = strstr(r.out, "armed_ms ");
	if (armed && strncmp(armed, "armed_ms unknown", 16) == 0) {
		TAP_SKIP("no perf event and no /proc/self/timers (CONFIG_CHECKPOINT_RESTORE)");
	} else {
		if (armed)
			sscanf(armed, "armed_ms %lf", &ms);
		TAP_OK(ms >= 0 && ms <= 15.0,
		       "the sampling clock is armed within 15 ms of the first swap: %s", h_oneline(r.out));
	}
	h_run_free(&r);
}

/* Sampling asked for, nothing to sample: a program that never swaps (or
 * reaches its swap past the hook) gets one message after 10 s saying what to
 * do, and one naming a PERFLINK_SAMPLE_THREAD that never appears. */
static void test_no_render_thread(void)
{
	char env_lib[300];
	const char *env[] = { env_lib, "PERFLINK_SAMPLE=1", "PERFLINK_SAMPLE_OUT=/dev/null", NULL };
	const char *env_named[] = { env_lib, "PERFLINK_SAMPLE=1", "PERFLINK_SAMPLE_OUT=/dev/null",
				    "PERFLINK_SAMPLE_THREAD=no-such-thread", NULL };
	char *sleep_argv[] = { "/bin/sleep", "11", NULL };
	struct h_run r;

	snprintf(env_lib, sizeof(env_lib), "LD_PRELOAD=%s", preload_lib);
	TAP_OK(h_run(&r, sleep_argv, env) == 0 && r.status == 0 &&
		       h_count(r.err, "saw no frame swap") == 1 &&
		       h_count(r.err, "PERFLINK_SAMPLE_THREAD") == 1,
	       "a program that never swaps: one message after 10 s, naming PERFLINK_SAMPLE_THREAD: %s",
	       h_oneline(r.err));
	h_run_free(&r);
	TAP_OK(h_run(&r, sleep_argv, env_named) == 0 && r.status == 0 &&
		       h_count(r.err, "no thread named 'no-such-thread'") == 1,
	       "a thread name that never appears: one message naming it: %s", h_oneline(r.err));
	h_run_free(&r);
}

static void test_no_out(void)
{
	char env_lib[300];
	const char *env[] = { env_lib, "PERFLINK_SAMPLE=1", NULL };
	struct h_run r;

	snprintf(env_lib, sizeof(env_lib), "LD_PRELOAD=%s", preload_lib);
	TAP_OK(run(&r, "0.3", NULL, env) == 0 && r.status == 0 &&
	       h_count(r.err, "without PERFLINK_SAMPLE_OUT") == 1,
	       "PERFLINK_SAMPLE=1 without a file: one message, the program runs");
	h_run_free(&r);
}

/* What the shim loads (sampler/sampler_module.h): libunwind, libdw and the
 * sampler module only when the sampler is on; dormant or only profiling,
 * none of them. A shim whose module is missing says so once, and the
 * program runs. */
static void test_loads_only_when_on(void)
{
	char env_lib[300], lone[300], env_lone[400], *argv[] = { (char *)"/bin/cat",
								 (char *)"/proc/self/maps", NULL };
	const char *dormant[] = { env_lib, NULL };
	const char *profiling[] = { env_lib, "PERFLINK_PROFILE=1", "PERFLINK_PROFILE_SYSLOG=off",
				    NULL };
	const char *sampling[] = { env_lib, "PERFLINK_SAMPLE=1", "PERFLINK_SAMPLE_OUT=/dev/null",
				   NULL };
	const char *lone_env[] = { env_lone, "PERFLINK_SAMPLE=1", "PERFLINK_SAMPLE_OUT=/dev/null",
				   NULL };
	struct h_run r;

	snprintf(env_lib, sizeof(env_lib), "LD_PRELOAD=%s", preload_lib);
	TAP_OK(h_run(&r, argv, dormant) == 0 && r.status == 0 && strstr(r.out, "libperflink-preload") &&
		       !strstr(r.out, "libunwind") && !strstr(r.out, "libdw") &&
		       !strstr(r.out, "libperflink-sampler"),
	       "dormant: the shim is loaded, libunwind, libdw and the sampler module are not");
	h_run_free(&r);
	TAP_OK(h_run(&r, argv, profiling) == 0 && r.status == 0 && !strstr(r.out, "libunwind") &&
		       !strstr(r.out, "libdw") && !strstr(r.out, "libperflink-sampler"),
	       "profiling only: none of them either");
	h_run_free(&r);
	TAP_OK(h_run(&r, argv, sampling) == 0 && r.status == 0 && strstr(r.out, "libunwind") &&
		       strstr(r.out, "libperflink-sampler"),
	       "PERFLINK_SAMPLE=1: the sampler module and libunwind are loaded");
	h_run_free(&r);

	/* the shim alone in a directory of its own */
	path_in(lone, sizeof(lone), "libperflink-preload.so");
	snprintf(env_lone, sizeof(env_lone), "LD_PRELOAD=%s", lone);
	{
		char cmd[700];

		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", preload_lib, lone);
		TAP_OK(system(cmd) == 0, "a copy of the shim without its module");
	}
	TAP_OK(run(&r, "0.3", NULL, lone_env) == 0 && r.status == 0 &&
		       h_count(r.err, "cannot load the sampler") == 1,
	       "its module missing: said once, the program runs: %s", h_oneline(r.err));
	h_run_free(&r);
	unlink(lone);
}

int main(int argc, char **argv)
{
	char env_lib[300];
	const char *env[] = { env_lib, "PERFLINK_SAMPLE=1", "PERFLINK_SAMPLE_OUT=/dev/null", NULL };
	struct h_run r;

	preload_lib = getenv("PL_PRELOAD_LIB");
	if (argc < 2 || !preload_lib) {
		printf("Bail out! usage: PL_PRELOAD_LIB=... test_sampler RENDERER\n");
		return 1;
	}
	renderer = argv[1];
	snprintf(env_lib, sizeof(env_lib), "LD_PRELOAD=%s", preload_lib);
	if (run(&r, "0.1", NULL, env) == 0 && strstr(r.err, "no libunwind")) {
		printf("1..0 # SKIP built without libunwind: %s\n", h_oneline(r.err));
		h_run_free(&r);
		return 0;
	}
	h_run_free(&r);
	if (h_tempdir(dir, sizeof(dir), "sampler") < 0) {
		printf("Bail out! no temporary directory\n");
		return 1;
	}
	test_bare();
	test_loads_only_when_on();
	test_no_out();
	test_no_render_thread();
	test_own_handler();
	test_shares();
	test_clock();
	test_rotation();
	test_named_thread();
	test_arming();
	h_rmdir(dir);
	return tap_done();
}
