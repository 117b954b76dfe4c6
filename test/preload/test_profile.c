/* The stage profiler end to end: test/preload/workload issues real ioctls
 * under libperflink-preload.so, and the reports it leaves are checked
 * against what the workload is known to have done.
 *
 * Environment (set by meson): PL_PRELOAD_LIB, PL_WORKLOAD, PL_EARLY_LIB. */
#include "harness.h"
#include "read_file.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SKIP_STATUS 77
#define MIB (1024u * 1024u)

static const char *shim, *workload, *early;
static char dir[256];
static char stages_path[300], out_path[300];
static char env_preload[600], env_stages[400], env_out[400];

/* The stage file for these tests: codes from this ABI's headers, in both
 * of the forms the file accepts. */
static void write_stages(const char *boundary)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "# stages for the preload tests\n"
		 "stage pipe_peek   other  pipe:*                0x%lx\n"
		 "stage null_peek   other  /dev/null             0x%lx   # other device\n"
		 "stage notif_recv  wait   anon_inode:seccomp*   _IOWR('!', 0, %zu)\n"
		 "stage notif_send  submit anon_inode:seccomp*   0x%lx\n"
		 "stage uffd_copy   cache  anon_inode:*userfaultfd*  _IOWR(0xaa, %d, %zu) "
		 "cache-bytes=%zu:8\n"
		 "\n"
		 "frame-boundary %s\n",
		 (unsigned long)FIONREAD, (unsigned long)FIONREAD, sizeof(struct seccomp_notif),
		 (unsigned long)SECCOMP_IOCTL_NOTIF_SEND, _UFFDIO_COPY, sizeof(struct uffdio_copy),
		 offsetof(struct uffdio_copy, len), boundary);
	if (h_write_file(stages_path, text) < 0)
		abort();
}

/* Run the workload with profiling on. extra entries win over the standard
 * ones; a bare "KEY" (no '=') removes the standard KEY=... setting. */
static int profile(struct h_run *r, char *const argv[], const char *const *extra)
{
	const char *standard[] = { env_preload, "PERFLINK_PROFILE=1",
				   "PERFLINK_PROFILE_INTERVAL=25", "PERFLINK_PROFILE_SYSLOG=off",
				   env_stages, env_out, NULL };
	const char *env[24];
	int n = 0, i, k;

	for (k = 0; extra && extra[k] && n < 12; k++) {
		if (strchr(extra[k], '='))
			env[n++] = extra[k];
	}
	for (i = 0; standard[i]; i++) {
		size_t key = strcspn(standard[i], "=");
		bool overridden = false;

		for (k = 0; extra && extra[k]; k++) {
			if (strncmp(extra[k], standard[i], key) == 0 &&
			    (extra[k][key] == '=' || extra[k][key] == '\0'))
				overridden = true;
		}
		if (!overridden)
			env[n++] = standard[i];
	}
	env[n] = NULL;
	unlink(out_path);
	return h_run(r, argv, env);
}

static bool skipped(const struct h_run *r, const char *what)
{
	if (r->status != SKIP_STATUS)
		return false;
	h_diag(r->err);
	TAP_SKIP(what);
	return true;
}

