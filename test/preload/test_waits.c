/* Waits in poll, select and epoll, timed as the stage they wait for
 * (preload/profiler/waits.h): test/preload/wait_loop waits for its pipe
 * "device" in each of the calls a capture client may use, then dequeues
 * with FIONREAD (the stage pipe_dequeue). Under the shim the report must
 * show the frame period in pipe_dequeue.wait, wall far above CPU, one wait
 * a frame after the first dequeue, and the program's output and status as
 * bare.
 *
 * Environment (set by meson): PL_PRELOAD_LIB, PL_WAIT_LOOP. */
#include "harness.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define FRAMES 50
#define PERIOD_MS 10
#define STAGE "pipe_dequeue"
#define WAIT_STAGE "pipe_dequeue.wait"

static const char *shim, *wait_loop;
static char dir[256], stages_path[300], out_path[300];
static char env_preload[600], env_stages[400], env_out[400];

static void write_stages(void)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "# a capture client's dequeue: FIONREAD on its pipe\n"
		 "stage " STAGE " dequeue pipe:* 0x%lx\n"
		 "frame-boundary " STAGE "\n",
		 (unsigned long)FIONREAD);
	if (h_write_file(stages_path, text) < 0)
		abort();
}

/* Run wait_loop MODE bare and under the shim; the two must agree. Returns
 * the last report, or NULL (rs to be freed by the caller). */
static const struct h_report *run_mode(const char *mode, struct h_reports *rs)
{
	char frames[16], period[16];
	char *argv[] = { (char *)wait_loop, (char *)mode, frames, period, NULL };
	const char *env[] = { env_preload, "PERFLINK_PROFILE=1", "PERFLINK_PROFILE_INTERVAL=25",
			      "PERFLINK_PROFILE_SYSLOG=off", env_stages, env_out, NULL };
	struct h_run bare, shimmed;
	char want[64];

	snprintf(frames, sizeof(frames), "%d", FRAMES);
	snprintf(period, sizeof(period), "%d", PERIOD_MS);
	snprintf(want, sizeof(want), "frames=%d bytes=%d\n", FRAMES, 4 * FRAMES);
	unlink(out_path);
	TAP_OK(h_run(&bare, argv, NULL) == 0 && bare.status == 0, "%s: runs bare (%s)", mode,
	       h_oneline(bare.err));
	TAP_OK(h_run(&shimmed, argv, env) == 0 && shimmed.status == 0,
	       "%s: runs under the shim (%s)", mode, h_oneline(shimmed.err));
	TAP_OK(strcmp(bare.out, want) == 0 && strcmp(shimmed.out, bare.out) == 0,
	       "%s: the same output under the shim as bare (%s)", mode, h_oneline(shimmed.out));
	TAP_EQ_STR(shimmed.err, "", "nothing on stderr under the shim");
	h_run_free(&bare);
	h_run_free(&shimmed);
	h_reports_load(rs, out_path);
	TAP_OK(rs->all_ok && rs->n == 2, "%s: two reports for %d frames (%zu)", mode, FRAMES,
	       rs->n);
	return h_last(rs, 0);
}

/* A wait on the device, timed: once a frame after the first dequeue (the
 * first wait comes before the pipe is known as a device), the frame
 * period in wall, little CPU. */
static void test_timed(const char *mode, unsigned expected_waits)
{
	const struct h_report *last;
	struct h_reports rs;
	uint64_t wall, cpu, dq_wall;
	char what[96];

	last = run_mode(mode, &rs);
	TAP_EQ_U64(h_u64(last, "frames"), FRAMES, "frames in the last report");
	TAP_EQ_U64(h_stage_u64(last, STAGE, "calls"), FRAMES, "one dequeue a frame");
	snprintf(what, sizeof(what), "%s: %u waits timed as " WAIT_STAGE, mode, expected_waits);
	TAP_EQ_U64(h_stage_u64(last, WAIT_STAGE, "calls"), expected_waits, what);
	TAP_EQ_STR(h_get(last, "stages.%d.kind", h_stage(last, WAIT_STAGE)), "wait",
		   "the companion's kind is wait");
	TAP_EQ_U64(h_stage_u64(last, WAIT_STAGE, "errors"), 0, "no failed waits");
	wall = h_stage_u64(last, WAIT_STAGE, "wall_total_ns");
	cpu = h_stage_u64(last, WAIT_STAGE, "cpu_total_ns");
	/* the waits add up to the run's length less the loop's own work */
	TAP_OK(wall != UINT64_MAX && wall >= expected_waits * PERIOD_MS * 1000000ull * 7 / 10 &&
		       wall <= expected_waits * PERIOD_MS * 1000000ull * 4,
	       "%s: the waits hold the frame period: %llu ns for %u periods of %d ms", mode,
	       (unsigned long long)wall, expected_waits, PERIOD_MS);
	TAP_OK(cpu < wall / 5, "%s: a wait sleeps: CPU %llu ns below a fifth of wall", mode,
	       (unsigned long long)cpu);
	/* the dequeue itself no longer waits: the poll did */
	dq_wall = h_stage_u64(last, STAGE, "wall_avg_ns");
	TAP_OK(dq_wall < 2000000, "%s: the dequeue after the wait is quick (%llu ns)", mode,
	       (unsigned long long)dq_wall);
	h_reports_free(&rs);
}

