/* Per-call events (PERFLINK_PROFILE_EVENTS=1, preload/profiler/events.h):
 * every timed call also as an event in perflink-stage-calls lines. Checked
 * against the report the same run writes: as many events as calls, each
 * stage's wall time the same sum, starts in order on each thread; and when
 * the ring is too small, every call either sent or counted dropped.
 *
 * Environment (set by meson): PL_PRELOAD_LIB, PL_WAIT_LOOP, PL_WORKLOAD. */
#include "harness.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static const char *shim, *wait_loop, *workload;
static char dir[256], stages_path[300], out_path[300];
static char env_preload[600], env_stages[400], env_out[400];

/* The last line of type type, or NULL. */
static const struct h_report *last_of(const struct h_reports *rs, const char *type)
{
	size_t i;

	for (i = rs->n; i > 0; i--) {
		const char *t = h_get(&rs->r[i - 1], "type");

		if (t && strcmp(t, type) == 0)
			return &rs->r[i - 1];
	}
	return NULL;
}

static int run(char *const argv[], const char *ring_kb)
{
	char kb[64];
	const char *env[] = { env_preload, "PERFLINK_PROFILE=1", "PERFLINK_PROFILE_EVENTS=1",
			      "PERFLINK_PROFILE_INTERVAL=25", "PERFLINK_PROFILE_SYSLOG=off",
			      env_stages, env_out, ring_kb ? kb : NULL, NULL };
	struct h_run r;
	int status;

	snprintf(kb, sizeof(kb), "PERFLINK_PROFILE_EVENTS_KB=%s", ring_kb ? ring_kb : "");
	unlink(out_path);
	if (h_run(&r, argv, env) < 0)
		return -1;
	status = r.status;
	if (*r.err)
		h_diag(r.err);
	h_run_free(&r);
	return status;
}

/* A poll-based loop: 50 dequeues and 49 waits, each an event. */
static void test_events_match_report(void)
{
	char *argv[] = { (char *)wait_loop, "poll", "50", "10", NULL };
	uint64_t n_events = 0, wall[2] = { 0, 0 }, last_start = 0, tid0 = 0;
	const struct h_report *rep, *last_events;
	bool ordered = true, one_thread = true, names_ok = true;
	struct h_reports rs;
	size_t i;

	TAP_OK(run(argv, NULL) == 0, "events: the loop runs with events on");
	h_reports_load(&rs, out_path);
	rep = last_of(&rs, "perflink-profile");
	last_events = last_of(&rs, "perflink-stage-calls");
	TAP_OK(rs.all_ok && rep && last_events, "events: reports and event lines written");
	for (i = 0; i < rs.n; i++) {
		const struct h_report *l = &rs.r[i];
		const char *type = h_get(l, "type");
		unsigned k;

		if (!type || strcmp(type, "perflink-stage-calls") != 0)
			continue;
		for (k = 0; h_get(l, "calls.%u.0", k); k++) {
			uint64_t start = h_u64(l, "calls.%u.0", k), tid = h_u64(l, "calls.%u.3", k);
			uint64_t place = h_u64(l, "calls.%u.4", k);
			const char *name = h_get(l, "stage_names.%llu", (unsigned long long)place);

			n_events++;
			if (!name || (strcmp(name, "pipe_dequeue") != 0 &&
				      strcmp(name, "pipe_dequeue.wait") != 0)) {
				names_ok = false;
				continue;
			}
			wall[strcmp(name, "pipe_dequeue") == 0 ? 0 : 1] +=
				h_u64(l, "calls.%u.1", k);
			if (start < last_start)
				ordered = false;
			last_start = start;
			if (tid0 == 0)
				tid0 = tid;
			one_thread &= tid == tid0;
			/* result 0 (ok), and FIONREAD carries no byte count here */
			if (h_u64(l, "calls.%u.5", k) != 0)
				names_ok = false;
		}
	}
	TAP_EQ_U64(n_events, 99, "events: one per timed call, 50 dequeues and 49 waits");
	TAP_OK(names_ok, "events: each names its stage from its line's list, each ok");
	TAP_EQ_U64(wall[0], h_stage_u64(rep, "pipe_dequeue", "wall_total_ns"),
		   "events: the dequeues' wall adds up to the report's");
	TAP_EQ_U64(wall[1], h_stage_u64(rep, "pipe_dequeue.wait", "wall_total_ns"),
		   "events: the waits' wall adds up to the report's");
	TAP_OK(ordered, "events: a thread's calls in the order they began");
	TAP_OK(one_thread && tid0 == h_u64(rep, "pid"),
	       "events: the loop's thread id (its pid: the main thread)");
	TAP_EQ_U64(h_u64(last_events, "events_sent"), 99, "events: events_sent counts them");
	TAP_EQ_U64(h_u64(last_events, "events_dropped"), 0, "events: none dropped");
	h_reports_free(&rs);
}