static void test_counts(void)
{
	char *argv[] = { (char *)workload, "null", "30", "peek", "100", NULL };
	const struct h_report *last;
	struct h_reports rs;
	struct h_run r;
	size_t i;

	write_stages("pipe_peek");
	TAP_OK(profile(&r, argv, NULL) == 0 && r.status == 0, "counts: the workload succeeds (%s)",
	       h_oneline(r.err));
	TAP_EQ_STR(r.err, "", "counts: nothing on stderr");
	h_reports_load(&rs, out_path);
	TAP_OK(rs.all_ok && rs.n >= 1 && rs.n <= 4, "counts: 1 to 4 reports for 100 frames (%zu)",
	       rs.n);
	for (i = 0; i < rs.n; i++) {
		TAP_EQ_U64(h_u64(&rs.r[i], "report"), i + 1, "counts: reports are numbered from 1");
		TAP_EQ_STR(h_get(&rs.r[i], "type"), "perflink-profile", "counts: the record type");
	}
	last = h_last(&rs, 0);
	/* the 100th frame is the last call, so the last report sees everything */
	TAP_EQ_U64(h_u64(last, "frames"), 100, "counts: frames in the last report");
	TAP_EQ_U64(h_u64(last, "interval_frames"), 25, "counts: the interval");
	TAP_EQ_U64(h_stage_u64(last, "pipe_peek", "calls"), 100, "counts: pipe FIONREAD calls");
	TAP_EQ_U64(h_stage_u64(last, "pipe_peek", "errors"), 0, "counts: no errors on the pipe");
	TAP_EQ_U64(h_stage_u64(last, "null_peek", "calls"), 30,
		   "counts: /dev/null FIONREAD is its own stage (same code, other device)");
	TAP_EQ_U64(h_stage_u64(last, "null_peek", "errors"), 30,
		   "counts: ENOTTY counts as an error, not a retry");
	TAP_EQ_U64(h_stage_u64(last, "null_peek", "retries_eagain"), 0, "counts: no retries");
	TAP_EQ_STR(h_get(last, "stages.%d.kind", h_stage(last, "pipe_peek")), "other",
		   "counts: the kind from the stage file");
	TAP_EQ_U64(h_u64(last, "totals.calls"), 130, "counts: totals");
	TAP_EQ_U64(h_u64(last, "dropped_calls"), 0, "counts: nothing dropped");
	TAP_OK(h_stage(last, "v4l2_dqbuf") < 0, "counts: stages without calls are left out");
	TAP_OK(h_stage_u64(last, "pipe_peek", "wall_max_ns") >=
			       h_stage_u64(last, "pipe_peek", "wall_avg_ns") &&
		       h_stage_u64(last, "pipe_peek", "wall_avg_ns") ==
			       h_stage_u64(last, "pipe_peek", "wall_total_ns") / 100,
	       "counts: average and maximum are consistent with the total");
	h_reports_free(&rs);
	h_run_free(&r);
}

