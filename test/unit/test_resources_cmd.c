/* `perflink resources` end to end: the real binary (argv[1]) runs a real
 * workload under `-- sh -c '...'` for a little over two seconds: a busy
 * shell loop (its CPU ticks must grow) two levels below the command, and a
 * process with three named threads (this test binary, run with
 * --threads-workload). Then resources.jsonl is read back and checked
 * against this machine's own /proc and sysconf. Also: the exit status,
 * --help, --samples, SIGTERM, and bad invocations. */
#include "read_file.h"
#include "tap.h"
#include "test_resources_jsonl.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *perflink;
static char self_exe[4096];
static char tmpdir[] = "/tmp/pl-rescmd-XXXXXX";

/* --threads-workload SECONDS: three named threads that wake every 10 ms. */
static double workload_s;

static void *nap_thread(void *arg)
{
	char name[16];
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	double t;

	snprintf(name, sizeof(name), "pl-t%ld", (long)(intptr_t)arg);
	prctl(PR_SET_NAME, name);
	for (t = 0; t < workload_s; t += 0.01)
		nanosleep(&ts, NULL);
	return NULL;
}

static int threads_workload(double seconds)
{
	pthread_t t[3];
	long i;

	workload_s = seconds;
	prctl(PR_SET_NAME, "pl-threads");
	for (i = 0; i < 3; i++) {
		if (pthread_create(&t[i], NULL, nap_thread, (void *)(intptr_t)i) != 0)
			return 1;
	}
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* Run argv, stdout into out (if not NULL), return the exit status as a
 * shell reports it (128 + N for signal N), or -1. */
static int run(char *const argv[], char *out, size_t out_len)
{
	int pipefd[2], status;
	size_t have = 0;
	pid_t pid;

	if (pipe(pipefd) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], 1);
		close(pipefd[0]);
		close(pipefd[1]);
		execv(argv[0], argv);
		_exit(126);
	}
	close(pipefd[1]);
	for (;;) {
		char tmp[4096];
		ssize_t n = read(pipefd[0], tmp, sizeof(tmp));

		if (n <= 0)
			break;
		if (out && have + (size_t)n < out_len) {
			memcpy(out + have, tmp, (size_t)n);
			have += (size_t)n;
		}
	}
	if (out)
		out[have] = '\0';
	close(pipefd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

/* A file that is not there reads as empty: the checks then count no lines. */
static char *slurp(const char *path)
{
	char *text = test_read_file(path);

	return text ? text : strdup("");
}

static long read_sysctl(const char *path, bool *present)
{
	char *s = slurp(path);
	long v = strtol(s, NULL, 10);

	*present = access(path, F_OK) == 0;
	free(s);
	return v;
}

static void test_help(void)
{
	static const char *const flags[] = { "--out", "--pids", "--names", "--interval",
					     "--pss-interval", "--threads", "--proc-root",
					     "--samples", "--verbose", "--help" };
	char out[16384], path[256], pidarg[16], *line, *next;
	char *argv_help[] = { (char *)perflink, "resources", "--help", NULL };
	size_t i;
	int listed = 0;

	TAP_EQ_U64(run(argv_help, out, sizeof(out)), 0, "--help exits 0");
	for (i = 0; i + 1 < sizeof(flags) / sizeof(flags[0]); i++)
		TAP_OK(strstr(out, flags[i]) != NULL, "--help lists %s", flags[i]);
	/* Every flag --help shows is one this list knows, so that the run
	 * below, which passes all of them, proves each is accepted. */
	for (line = out; line && *line; line = next) {
		char flag[64];

		next = strchr(line, '\n');
		if (next)
			next++;
		if (sscanf(line, "  %63[-a-z]", flag) != 1 || strncmp(flag, "--", 2) != 0)
			continue;
		listed++;
		for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
			if (strcmp(flag, flags[i]) == 0)
				break;
		}
		TAP_OK(i < sizeof(flags) / sizeof(flags[0]), "%s is exercised here", flag);
	}
	TAP_EQ_U64(listed, 9, "nine flags listed");

	snprintf(path, sizeof(path), "%s/all.jsonl", tmpdir);
	snprintf(pidarg, sizeof(pidarg), "%d", (int)getpid());
	{
		char *argv[] = { (char *)perflink, "resources", "--out", path, "--pids", pidarg,
				 "--names", "no-such-comm", "--interval", "0.05", "--pss-interval",
				 "0.05", "--threads=no", "--proc-root", "/proc", "--samples", "2",
				 "--verbose", NULL };
		struct jl_lines l;
		char *text;

		TAP_EQ_U64(run(argv, NULL, 0), 0, "every flag at once is accepted, exits 0");
		text = slurp(path);
		jl_lines_parse(&l, text);
		TAP_OK(l.all_ok && l.n == 3, "--samples 2: header and two samples (%zu lines)",
		       l.n);
		TAP_OK(l.n == 3 && jl_u64(&l.doc[2], "procs.0.pid") == (uint64_t)getpid(),
		       "--pids sampled this test");
		TAP_OK(l.n == 3 && !jl_has(&l.doc[2], "procs.0.threads"), "--threads=no honoured");
		TAP_OK(l.n == 3 && jl_has(&l.doc[1], "procs.0.pss_kb.Pss"),
		       "PSS on the first sample");
		jl_lines_free(&l);
		free(text);
	}
}

