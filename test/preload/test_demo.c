/* The demo as docs/stages.md gives it: capture_loop under the shim with the
 * checked-in test/preload/capture_loop.stages, twice (with and without the
 * diagnostic sample), then `perflink compare` of the two reports.
 *
 * Environment (set by meson): PL_PRELOAD_LIB, PL_CAPTURE_LOOP,
 * PL_CAPTURE_STAGES, PL_PERFLINK. */
#include "harness.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#define FRAMES 50
#define FRAME_BYTES (1u << 20)

static uint64_t expected_stream_bytes(void)
{
	uint64_t sum = 0, size;
	unsigned i;

	/* what capture_loop's "encoder" writes a frame */
	for (i = 0; i < FRAMES; i++) {
		size = FRAME_BYTES / 40 + (i % 7) * 512;
		sum += size > 65536 ? 65536 : size;
	}
	return sum;
}

static int site_calls(const struct h_report *r, const char *stage, const char *fn)
{
	int st = h_stage(r, stage), i;

	for (i = 0; st >= 0 && i < 16; i++) {
		const char *s = h_get(r, "stages.%d.sites.%d.site", st, i);

		if (!s)
			break;
		if (strncmp(s, fn, strlen(fn)) == 0 && s[strlen(fn)] == '+')
			return (int)h_u64(r, "stages.%d.sites.%d.calls", st, i);
	}
	return -1;
}

int main(void)
{
	const char *shim = getenv("PL_PRELOAD_LIB"), *loop = getenv("PL_CAPTURE_LOOP");
	const char *stages = getenv("PL_CAPTURE_STAGES"), *perflink = getenv("PL_PERFLINK");
	char dir[256], out_a[300], out_b[300], env_preload[600], env_stages[400], env_out[400];
	char frames[16], bytes[16];
	const char *env[] = { env_preload, "PERFLINK_PROFILE=1", "PERFLINK_PROFILE_INTERVAL=25",
			      "PERFLINK_PROFILE_SYSLOG=off", env_stages, env_out, NULL };
	char *run_a[] = { (char *)loop, "--frames", frames, "--fps", "100", "--frame-bytes", bytes,
			  "--sample-bytes", bytes, NULL };
	char *run_b[] = { (char *)loop, "--frames", frames, "--fps", "100", "--frame-bytes", bytes,
			  NULL };
	char *cmp[] = { (char *)perflink, "compare", "--label-a", "sampling", "--label-b",
			"no sampling", out_a, out_b, NULL };
	char want[256], got[4096];
	const struct h_report *a;
	struct h_reports rs;
	struct h_run r;

	if (!shim || !loop || !stages || !perflink || h_tempdir(dir, sizeof(dir), "demo") < 0) {
		printf("Bail out! needs PL_PRELOAD_LIB, PL_CAPTURE_LOOP, PL_CAPTURE_STAGES, "
		       "PL_PERFLINK\n");
		return 1;
	}
	if (FIONREAD != 0x541B) {
		printf("1..0 # SKIP capture_loop.stages names FIONREAD as 0x541B, "
		       "not this ABI's\n");
		return 0;
	}
	snprintf(frames, sizeof(frames), "%d", FRAMES);
	snprintf(bytes, sizeof(bytes), "%u", FRAME_BYTES);
	snprintf(out_a, sizeof(out_a), "%s/a.jsonl", dir);
	snprintf(out_b, sizeof(out_b), "%s/b.jsonl", dir);
	snprintf(env_preload, sizeof(env_preload), "LD_PRELOAD=%s", shim);
	snprintf(env_stages, sizeof(env_stages), "PERFLINK_STAGES=%s", stages);

	snprintf(env_out, sizeof(env_out), "PERFLINK_PROFILE_OUT=%s", out_a);
	h_run(&r, run_a, env);
	if (r.status == 77) {
		printf("1..0 # SKIP no seccomp listener or userfaultfd\n");
		h_diag(r.err);
		h_run_free(&r);
		h_rmdir(dir);
		return 0;
	}
	TAP_OK(r.status == 0 && r.err[0] == '\0', "the demo runs under the shim (%s)",
	       h_oneline(r.err));
	h_run_free(&r);
	snprintf(env_out, sizeof(env_out), "PERFLINK_PROFILE_OUT=%s", out_b);
	h_run(&r, run_b, env);
	TAP_OK(r.status == 0, "and again without the diagnostic sample");
	h_run_free(&r);

	h_reports_load(&rs, out_a);
	a = h_last(&rs, 0);
	TAP_EQ_U64(h_u64(a, "frames"), FRAMES, "every frame_wait completed a frame");
	TAP_EQ_U64(h_stage_u64(a, "frame_release", "calls"), FRAMES, "frame_release per frame");
	TAP_EQ_U64(h_stage_u64(a, "cache_sync", "calls"), 2 * FRAMES, "two cache syncs a frame");
	TAP_EQ_U64(h_stage_u64(a, "cache_sync", "cache_bytes"), 2ull * FRAMES * FRAME_BYTES,
		   "cache bytes from the argument");
	TAP_EQ_U64(h_stage_u64(a, "stream_poll", "stream_bytes"), expected_stream_bytes(),
		   "published stream bytes, read from FIONREAD's result");
	TAP_EQ_U64(site_calls(a, "cache_sync", "invalidate_frame"), FRAMES,
		   "the frame's own cache sync, by call site");
	TAP_EQ_U64(site_calls(a, "cache_sync", "diagnostic_sample"), FRAMES,
		   "the diagnostic sample, by call site");
	h_reports_free(&rs);

	h_run(&r, cmp, NULL);
	TAP_OK(r.status == 0, "perflink compare A B (%s)", h_oneline(r.err));
	h_diag(r.out);
	snprintf(got, sizeof(got), "%s", r.out);
	TAP_OK(strstr(got, "Metric") && strstr(got, "sampling") && strstr(got, "Change"),
	       "the table's header");
	snprintf(want, sizeof(want), "cache-accounted bytes");
	TAP_OK(strstr(got, want) && strstr(got, "104,857,600") && strstr(got, "52,428,800") &&
		       strstr(got, "-52,428,800 (-50.0%)"),
	       "the cache bytes row: halved");
	TAP_OK(strstr(got, "cache_sync calls/frame") && strstr(got, "2.00") &&
		       strstr(got, "-1.00 (-50.0%)"),
	       "cache calls per frame: 2 to 1");
	h_run_free(&r);
	h_rmdir(dir);
	return tap_done();
}