/* Blocking versus CPU-bound stages, byte extraction, call sites, retries. */
static void test_kinds(void)
{
	char bytes[32];
	char *argv[] = { (char *)workload, "copy", "15", "10", bytes, "eagain", "5",
			 "eintr", "3", "wait", "25", "20000", NULL };
	const struct h_report *last;
	uint64_t wall, cpu, calls;
	struct h_reports rs;
	struct h_run r;
	int st, i, a = -1, b = -1, p = -1;
	const char *mod;

	snprintf(bytes, sizeof(bytes), "%u", 8 * MIB);
	write_stages("notif_recv");
	TAP_OK(profile(&r, argv, NULL) == 0, "kinds: ran");
	if (skipped(&r, "kinds: this kernel lacks seccomp listeners or userfaultfd")) {
		h_run_free(&r);
		return;
	}
	TAP_OK(r.status == 0, "kinds: the workload succeeds (%s)", h_oneline(r.err));
	h_reports_load(&rs, out_path);
	last = h_last(&rs, 0);
	TAP_OK(last != NULL, "kinds: a report after 25 frames");
	TAP_EQ_U64(h_u64(last, "frames"), 25, "kinds: frames are the waits that succeeded");

	/* A wait sleeps in the kernel: its wall time is far above its CPU. */
	wall = h_stage_u64(last, "notif_recv", "wall_total_ns");
	cpu = h_stage_u64(last, "notif_recv", "cpu_total_ns");
	TAP_EQ_U64(h_stage_u64(last, "notif_recv", "calls"), 28,
		   "kinds: 25 waits and 3 interrupted");
	TAP_EQ_U64(h_stage_u64(last, "notif_recv", "retries_eintr"), 3, "kinds: EINTR retries");
	TAP_OK(wall != UINT64_MAX && wall >= 25ull * 20000 * 1000 * 9 / 10,
	       "kinds: the wait stage's wall time covers the 25 x 20 ms periods (%llu ns)",
	       (unsigned long long)wall);
	TAP_OK(cpu < wall / 20, "kinds: a blocking stage: CPU %llu ns is below 5%% of wall %llu ns",
	       (unsigned long long)cpu, (unsigned long long)wall);
	/* the report is taken after the 25th wait; the 25th answer may come after */
	calls = h_stage_u64(last, "notif_send", "calls");
	TAP_OK(calls == 24 || calls == 25, "kinds: the answers (submit), up to the last frame");

	/* A copy runs in the kernel without sleeping: CPU close to wall. */
	wall = h_stage_u64(last, "uffd_copy", "wall_total_ns");
	cpu = h_stage_u64(last, "uffd_copy", "cpu_total_ns");
	TAP_EQ_U64(h_stage_u64(last, "uffd_copy", "calls"), 30, "kinds: copies, partial ones too");
	TAP_EQ_U64(h_stage_u64(last, "uffd_copy", "retries_eagain"), 5, "kinds: EAGAIN retries");
	TAP_OK(cpu != UINT64_MAX && cpu > wall / 3,
	       "kinds: a CPU-bound stage: CPU %llu ns is most of wall %llu ns",
	       (unsigned long long)cpu, (unsigned long long)wall);
	TAP_EQ_U64(h_stage_u64(last, "uffd_copy", "cache_bytes"), 25ull * 8 * MIB,
		   "kinds: cache bytes from the argument (successful calls only)");
	TAP_EQ_U64(h_u64(last, "totals.cache_calls"), 30, "kinds: cache calls in the totals");

	/* The split by call site, named through the executable's symbols. */
	st = h_stage(last, "uffd_copy");
	for (i = 0; st >= 0 && i < 16; i++) {
		const char *site = h_get(last, "stages.%d.sites.%d.site", st, i);

		if (!site)
			break;
		if (strncmp(site, "copy_site_a+", 12) == 0)
			a = i;
		else if (strncmp(site, "copy_site_b+", 12) == 0)
			b = i;
		else if (strncmp(site, "copy_partial+", 13) == 0)
			p = i;
	}
	TAP_OK(a >= 0 && b >= 0 && p >= 0, "kinds: three call sites, named by symbol");
	calls = a >= 0 ? h_u64(last, "stages.%d.sites.%d.calls", st, a) : 0;
	TAP_EQ_U64(calls, 15, "kinds: calls from the first site");
	calls = b >= 0 ? h_u64(last, "stages.%d.sites.%d.calls", st, b) : 0;
	TAP_EQ_U64(calls, 10, "kinds: calls from the second site");
	TAP_EQ_U64(a >= 0 ? h_u64(last, "stages.%d.sites.%d.bytes", st, a) : 0, 15ull * 8 * MIB,
		   "kinds: bytes by site");
	mod = a >= 0 ? h_get(last, "stages.%d.sites.%d.module", st, a) : NULL;
	TAP_OK(mod && strstr(mod, "workload"), "kinds: the site's module is the executable (%s)",
	       mod ? mod : "none");
	TAP_OK(a < 0 || b < 0 || p < 0 || (a < p && b < p),
	       "kinds: sites are listed by CPU, the cheap partial copies last");
	TAP_OK(h_stage(last, "notif_recv") >= 0 &&
		       !h_get(last, "stages.%d.sites.0.site", h_stage(last, "notif_recv")),
	       "kinds: sites only for cache stages");
	h_reports_free(&rs);
	h_run_free(&r);
}