static void test_invocations(void)
{
	char path[256];
	char *no_sel[] = { (char *)perflink, "resources", "--out", path, NULL };
	char *bad_flag[] = { (char *)perflink, "resources", "--no-such-flag", "--", "true", NULL };
	char *bad_val[] = { (char *)perflink, "resources", "--interval", "0", "--", "true", NULL };
	char *no_exec[] = { (char *)perflink, "resources", "--out", path, "--",
			    "/nonexistent/program", NULL };
	char *killed[] = { (char *)perflink, "resources", "--out", path, "--", "/bin/sh", "-c",
			   "kill -TERM $$", NULL };
	char *exit3[] = { (char *)perflink, "resources", "--out", path, "--", "/bin/sh", "-c",
			  "exit 3", NULL };

	snprintf(path, sizeof(path), "%s/inv.jsonl", tmpdir);
	TAP_EQ_U64(run(no_sel, NULL, 0), 2, "nothing to sample: usage error 2");
	TAP_EQ_U64(run(bad_flag, NULL, 0), 2, "unknown flag: 2");
	TAP_EQ_U64(run(bad_val, NULL, 0), 2, "--interval 0: 2");
	TAP_EQ_U64(run(no_exec, NULL, 0), 127, "a command that cannot run: 127");
	TAP_EQ_U64(run(killed, NULL, 0), 128 + SIGTERM, "a command killed by SIGTERM: 143");
	TAP_EQ_U64(run(exit3, NULL, 0), 3, "the command's exit status is perflink's");
}

static void test_sigterm(void)
{
	char path[256], pidarg[16];
	struct jl_lines l;
	char *text;
	int status = -1, i;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/term.jsonl", tmpdir);
	snprintf(pidarg, sizeof(pidarg), "%d", (int)getpid());
	pid = fork();
	if (pid == 0) {
		execl(perflink, perflink, "resources", "--out", path, "--pids", pidarg,
		      "--interval", "0.05", (char *)NULL);
		_exit(126);
	}
	/* Wait for three lines on disk (flushed each tick), then stop it. */
	for (i = 0; i < 400; i++) {
		size_t lines;

		text = slurp(path);
		jl_lines_parse(&l, text);
		free(text);
		lines = l.n;
		jl_lines_free(&l);
		if (lines >= 3)
			break;
		usleep(10000);
	}
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	TAP_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "without a command, SIGTERM ends it with 0");
	text = slurp(path);
	jl_lines_parse(&l, text);
	TAP_OK(l.all_ok && l.n >= 3, "lines written before the signal are whole (%zu)", l.n);
	jl_lines_free(&l);
	free(text);
}