/* Four threads, 20,000 calls each, into a ring of 16 KiB (512 events): far
 * more than the 100 ms drain keeps up with. Every call is an event sent or
 * one counted dropped, and the ring never hands out one twice. */
static void test_small_ring(void)
{
	char *argv[] = { (char *)workload, "threads", "4", "20000", NULL };
	const struct h_report *rep, *last_events;
	uint64_t calls, sent, dropped;
	struct h_reports rs;

	TAP_OK(run(argv, "16") == 0, "small ring: the workload runs");
	h_reports_load(&rs, out_path);
	rep = last_of(&rs, "perflink-profile");
	last_events = last_of(&rs, "perflink-stage-calls");
	calls = h_u64(rep, "totals.calls");
	sent = h_u64(last_events, "events_sent");
	dropped = h_u64(last_events, "events_dropped");
	printf("# small ring: %llu calls, %llu events sent, %llu dropped\n",
	       (unsigned long long)calls, (unsigned long long)sent, (unsigned long long)dropped);
	TAP_OK(calls != UINT64_MAX && calls >= 8 * 20000,
	       "small ring: the report counts the two waves' calls");
	TAP_OK(sent != UINT64_MAX && dropped != UINT64_MAX && sent + dropped == calls,
	       "small ring: every call sent or counted dropped (%llu + %llu = %llu)",
	       (unsigned long long)sent, (unsigned long long)dropped, (unsigned long long)calls);
	TAP_OK(dropped > 0, "small ring: a ring of 512 events overflows and says so");
	h_reports_free(&rs);
}

/* A bad ring size: one message, the default used. */
static void test_bad_size(void)
{
	char *argv[] = { (char *)wait_loop, "poll", "25", "1", NULL };
	const char *env[] = { env_preload, "PERFLINK_PROFILE=1", "PERFLINK_PROFILE_EVENTS=1",
			      "PERFLINK_PROFILE_EVENTS_KB=9", "PERFLINK_PROFILE_SYSLOG=off",
			      env_stages, env_out, NULL };
	struct h_reports rs;
	struct h_run r;

	unlink(out_path);
	TAP_OK(h_run(&r, argv, env) == 0 && r.status == 0, "bad size: the loop runs");
	TAP_OK(strstr(r.err, "PERFLINK_PROFILE_EVENTS_KB='9'") && h_count(r.err, "\n") == 1,
	       "bad size: one message (%s)", h_oneline(r.err));
	h_reports_load(&rs, out_path);
	TAP_OK(last_of(&rs, "perflink-stage-calls") != NULL, "bad size: events all the same");
	h_reports_free(&rs);
	h_run_free(&r);
}

int main(void)
{
	char text[256];

	shim = getenv("PL_PRELOAD_LIB");
	wait_loop = getenv("PL_WAIT_LOOP");
	workload = getenv("PL_WORKLOAD");
	if (!shim || !wait_loop || !workload || h_tempdir(dir, sizeof(dir), "events") < 0) {
		printf("Bail out! PL_PRELOAD_LIB, PL_WAIT_LOOP and PL_WORKLOAD are needed\n");
		return 1;
	}
	snprintf(stages_path, sizeof(stages_path), "%s/events.stages", dir);
	snprintf(out_path, sizeof(out_path), "%s/profile.jsonl", dir);
	snprintf(env_preload, sizeof(env_preload), "LD_PRELOAD=%s", shim);
	snprintf(env_stages, sizeof(env_stages), "PERFLINK_STAGES=%s", stages_path);
	snprintf(env_out, sizeof(env_out), "PERFLINK_PROFILE_OUT=%s", out_path);
	snprintf(text, sizeof(text),
		 "stage pipe_dequeue dequeue pipe:* 0x%lx\nframe-boundary pipe_dequeue\n",
		 (unsigned long)FIONREAD);
	if (h_write_file(stages_path, text) < 0)
		return 1;

	test_events_match_report();
	test_small_ring();
	test_bad_size();
	h_rmdir(dir);
	return tap_done();
}