static void test_interval(void)
{
	char *argv60[] = { (char *)workload, "peek", "60", NULL };
	char *argv250[] = { (char *)workload, "peek", "250", NULL };
	const char *small[] = { "PERFLINK_PROFILE_INTERVAL=5", NULL };
	const char *bad[] = { "PERFLINK_PROFILE_INTERVAL=12x", NULL };
	const char *unset[] = { "PERFLINK_PROFILE_INTERVAL", NULL };
	const struct h_report *last;
	struct h_reports rs;
	struct h_run r;

	write_stages("pipe_peek");
	profile(&r, argv60, small);
	TAP_OK(r.status == 0, "interval: the workload succeeds");
	TAP_EQ_U64(h_count(r.err, "raised to 25"), 1, "interval: 5 is raised to 25, said once");
	h_reports_load(&rs, out_path);
	last = h_last(&rs, 0);
	TAP_EQ_U64(h_u64(last, "interval_frames"), 25, "interval: the report says 25");
	TAP_OK(rs.n >= 1 && rs.n <= 2, "interval: at most 2 reports in 60 frames (%zu)", rs.n);
	TAP_OK(h_u64(last, "frames") >= 50 && h_u64(last, "frames") <= 60,
	       "interval: the last report came at frame 50 or after");
	h_reports_free(&rs);
	h_run_free(&r);

	profile(&r, argv250, bad);
	TAP_OK(r.status == 0, "interval: a bad value does not stop the target");
	TAP_EQ_U64(h_count(r.err, "PERFLINK_PROFILE_INTERVAL='12x' is not a frame count"), 1,
		   "interval: a bad value is said once");
	h_reports_load(&rs, out_path);
	TAP_EQ_U64(rs.n, 1, "interval: the default 250: one report in 250 frames");
	TAP_EQ_U64(h_u64(h_last(&rs, 0), "interval_frames"), 250, "interval: the report says 250");
	h_reports_free(&rs);
	h_run_free(&r);

	/* "PERFLINK_PROFILE_INTERVAL" without '=' is no setting at all */
	profile(&r, argv250, unset);
	h_reports_load(&rs, out_path);
	TAP_OK(r.status == 0 && rs.n == 1 && r.err[0] == '\0',
	       "interval: unset is the default, silently");
	h_reports_free(&rs);
	h_run_free(&r);
}

static void test_fork(void)
{
	char *argv[] = { (char *)workload, "fork", "30", "50", "20", NULL };
	const struct h_report *parent, *child;
	unsigned long ppid = 0, cpid = 0;
	struct h_reports rs;
	struct h_run r;
	const char *p;

	write_stages("pipe_peek");
	profile(&r, argv, NULL);
	TAP_OK(r.status == 0, "fork: the workload succeeds (%s)", h_oneline(r.err));
	p = strstr(r.out, "pid ");
	if (p)
		ppid = strtoul(p + 4, NULL, 10);
	p = strstr(r.out, "child ");
	if (p)
		cpid = strtoul(p + 6, NULL, 10);
	TAP_OK(ppid && cpid && ppid != cpid, "fork: two processes");
	h_reports_load(&rs, out_path);
	parent = h_last(&rs, ppid);
	child = h_last(&rs, cpid);
	TAP_OK(parent && child, "fork: both report");
	TAP_EQ_U64(h_u64(child, "frames"), 50, "fork: the child counts its own frames from zero");
	TAP_EQ_U64(h_stage_u64(child, "pipe_peek", "calls"), 50,
		   "fork: the child's calls exclude the parent's");
	TAP_OK(h_u64(child, "report") >= 1 && h_u64(child, "report") <= 2,
	       "fork: the child numbers its reports from 1");
	TAP_EQ_U64(h_u64(parent, "frames"), 50, "fork: the parent's frames exclude the child's");
	TAP_EQ_U64(h_stage_u64(parent, "pipe_peek", "calls"), 50,
		   "fork: the parent's calls exclude the child's");
	TAP_OK(h_get(parent, "start_mono_ns") && h_get(child, "start_mono_ns") &&
		       strcmp(h_get(parent, "start_mono_ns"), h_get(child, "start_mono_ns")) != 0,
	       "fork: the child starts afresh");
	h_reports_free(&rs);
	h_run_free(&r);
}

static void test_threads(void)
{
	char *argv[] = { (char *)workload, "threads", "6", "50", NULL };
	const struct h_report *last;
	struct h_reports rs;
	struct h_run r;

	write_stages("pipe_peek");
	profile(&r, argv, NULL);
	TAP_OK(r.status == 0, "threads: the workload succeeds (%s)", h_oneline(r.err));
	h_reports_load(&rs, out_path);
	last = h_last(&rs, 0);
	TAP_EQ_U64(h_u64(last, "frames"), 600, "threads: frames from 12 threads in two waves");
	TAP_EQ_U64(h_stage_u64(last, "pipe_peek", "calls"), 600,
		   "threads: every thread's calls, exited threads included");
	TAP_EQ_U64(h_u64(last, "dropped_calls"), 0, "threads: nothing dropped");
	h_reports_free(&rs);
	h_run_free(&r);
}