/* Waits on nothing the stage file names are not timed. */
static void test_unstaged(void)
{
	const struct h_report *last;
	struct h_reports rs;

	last = run_mode("unstaged", &rs);
	TAP_EQ_U64(h_stage_u64(last, STAGE, "calls"), FRAMES, "unstaged: one dequeue a frame");
	TAP_OK(last && h_stage(last, WAIT_STAGE) < 0,
	       "unstaged: a poll on a pipe no stage names is not timed");
	h_reports_free(&rs);
}

/* A set the kernel cannot read is its EFAULT to give, never the shim's
 * SIGSEGV: the shim reads the sets through process_vm_readv. */
static void test_bad_pointers(void)
{
	char *argv[] = { (char *)wait_loop, "efault", "1", "1", NULL };
	const char *env[] = { env_preload, "PERFLINK_PROFILE=1", "PERFLINK_PROFILE_SYSLOG=off",
			      env_stages, NULL };
	const char *want = "poll: -1 EFAULT, select: -1 EFAULT\n";
	struct h_run bare, shimmed;

	TAP_OK(h_run(&bare, argv, NULL) == 0 && bare.status == 0 && strcmp(bare.out, want) == 0,
	       "efault: bare, the kernel refuses sets at an unmapped address (%s)",
	       h_oneline(bare.out));
	TAP_OK(h_run(&shimmed, argv, env) == 0 && shimmed.status == 0 &&
		       strcmp(shimmed.out, want) == 0,
	       "efault: under the shim, the same answer and no crash (status %d: %s)",
	       shimmed.status, h_oneline(shimmed.out));
	h_run_free(&bare);
	h_run_free(&shimmed);
}

/* Dormant: the hooks only forward. */
static void test_dormant(void)
{
	char frames[16], period[16];
	char *argv[] = { (char *)wait_loop, "epoll_wait", frames, period, NULL };
	const char *env[] = { env_preload, env_stages, env_out, NULL };
	struct h_run r;

	snprintf(frames, sizeof(frames), "%d", 10);
	snprintf(period, sizeof(period), "%d", 1);
	unlink(out_path);
	TAP_OK(h_run(&r, argv, env) == 0 && r.status == 0 &&
		       strcmp(r.out, "frames=10 bytes=40\n") == 0,
	       "dormant: epoll_wait through the shim works (%s)", h_oneline(r.err));
	TAP_OK(!h_exists(out_path), "dormant: no report");
	h_run_free(&r);
}

int main(void)
{
	static const char *const modes[] = {
		"poll", "ppoll", "select", "pselect", "epoll_wait", "epoll_pwait",
#ifdef __GLIBC__
		"poll_chk", "ppoll_chk",
#endif
#ifdef PL_HAVE_EPOLL_PWAIT2
		"epoll_pwait2",
#endif
	};
	size_t i;

	shim = getenv("PL_PRELOAD_LIB");
	wait_loop = getenv("PL_WAIT_LOOP");
	if (!shim || !wait_loop || h_tempdir(dir, sizeof(dir), "waits") < 0) {
		printf("Bail out! PL_PRELOAD_LIB and PL_WAIT_LOOP are needed\n");
		return 1;
	}
	snprintf(stages_path, sizeof(stages_path), "%s/waits.stages", dir);
	snprintf(out_path, sizeof(out_path), "%s/profile.jsonl", dir);
	snprintf(env_preload, sizeof(env_preload), "LD_PRELOAD=%s", shim);
	snprintf(env_stages, sizeof(env_stages), "PERFLINK_STAGES=%s", stages_path);
	snprintf(env_out, sizeof(env_out), "PERFLINK_PROFILE_OUT=%s", out_path);
	write_stages();

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		test_timed(modes[i], FRAMES - 1);
	/* taken out of the epoll set after half the frames: the waits on the
	 * set that is left are not the device's */
	test_timed("epoll_del", FRAMES / 2 - 1);
	/* the wait and the dequeue on two copies of one open file (dup): what
	 * the one learns, the other knows */
	test_timed("dup", FRAMES - 1);
	test_timed("dup_reversed", FRAMES - 1);
	test_unstaged();
	test_bad_pointers();
	test_dormant();
	h_rmdir(dir);
	return tap_done();
}