/* Sum of utime and stime of pid in a sample, or JL_MISSING. */
static uint64_t cpu_ticks(const struct jl_doc *d, const char *pid)
{
	int i = jl_index(d, "procs", "pid", pid);
	uint64_t u, s;

	if (i < 0)
		return JL_MISSING;
	u = jl_u64(d, "procs.%d.utime_ticks", i);
	s = jl_u64(d, "procs.%d.stime_ticks", i);
	return u == JL_MISSING || s == JL_MISSING ? JL_MISSING : u + s;
}

static void test_workload(void)
{
	char path[256], script[512], busy_pid[16] = "", thr_pid[16] = "";
	struct utsname u;
	struct jl_lines l;
	const struct jl_doc *h;
	bool present;
	size_t i, samples, pss_samples = 0, since_pss = 0, min_gap = 1000;
	uint64_t first_ticks = JL_MISSING, last_ticks = 0, first_mono = 0, last_mono = 0;
	unsigned increases = 0, steps = 0, thread_ok = 0, pss_ok = 0, pss_bad = 0;
	char *text;
	int rc;

	snprintf(path, sizeof(path), "%s/resources.jsonl", tmpdir);
	snprintf(script, sizeof(script),
		 "\"$0\" --threads-workload 2.2 & timeout 2.2 sh -c 'while :; do :; done'; "
		 "wait; exit 7");
	{
		char *argv[] = { (char *)perflink, "resources", "--out", path, "--interval", "0.25",
				 "--pss-interval", "1", "--", "/bin/sh", "-c", script, self_exe,
				 NULL };

		rc = run(argv, NULL, 0);
	}
	TAP_EQ_U64(rc, 7, "perflink exits with the command's status");
	text = slurp(path);
	jl_lines_parse(&l, text);
	free(text);
	TAP_OK(l.all_ok, "every line is a JSON object ending in a newline");
	TAP_OK(l.n >= 8, "header and samples (%zu lines)", l.n);
	if (l.n < 3) {
		jl_lines_free(&l);
		return;
	}

	/* The header against this machine. */
	h = &l.doc[0];
	TAP_EQ_STR(jl_str(h, "type"), "header", "first line: header");
	TAP_EQ_U64(jl_u64(h, "clk_tck"), (uint64_t)sysconf(_SC_CLK_TCK), "clk_tck");
	TAP_EQ_U64(jl_u64(h, "page_size"), (uint64_t)sysconf(_SC_PAGESIZE), "page_size");
	TAP_EQ_U64(jl_u64(h, "ncpu_online"), (uint64_t)sysconf(_SC_NPROCESSORS_ONLN), "CPUs");
	TAP_OK(uname(&u) == 0 && jl_str(h, "kernel_release") &&
		       strcmp(jl_str(h, "kernel_release"), u.release) == 0,
	       "kernel release");
	TAP_EQ_STR(jl_str(h, "smaps_rollup"),
		   access("/proc/self/smaps_rollup", F_OK) == 0 ? "true" : "false",
		   "smaps_rollup as this kernel has it");
	TAP_EQ_U64(jl_u64(h, "sysctl.vm.min_free_kbytes"),
		   (uint64_t)read_sysctl("/proc/sys/vm/min_free_kbytes", &present),
		   "vm.min_free_kbytes");
	TAP_EQ_U64(jl_u64(h, "sysctl.vm.dirty_ratio"),
		   (uint64_t)read_sysctl("/proc/sys/vm/dirty_ratio", &present), "vm.dirty_ratio");
	TAP_EQ_U64(jl_u64(h, "sysctl.vm.dirty_writeback_centisecs"),
		   (uint64_t)read_sysctl("/proc/sys/vm/dirty_writeback_centisecs", &present),
		   "vm.dirty_writeback_centisecs");
	{
		long v = read_sysctl("/proc/sys/vm/extra_free_kbytes", &present);
		const struct jl_kv *kv = jl_find(h, "sysctl.vm.extra_free_kbytes");

		TAP_OK(kv && (present ? strtol(kv->value, NULL, 10) == v
				      : kv->kind == PL_JSON_NULL),
		       "vm.extra_free_kbytes: value or explicit null (%s here)",
		       present ? "present" : "absent");
		/* The tracer's tests may switch delay accounting on and off
		 * while this runs: its value is 0 or 1, not a fixed one. */
		read_sysctl("/proc/sys/kernel/task_delayacct", &present);
		kv = jl_find(h, "sysctl.kernel.task_delayacct");
		TAP_OK(kv && (present ? kv->kind == PL_JSON_NUMBER &&
						(strcmp(kv->value, "0") == 0 ||
						 strcmp(kv->value, "1") == 0)
				      : kv->kind == PL_JSON_NULL),
		       "kernel.task_delayacct: 0/1 or explicit null (%s here)",
		       present ? "present" : "absent");
	}
	TAP_OK(jl_u64(h, "selection.roots.0") != JL_MISSING, "the command is the root");

	/* Find the busy shell (child of timeout) and the threaded process in
	 * the middle of the run. */
	{
		const struct jl_doc *mid = &l.doc[l.n / 2];
		size_t n = jl_len(mid, "procs");

		for (i = 0; i < n; i++) {
			const char *comm = jl_str(mid, "procs.%zu.comm", i);
			const char *pid = jl_str(mid, "procs.%zu.pid", i);
			const char *ppid = jl_str(mid, "procs.%zu.ppid", i);
			int parent = ppid ? jl_index(mid, "procs", "pid", ppid) : -1;
			const char *pcomm =
				parent >= 0 ? jl_str(mid, "procs.%d.comm", parent) : NULL;

			if (comm && pid && strcmp(comm, "sh") == 0 && pcomm &&
			    strcmp(pcomm, "timeout") == 0)
				snprintf(busy_pid, sizeof(busy_pid), "%s", pid);
			if (comm && pid && strcmp(comm, "pl-threads") == 0)
				snprintf(thr_pid, sizeof(thr_pid), "%s", pid);
		}
	}
	TAP_OK(busy_pid[0] != '\0', "the busy shell two levels down is sampled (pid %s)", busy_pid);
	TAP_OK(thr_pid[0] != '\0', "the threaded process is sampled (pid %s)", thr_pid);

	samples = 0;
	for (i = 1; i < l.n; i++) {
		const struct jl_doc *d = &l.doc[i];
		uint64_t ticks = cpu_ticks(d, busy_pid), mono = jl_u64(d, "mono_ns");
		bool pss = jl_str(d, "pss") && strcmp(jl_str(d, "pss"), "true") == 0;
		size_t p, np = jl_len(d, "procs");
		int t;

		if (!jl_str(d, "type") || strcmp(jl_str(d, "type"), "sample") != 0)
			continue;
		samples++;
		TAP_OK(jl_double(d, "sampler_ms") >= 0 && mono != JL_MISSING &&
			       jl_u64(d, "wall_ns") != JL_MISSING && mono > last_mono,
		       "sample %zu: sampler_ms, increasing mono_ns, wall_ns", i);
		last_mono = mono;
		if (ticks != JL_MISSING) {
			if (first_ticks == JL_MISSING) {
				first_ticks = ticks;
				first_mono = mono;
			} else {
				steps++;
				increases += ticks > last_ticks;
				TAP_OK(ticks >= last_ticks, "busy shell's ticks never go back");
			}
			last_ticks = ticks;
		}
		t = thr_pid[0] ? jl_index(d, "procs", "pid", thr_pid) : -1;
		if (t >= 0) {
			char path_t[64];
			int k, named = 0;

			snprintf(path_t, sizeof(path_t), "procs.%d.threads", t);
			for (k = 0; k < (int)jl_len(d, path_t); k++) {
				const char *c = jl_str(d, "%s.%d.comm", path_t, k);

				/* pl-t0, pl-t1, pl-t2; not the main pl-threads */
				if (c && strncmp(c, "pl-t", 4) == 0 && strlen(c) == 5 &&
				    jl_u64(d, "%s.%d.vcsw", path_t, k) != JL_MISSING &&
				    (access("/proc/self/schedstat", F_OK) != 0 ||
				     jl_u64(d, "%s.%d.run_ns", path_t, k) != JL_MISSING))
					named++;
			}
			if (named == 3 && jl_len(d, path_t) == 4)
				thread_ok++;
		}
		if (pss) {
			pss_samples++;
			if (pss_samples > 1 && since_pss < min_gap)
				min_gap = since_pss;
			since_pss = 0;
		} else {
			since_pss++;
		}
		for (p = 0; p < np; p++) {
			const char *state = jl_str(d, "procs.%zu.state", p);
			bool zombie = state && strcmp(state, "Z") == 0;
			bool has = jl_has(d, "procs.%zu.pss_kb", p);

			if (pss && !zombie && jl_u64(d, "procs.%zu.pss_kb.Pss", p) != JL_MISSING &&
			    jl_u64(d, "procs.%zu.pss_kb.Pss", p) > 0)
				pss_ok++;
			if (!pss && has)
				pss_bad++;
		}
	}
	TAP_OK(samples >= 7, "about four samples a second for 2.2 s (%zu)", samples);
	TAP_OK(steps >= 4 && increases * 2 >= steps,
	       "the busy shell's CPU ticks grow (%u of %u intervals)", increases, steps);
	if (last_mono > first_mono && last_ticks > first_ticks) {
		double cores = (double)(last_ticks - first_ticks) / (double)sysconf(_SC_CLK_TCK) /
			       ((double)(last_mono - first_mono) / 1e9);

		TAP_OK(cores > 0 && cores <= 1.1,
		       "ticks / clk_tck / elapsed mono = %.2f of one core (one thread: at most 1)",
		       cores);
	} else {
		TAP_OK(0, "no CPU tick growth to convert");
	}
	TAP_OK(thread_ok >= 1, "the threaded process listed with its 4 threads, named, with "
			       "schedstat and context switches (%u samples)", thread_ok);
	TAP_OK(pss_samples >= 2 && pss_samples <= 4, "PSS on a 1 s cadence: %zu PSS samples",
	       pss_samples);
	TAP_OK(pss_samples >= 2 && min_gap >= 2, "PSS samples at least 3 ticks apart (gap %zu)",
	       min_gap);
	TAP_OK(pss_ok >= 2 * pss_samples, "PSS numbers for the processes on those samples (%u)",
	       pss_ok);
	TAP_EQ_U64(pss_bad, 0, "no PSS fields on the other samples");
	{
		/* the exit shows in whichever sample came first after it; how
		 * many samples follow depends on how fast the command winds
		 * down (much slower under the sanitizers) */
		int exited_at = -1;

		for (i = 1; i < l.n && exited_at < 0; i++) {
			if (jl_index(&l.doc[i], "exited", "pid", busy_pid) >= 0)
				exited_at = (int)i;
		}
		TAP_OK(exited_at > 0, "the busy shell's exit is reported (sample %d)", exited_at);
		TAP_EQ_U64(jl_len(&l.doc[l.n - 1], "procs"), 0, "nothing left at the end");
	}
	jl_lines_free(&l);
}

int main(int argc, char **argv)
{
	ssize_t n;
	char cmd[300];

	if (argc >= 3 && strcmp(argv[1], "--threads-workload") == 0)
		return threads_workload(strtod(argv[2], NULL));
	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH-TO-PERFLINK\n", argv[0]);
		return 2;
	}
	perflink = argv[1];
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0 || !mkdtemp(tmpdir)) {
		printf("Bail out! no /proc/self/exe or temporary directory\n");
		return 1;
	}
	self_exe[n] = '\0';
	test_help();
	test_invocations();
	test_sigterm();
	test_workload();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	return tap_done();
}