static void test_exec(void)
{
	char *argv[] = { (char *)workload, "exec", "10", "50", NULL };
	const struct h_report *last;
	struct h_reports rs;
	struct h_run r;

	write_stages("pipe_peek");
	profile(&r, argv, NULL);
	TAP_OK(r.status == 0, "exec: the workload succeeds (%s)", h_oneline(r.err));
	TAP_EQ_U64(h_count(r.out, "pid "), 2, "exec: the program ran twice");
	h_reports_load(&rs, out_path);
	last = h_last(&rs, 0);
	TAP_EQ_U64(h_u64(last, "frames"), 50, "exec: the new image profiles, from the environment");
	TAP_EQ_U64(h_stage_u64(last, "pipe_peek", "calls"), 50,
		   "exec: nothing carried over from the old image");
	h_reports_free(&rs);
	h_run_free(&r);
}

static void test_syslog(void)
{
	char *argv[] = { (char *)workload, "peek", "25", NULL };
	char sock_path[300], env_sock[400], msg[2048];
	const char *extra[] = { env_sock, NULL };
	struct sockaddr_un addr;
	unsigned header = 0, stage = 0, totals = 0, others = 0;
	bool calls_ok = false;
	struct h_run r;
	int fd;
	ssize_t n;

	snprintf(sock_path, sizeof(sock_path), "%s/log.sock", dir);
	snprintf(env_sock, sizeof(env_sock), "PERFLINK_PROFILE_SYSLOG=%s", sock_path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	if (strlen(sock_path) >= sizeof(addr.sun_path)) {
		TAP_SKIP("syslog: the temporary directory's path is too long for a socket");
		close(fd);
		return;
	}
	memcpy(addr.sun_path, sock_path, strlen(sock_path) + 1);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		TAP_OK(0, "syslog: a socket to listen on");
		return;
	}
	write_stages("pipe_peek");
	profile(&r, argv, extra);
	TAP_OK(r.status == 0, "syslog: the workload succeeds (%s)", h_oneline(r.err));
	while ((n = recv(fd, msg, sizeof(msg) - 1, MSG_DONTWAIT)) > 0) {
		msg[n] = '\0';
		if (msg[0] != '<' || !strstr(msg, " perflink-profile[")) {
			others++;
			continue;
		}
		if (strstr(msg, " record=header "))
			header++;
		else if (strstr(msg, " record=totals "))
			totals++;
		else if (strstr(msg, " record=stage ")) {
			stage++;
			if (strstr(msg, " stage=pipe_peek ") && strstr(msg, " calls=25 ") &&
			    strstr(msg, " kind=other "))
				calls_ok = true;
		}
	}
	TAP_EQ_U64(header, 1, "syslog: one header record");
	TAP_EQ_U64(stage, 1, "syslog: one line per stage with calls");
	TAP_EQ_U64(totals, 1, "syslog: one totals record");
	TAP_EQ_U64(others, 0, "syslog: every datagram is a perflink-profile record");
	TAP_OK(calls_ok, "syslog: the stage line carries key=value fields");
	close(fd);
	unlink(sock_path);
	h_run_free(&r);
}

struct bad_case {
	const char *text;
	unsigned line;
	const char *what;
};

/* A shim that opened a FIFO for reading would wait for a writer in the
 * target's constructor: after 5 s this opens the other end, so that such a
 * shim goes on and the check on the elapsed time fails instead of the test
 * hanging. */
static volatile int fifo_done;

static void *fifo_writer(void *arg)
{
	const char *path = arg;

	for (int i = 0; i < 500 && !fifo_done; i++) {
		struct timespec nap = { 0, 10 * 1000 * 1000 };

		if (i >= 500 - 1) {
			int fd = open(path, O_WRONLY | O_NONBLOCK);

			if (fd >= 0)
				close(fd);
		}
		nanosleep(&nap, NULL);
	}
	return NULL;
}

