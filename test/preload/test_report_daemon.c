/* The stage profiler's reports to perflinkd's collector, with capture_loop
 * under the shim and a real collector (daemon/collector/collector.c) in this test:
 * - no daemon is not an error: the target runs, its reports still go to
 *   the file, nothing is said about the missing daemon;
 * - a daemon that stops draining never blocks the target: reports that do
 *   not fit the ring are dropped and counted (daemon_dropped_reports), and
 *   every report is either delivered or counted, none lost silently;
 * - reports due faster than the reporter writes them are coalesced, never
 *   skipped: numbered without a gap, the last one counting every frame.
 *
 * Environment (set by meson): PL_PRELOAD_LIB, PL_CAPTURE_LOOP,
 * PL_CAPTURE_STAGES. */
#include "harness.h"
#include "tap.h"

#include "collector.h"
#include "event_loop.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static struct pl_loop *loop;
static atomic_bool stop, paused, keep_draining;
static atomic_uint lines;

static int sink_frame(void *ctx, uint64_t id, const void *data, size_t len,
		      const uint64_t *payload_xxh3)
{
	(void)ctx;
	(void)payload_xxh3;
	(void)id;
	(void)data;
	(void)len;
	return -ENOTCONN;
}

/* The first report arrives: from now on the daemon "hangs" (stops
 * draining) until the test lets it go on. */
static void sink_line(void *ctx, const char *line, size_t len)
{
	(void)ctx;
	(void)len;
	if (strstr(line, "\"type\":\"perflink-profile\""))
		atomic_fetch_add(&lines, 1);
	if (!atomic_load(&keep_draining))
		atomic_store(&paused, true);
}

static void *loop_thread(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		if (atomic_load(&paused))
			usleep(5000);
		else
			pl__loop_run_once(loop, 10);
	}
	return NULL;
}

/* A target that closes every descriptor it did not open (close_range,
 * a raw close_range system call that no hook sees,
 * closefrom, a close loop), as daemons and sandboxes do, and takes the
 * numbers back with sockets, files and a pipe of its own, while the shim
 * keeps reporting to perflinkd: the shim writes into none of them and
 * closes none of them, and its reports go on through a new connection. */
static void test_target_closes_all(const char *dir, const char *env_preload,
				   const char *env_sock)
{
	static const char *const how[] = { "close_range", "closefrom", "a close loop",
					   "a raw close_range system call" };
	const char *workload = getenv("PL_WORKLOAD");
	char stages[300], env_stages[400], text[256], out[300], env_out[400];
	const char *env[] = { env_preload, "PERFLINK_PROFILE=1", "PERFLINK_PROFILE_INTERVAL=25",
			      "PERFLINK_PROFILE_SYSLOG=off", env_stages, env_sock, env_out, NULL };
	struct h_reports rs;
	struct h_run r;

	snprintf(stages, sizeof(stages), "%s/workload.stages", dir);
	snprintf(text, sizeof(text), "stage pipe_peek other pipe:* 0x%lx\nframe-boundary pipe_peek\n",
		 (unsigned long)FIONREAD);
	snprintf(env_stages, sizeof(env_stages), "PERFLINK_STAGES=%s", stages);
	snprintf(out, sizeof(out), "%s/workload.jsonl", dir);
	snprintf(env_out, sizeof(env_out), "PERFLINK_PROFILE_OUT=%s", out);
	if (!workload || h_write_file(stages, text) < 0)
		abort();
	atomic_store(&keep_draining, true);
	atomic_store(&paused, false);
	for (int k = 0; k < 4; k++) {
		char how_arg[4];
		/* the sleeps let the reporter write what is due on each side of
		 * the close, so there is a report before it and one after */
		char *argv[] = { (char *)workload, "peek", "60",  "sleep", "150", "closeall",
				 how_arg, "250", "sleep", "150", NULL };
		unsigned before = atomic_load(&lines);

		unlink(out);
		snprintf(how_arg, sizeof(how_arg), "%d", k);
		TAP_OK(h_run(&r, argv, env) == 0 && r.status == 0 && strstr(r.out, "files intact"),
		       "the target closes everything with %s, then its own files: intact (%s)",
		       how[k], h_oneline(r.out));
		h_reports_load(&rs, out);
		for (int i = 0; i < 200 && atomic_load(&lines) - before < rs.n; i++)
			usleep(10000);
		TAP_OK(rs.n >= 2 && h_u64(&rs.r[0], "frames") <= 60 &&
			       h_u64(&rs.r[rs.n - 1], "frames") >= 300,
		       "its reports come from before the close and after it (%zu, the first at "
		       "%llu frames, the last at %llu)",
		       rs.n, rs.n ? (unsigned long long)h_u64(&rs.r[0], "frames") : 0ULL,
		       rs.n ? (unsigned long long)h_u64(&rs.r[rs.n - 1], "frames") : 0ULL);
		TAP_OK(rs.n >= 2 && atomic_load(&lines) - before == rs.n,
		       "and every report reaches perflinkd through it: %u of %zu",
		       atomic_load(&lines) - before, rs.n);
		h_reports_free(&rs);
		h_run_free(&r);
	}
}