static double seconds_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* PERFLINK_PROFILE_OUT a symbolic link (planted in a shared directory by
 * another user): the shim does not append through it, and says so once. */
static void test_out_planted_link(char *argv[])
{
	char victim[320], link[320], env_link[400];
	const char *extra[] = { env_link, NULL };
	struct h_run r;
	char *kept;

	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(link, sizeof(link), "%s/planted.jsonl", dir);
	snprintf(env_link, sizeof(env_link), "PERFLINK_PROFILE_OUT=%s", link);
	if (h_write_file(victim, "precious\n") < 0 || symlink(victim, link) < 0)
		abort();
	profile(&r, argv, extra);
	TAP_OK(r.status == 0 && strstr(r.out, "pid "), "PERFLINK_PROFILE_OUT a symbolic link: "
	       "the target runs");
	kept = test_read_file(victim);
	TAP_OK(kept && !strcmp(kept, "precious\n") && h_count(r.err, "cannot append a report") == 1,
	       "the file it points to is untouched, said once: %s", h_oneline(r.err));
	free(kept);
	h_run_free(&r);
	unlink(link);
	unlink(victim);
}

/* PERFLINK_STAGES naming a FIFO or a directory: refused at once, one
 * message, the target runs and the shim stays dormant. */
static void test_stages_not_regular(char *argv[])
{
	char fifo[320], env_fifo[400], env_dir[400];
	const char *kinds[] = { "a FIFO", "a directory" };
	struct h_run r;

	snprintf(fifo, sizeof(fifo), "%s/stages.fifo", dir);
	if (mkfifo(fifo, 0600) < 0)
		abort();
	snprintf(env_fifo, sizeof(env_fifo), "PERFLINK_STAGES=%s", fifo);
	snprintf(env_dir, sizeof(env_dir), "PERFLINK_STAGES=%s", dir);
	for (int k = 0; k < 2; k++) {
		const char *extra[] = { k ? env_dir : env_fifo, NULL };
		pthread_t t;
		double t0 = seconds_now(), took;

		fifo_done = 0;
		pthread_create(&t, NULL, fifo_writer, fifo);
		profile(&r, argv, extra);
		took = seconds_now() - t0;
		fifo_done = 1;
		pthread_join(t, NULL);
		TAP_OK(r.status == 0 && strstr(r.out, "pid ") && took < 4.0,
		       "PERFLINK_STAGES naming %s: the target runs at once (%.2f s)", kinds[k], took);
		TAP_OK(strstr(r.err, "not a regular file") && strstr(r.err, "profiling stays off") &&
			       h_count(r.err, "\n") == 1 && !h_exists(out_path),
		       "PERFLINK_STAGES naming %s: one message, and dormant", kinds[k]);
		h_run_free(&r);
	}
	unlink(fifo);
}

static void test_bad_config(void)
{
	static const struct bad_case cases[] = {
		{ "stage a other * 0x1\nstage b sometimes * 0x2\n", 2, "unknown kind" },
		{ "# c\n\nstage a other * 0xnope\n", 3, "bad request" },
		{ "stage a other * _IOWR('q', 300, 4)\n", 1, "bad request" },
		{ "stage a other * 0x1 cache-bytes=4:4\n", 1, "cache-bytes is for stages" },
		{ "stage a cache * 0x1 cache-bytes=4:3\n", 1, "OFFSET:WIDTH" },
		{ "stage a cache * 0x1 fast\n", 1, "unknown option" },
		{ "stage a other * 0x1\nstage a wait * 0x2\n", 2, "declared with kind" },
		{ "stage a other * 0x1\nstage b other * 0x1\n", 2, "already stage" },
		{ "stage a other *\n", 1, "expected: stage" },
		{ "stages a other * 0x1\n", 1, "unknown directive" },
		{ "stage a other * 0x1\nframe-boundary nosuch\n", 2, "names no stage" },
		{ "stage this_name_is_far_too_long_for_a_stage other * 0x1\n", 1,
		  "bad stage name" },
		{ "# a built-in name with another kind\n\nstage v4l2_dqbuf wait * 0x1\n", 3,
		  "is built in, with kind dequeue" },
	};
	char *argv[] = { (char *)workload, "peek", "30", NULL };
	char expect[400];
	struct h_run r;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (h_write_file(stages_path, cases[i].text) < 0)
			abort();
		profile(&r, argv, NULL);
		snprintf(expect, sizeof(expect), "%s:%u: ", stages_path, cases[i].line);
		TAP_OK(r.status == 0 && strstr(r.out, "pid "),
		       "bad stage file %zu: the target runs", i + 1);
		TAP_OK(strstr(r.err, expect) && strstr(r.err, cases[i].what) &&
			       strstr(r.err, "profiling stays off") && h_count(r.err, "\n") == 1,
		       "bad stage file %zu: one message naming %s and '%s'", i + 1, expect,
		       cases[i].what);
		TAP_OK(!h_exists(out_path), "bad stage file %zu: the shim stays dormant", i + 1);
		h_run_free(&r);
	}

	snprintf(expect, sizeof(expect), "PERFLINK_STAGES=%s/missing", dir);
	{
		const char *extra[] = { expect, NULL };

		profile(&r, argv, extra);
		TAP_OK(r.status == 0 && strstr(r.err, "cannot open") && !h_exists(out_path),
		       "a missing stage file: said, and dormant");
		h_run_free(&r);
	}
	test_stages_not_regular(argv);
	write_stages("pipe_peek");
	test_out_planted_link(argv);
	{
		const char *extra[] = { "PERFLINK_PROFILE=yes", NULL };

		write_stages("pipe_peek");
		profile(&r, argv, extra);
		TAP_OK(r.status == 0 && h_count(r.err, "PERFLINK_PROFILE='yes'") == 1 &&
			       !h_exists(out_path),
		       "PERFLINK_PROFILE=yes: said once, profiling off");
		h_run_free(&r);
	}
}

static void test_dormant(void)
{
	char *argv[] = { (char *)workload, "null", "5", "peek", "30", NULL };
	const char *env[] = { env_preload, env_stages, env_out, NULL };
	struct h_run r;

	unlink(out_path);
	h_run(&r, argv, env);
	TAP_OK(r.status == 0 && r.err[0] == '\0' && !h_exists(out_path),
	       "dormant: without PERFLINK_PROFILE=1 nothing is written");
	h_run_free(&r);
}

/* A library preloaded after the shim runs its constructor first, and its
 * calls reach the shim's hooks before the shim's constructor ran.
 *
 * A report is written when the 25th frame completes, by the reporter thread,
 * which collects whatever was counted by the time it runs: so the run must
 * end on that frame for the count to be exact. Under glibc the early
 * library's 5 calls are not counted, and the target makes the 25 frames;
 * under musl they are, and the target makes the other 20. */
static void test_before_constructor(void)
{
#ifdef __GLIBC__
	char *argv[] = { (char *)workload, "peek", "25", NULL };
#else
	char *argv[] = { (char *)workload, "peek", "20", NULL };
#endif
	char both[700];
	const char *extra[] = { both, NULL };
	struct h_reports rs;
	struct h_run r;

	snprintf(both, sizeof(both), "LD_PRELOAD=%s %s", shim, early);
	write_stages("pipe_peek");
	profile(&r, argv, extra);
	TAP_OK(r.status == 0, "early: the target runs");
	TAP_OK(strstr(r.err, "early: FIONREAD 3 x5, /dev/null ENOTTY, close ok") != NULL,
	       "early: calls made before the shim's constructor give the right results (%s)",
	       h_oneline(r.err));
	h_reports_load(&rs, out_path);
#ifdef __GLIBC__
	TAP_EQ_U64(h_stage_u64(h_last(&rs, 0), "pipe_peek", "calls"), 25,
		   "early: they were forwarded, not counted");
#else
	/* musl's loader runs the preloaded constructors in load order: the
	 * shim is set up before the early library's calls, which count */
	TAP_EQ_U64(h_stage_u64(h_last(&rs, 0), "pipe_peek", "calls"), 25,
		   "early (musl: the shim's constructor ran first): counted as well");
#endif
	h_reports_free(&rs);
	h_run_free(&r);
}