int main(void)
{
	static const struct pl_collector_sink sink = { .frame = sink_frame, .telemetry = sink_line };
	const char *shim = getenv("PL_PRELOAD_LIB"), *capture = getenv("PL_CAPTURE_LOOP");
	const char *stages = getenv("PL_CAPTURE_STAGES");
	char dir[256], sock[300], out[300], env_preload[600], env_stages[400], env_out[400];
	char env_sock[400];
	const char *env[] = { env_preload, "PERFLINK_PROFILE=1", "PERFLINK_PROFILE_INTERVAL=25",
			      "PERFLINK_PROFILE_SYSLOG=off", env_stages, env_out, env_sock, NULL };
	char *run_short[] = { (char *)capture, "--frames", "50", "--fps", "200", NULL };
	/* more reports (1.8 KB each) than the shim's 1 MiB ring to perflinkd holds */
	char *run_long[] = { (char *)capture, "--frames", "20000", "--fps", "5000", "--frame-bytes",
			     "4096", NULL };
	struct pl_collector_config cfg = { .max_frame_bytes = 1 << 20 };
	struct pl_collector *col;
	struct h_reports rs;
	struct h_run r;
	pthread_t t;
	uint64_t dropped;

	if (!shim || !capture || !stages || h_tempdir(dir, sizeof(dir), "report-daemon") < 0) {
		printf("Bail out! needs PL_PRELOAD_LIB, PL_CAPTURE_LOOP, PL_CAPTURE_STAGES\n");
		return 1;
	}
	snprintf(sock, sizeof(sock), "%s/producers", dir);
	snprintf(out, sizeof(out), "%s/reports.jsonl", dir);
	snprintf(env_preload, sizeof(env_preload), "LD_PRELOAD=%s", shim);
	snprintf(env_stages, sizeof(env_stages), "PERFLINK_STAGES=%s", stages);
	snprintf(env_out, sizeof(env_out), "PERFLINK_PROFILE_OUT=%s", out);

	/* No daemon at all. */
	snprintf(env_sock, sizeof(env_sock), "PERFLINK_SOCKET=%s/nobody-listens", dir);
	TAP_OK(h_run(&r, run_short, env) == 0 && r.status == 0, "no daemon: the target runs");
	TAP_OK(!strstr(r.err, "perflinkd"), "and nothing is said about it: %s", h_oneline(r.err));
	h_run_free(&r);
	h_reports_load(&rs, out);
	TAP_OK(rs.n == 2 && h_u64(&rs.r[1], "daemon_dropped_reports") == 0,
	       "its two reports still reach the file (%zu)", rs.n);
	h_reports_free(&rs);
	unlink(out);

	/* A daemon that stops draining after the first report. */
	cfg.path = sock;
	if (pl__loop_new(&loop) < 0 ||
	    pl__collector_open(&col, loop, &cfg, &sink, NULL) < 0) {
		printf("Bail out! collector: could not listen (its reason is on stderr)\n");
		return 1;
	}
	pthread_create(&t, NULL, loop_thread, NULL);
	snprintf(env_sock, sizeof(env_sock), "PERFLINK_SOCKET=%s", sock);
	TAP_OK(h_run(&r, run_long, env) == 0 && r.status == 0,
	       "a daemon that does not drain: the target still runs to the end");
	h_run_free(&r);
	h_reports_load(&rs, out);
	dropped = rs.n ? h_u64(&rs.r[rs.n - 1], "daemon_dropped_reports") : 0;
	/* 800 are due (20000 frames, one every 25). Reports due while the
	 * reporter is still writing one are written as one (docs/stages.md):
	 * on a busy machine there can be fewer lines, but they are numbered
	 * without a gap and the last one counts every frame. */
	{
		bool numbered = rs.n > 0;
		uint64_t last_frames = 0;

		for (size_t i = 0; i < rs.n; i++) {
			uint64_t f = h_u64(&rs.r[i], "frames");

			numbered &= h_u64(&rs.r[i], "report") == i + 1 && f >= 25 * (i + 1) &&
				    f >= last_frames;
			last_frames = f;
		}
		TAP_OK(rs.n <= 800 && rs.n >= 400 && numbered,
		       "reports in the file numbered 1 to %zu without a gap, each after its "
		       "interval's frames (of 800 due)",
		       rs.n);
		TAP_EQ_U64(last_frames, 20000, "the last report counts all 20000 frames");
	}
	TAP_OK(dropped > 0 && dropped < 800,
	       "the reports that did not fit the ring are counted (%llu)", (unsigned long long)dropped);
	/* Let the daemon drain what the ring kept: with the ones counted as
	 * dropped before the last report, every report is accounted for. */
	atomic_store(&paused, false);
	for (int i = 0; i < 300 && atomic_load(&lines) + dropped < rs.n; i++) {
		atomic_store(&paused, false);
		usleep(10000);
	}
	TAP_OK(atomic_load(&lines) + dropped + 1 >= rs.n && atomic_load(&lines) + dropped <= rs.n,
	       "delivered (%u) + dropped (%llu) = the reports written (%zu; the last report's "
	       "own drop, if any, is counted in no report)",
	       atomic_load(&lines), (unsigned long long)dropped, rs.n);
	h_reports_free(&rs);
	test_target_closes_all(dir, env_preload, env_sock);
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	pl__collector_close(col);
	pl__loop_free(loop);
	h_rmdir(dir);
	return tap_done();
}