/* A target with a file size limit (RLIMIT_FSIZE) whose reports would pass
 * it: the target must not die of SIGXFSZ (its default action) for the
 * shim's writes, and the file keeps whole lines only, within the limit.
 * The 120 reports are due 2 ms apart (25 frames, then a sleep): the
 * reporter thread writes what is due when it runs, so 3000 frames in a row,
 * a few ms on a fast machine, left it time for two reports, under the
 * limit, and nothing to say. */
#define LIMIT_REPORTS 120
static void test_out_file_limit(void)
{
	char limited[320], env_limited[400];
	char *argv[1 + 4 * LIMIT_REPORTS + 1];
	const char *extra[] = { env_limited, NULL };
	struct rlimit was, lim;
	struct h_reports rs;
	struct h_run r;
	char *text;
	size_t len;

	argv[0] = (char *)workload;
	for (int i = 0; i < LIMIT_REPORTS; i++) {
		argv[1 + 4 * i] = (char *)"peek";
		argv[2 + 4 * i] = (char *)"25";
		argv[3 + 4 * i] = (char *)"sleep";
		argv[4 + 4 * i] = (char *)"2";
	}
	argv[1 + 4 * LIMIT_REPORTS] = NULL;
	snprintf(limited, sizeof(limited), "%s/limited.jsonl", dir);
	snprintf(env_limited, sizeof(env_limited), "PERFLINK_PROFILE_OUT=%s", limited);
	unlink(limited);
	/* as a shell leaves it (meson's Python ignores it, and children
	 * inherit an ignored signal); the limit is inherited by the target
	 * (set here, not with prlimit(1): a program of another C library
	 * could not load this shim) */
	signal(SIGXFSZ, SIG_DFL);
	getrlimit(RLIMIT_FSIZE, &was);
	lim = was;
	lim.rlim_cur = 4000;
	setrlimit(RLIMIT_FSIZE, &lim);
	profile(&r, argv, extra);
	setrlimit(RLIMIT_FSIZE, &was);
	TAP_OK(r.status == 0 && h_count(r.err, "cannot append a report") == 1,
	       "a 4000-byte file size limit and 120 reports due: the target exits 0, not killed by "
	       "SIGXFSZ (status %d), said once: %s", r.status, h_oneline(r.err));
	text = test_read_file(limited);
	len = text ? strlen(text) : 0;
	h_reports_load(&rs, limited);
	TAP_OK(len > 0 && len <= 4000 && text[len - 1] == '\n' && rs.n >= 1 &&
		       h_count(text, "\n") == rs.n,
	       "the file has whole lines only (%zu bytes, %zu reports that parse, %u lines)", len,
	       rs.n, text ? h_count(text, "\n") : 0);
	h_reports_free(&rs);
	free(text);
	h_run_free(&r);
	unlink(limited);
}

int main(void)
{
	shim = getenv("PL_PRELOAD_LIB");
	workload = getenv("PL_WORKLOAD");
	early = getenv("PL_EARLY_LIB");
	if (!shim || !workload || !early || h_tempdir(dir, sizeof(dir), "profile") < 0) {
		printf("Bail out! PL_PRELOAD_LIB, PL_WORKLOAD and PL_EARLY_LIB are needed\n");
		return 1;
	}
	snprintf(stages_path, sizeof(stages_path), "%s/test.stages", dir);
	snprintf(out_path, sizeof(out_path), "%s/profile.jsonl", dir);
	snprintf(env_preload, sizeof(env_preload), "LD_PRELOAD=%s", shim);
	snprintf(env_stages, sizeof(env_stages), "PERFLINK_STAGES=%s", stages_path);
	snprintf(env_out, sizeof(env_out), "PERFLINK_PROFILE_OUT=%s", out_path);

	test_counts();
	test_kinds();
	test_interval();
	test_fork();
	test_threads();
	test_exec();
	test_syslog();
	test_bad_config();
	test_out_file_limit();
	test_dormant();
	test_before_constructor();
	h_rmdir(dir);
	return tap_done();
}
