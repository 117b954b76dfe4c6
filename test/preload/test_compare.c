/* `perflink compare`: the A/B table from recorded reports (fixtures modelled
 * on OpenIMP's T41 command-ring A/B) and from reports the shim wrote for
 * two real runs of the workload.
 *
 * Environment (set by meson): PL_PERFLINK, PL_PRELOAD_LIB, PL_WORKLOAD,
 * PL_PRELOAD_FIXTURES. */
#include "harness.h"
#include "tap.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

static const char *perflink, *shim, *workload, *fixtures;
static char a_path[300], b_path[300], bad_path[300], neg_path[300];

/* The table line whose first column is metric, or NULL. */
static const char *row(const char *out, const char *metric)
{
	static char line[512];
	const char *p = out;
	size_t n = strlen(metric);

	while (p && *p) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len > n && strncmp(p, metric, n) == 0 && p[n] == ' ' && p[n + 1] == ' ') {
			snprintf(line, sizeof(line), "%.*s", (int)len, p);
			return line;
		}
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

/* Collapse runs of spaces, so that a row reads "metric A B change". */
static const char *squeeze(const char *line)
{
	static char out[512];
	size_t o = 0;

	for (; line && *line && o + 1 < sizeof(out); line++) {
		if (*line == ' ' && o > 0 && out[o - 1] == ' ')
			continue;
		out[o++] = *line;
	}
	while (o > 0 && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
	return out;
}

static void expect_row(const char *out, const char *metric, const char *want)
{
	TAP_EQ_STR(squeeze(row(out, metric)), want, metric);
}

static void test_fixtures(void)
{
	char *argv[] = { (char *)perflink, "compare", a_path, b_path, NULL };
	char *argv_md[] = { (char *)perflink, "compare", "--markdown", "--label-a", "Cached ring",
			    "--label-b", "Sparse uncached ring", a_path, b_path, NULL };
	char *argv_r1[] = { (char *)perflink, "compare", "--report", "1", a_path, NULL };
	struct h_run r;

	TAP_OK(h_run(&r, argv, NULL) == 0 && r.status == 0, "fixtures: compare succeeds (%s)",
	       h_oneline(r.err));
	h_diag(r.out);
	expect_row(r.out, "completed frames", "completed frames 750 750 unchanged");
	expect_row(r.out, "cache calls", "cache calls 6,756 5,257 -1,499 (-22.2%)");
	expect_row(r.out, "cache-accounted bytes",
		   "cache-accounted bytes 10,455,498,752 8,883,683,328 -1,571,815,424 (-15.0%)");
	expect_row(r.out, "avpu_submit CPU/frame",
		   "avpu_submit CPU/frame 363 us 334 us -29 us (-8.0%)");
	expect_row(r.out, "avpu_wait_irq CPU/frame",
		   "avpu_wait_irq CPU/frame 322 us 307 us -15 us (-4.7%)");
	expect_row(r.out, "avpu_wait_irq wall avg",
		   "avpu_wait_irq wall avg 39.0 ms 39.1 ms +0.1 ms (+0.3%)");
	expect_row(r.out, "rmem_flush calls/frame",
		   "rmem_flush calls/frame 9.01 7.01 -2.00 (-22.2%)");
	expect_row(r.out, "stream_get calls", "stream_get calls - 760 only in B");
	expect_row(r.out, "stream_get EAGAIN retries", "stream_get EAGAIN retries - 10 only in B");
	expect_row(r.out, "published stream bytes",
		   "published stream bytes 0 94,371,840 +94,371,840 (new)");
	TAP_OK(strstr(r.out, "A: ") && strstr(r.out, "report 3 (every 250 frames), line 4, "
						      "2 other lines skipped"),
	       "fixtures: the last report, the skipped lines said");
	h_run_free(&r);

	TAP_OK(h_run(&r, argv_md, NULL) == 0 && r.status == 0, "markdown: succeeds");
	TAP_OK(strstr(r.out, "| Metric | Cached ring | Sparse uncached ring | Change |\n"
			     "| --- | ---: | ---: | --- |\n") != NULL,
	       "markdown: the header and the alignment row");
	TAP_OK(strstr(r.out, "| cache calls | 6,756 | 5,257 | -1,499 (-22.2%) |\n") != NULL,
	       "markdown: a row");
	h_run_free(&r);

	TAP_OK(h_run(&r, argv_r1, NULL) == 0 && r.status == 0, "one file: succeeds");
	expect_row(r.out, "completed frames", "completed frames 250");
	expect_row(r.out, "rmem_flush cache bytes", "rmem_flush cache bytes 3,485,166,250");
	TAP_OK(strstr(r.out, "report 1 (every 250 frames), line 1") && !strstr(r.out, "Change"),
	       "one file: --report 1, no change column");
	h_run_free(&r);
}

static void test_errors(void)
{
	char *missing[] = { (char *)perflink, "compare", "/nonexistent/a.jsonl", b_path, NULL };
	char *field[] = { (char *)perflink, "compare", a_path, bad_path, NULL };
	char *neg[] = { (char *)perflink, "compare", neg_path, NULL };
	char *noreport[] = { (char *)perflink, "compare", "--report", "9", a_path, b_path, NULL };
	char *nopid[] = { (char *)perflink, "compare", "--pid", "1", a_path, NULL };
	char *three[] = { (char *)perflink, "compare", a_path, b_path, a_path, NULL };
	char *badopt[] = { (char *)perflink, "compare", "--fast", a_path, NULL };
	char *help[] = { (char *)perflink, "compare", "--help", NULL };
	struct h_run r;

	h_run(&r, missing, NULL);
	TAP_OK(r.status == 1 && strstr(r.err, "/nonexistent/a.jsonl: No such file"),
	       "a missing file: status 1 and why (%s)", h_oneline(r.err));
	h_run_free(&r);
	h_run(&r, field, NULL);
	TAP_OK(r.status == 1 && strstr(r.err, "missing_field.jsonl: line 1: stage 'avpu_submit'"),
	       "a report with a field missing is refused, not read as 0 (%s)", h_oneline(r.err));
	h_run_free(&r);
	h_run(&r, neg, NULL);
	TAP_OK(r.status == 1 && strstr(r.err, "not a count"), "a negative count is refused (%s)",
	       h_oneline(r.err));
	h_run_free(&r);
	h_run(&r, noreport, NULL);
	TAP_OK(r.status == 1 && strstr(r.err, "no such report"), "--report 9: no such report");
	h_run_free(&r);
	h_run(&r, nopid, NULL);
	TAP_OK(r.status == 1 && strstr(r.err, "of that pid"), "--pid: none of that pid");
	h_run_free(&r);
	h_run(&r, three, NULL);
	TAP_OK(r.status == 2, "three files: usage error");
	h_run_free(&r);
	h_run(&r, badopt, NULL);
	TAP_OK(r.status == 2 && strstr(r.err, "fast"), "an unknown option: usage error");
	h_run_free(&r);
	h_run(&r, help, NULL);
	TAP_OK(r.status == 0 && strstr(r.out, "usage: perflink compare"), "--help");
	h_run_free(&r);
}

/* Two real runs, B copying half the bytes of A per frame. */
static void test_real_runs(void)
{
	char dir[256], stages[300], out_a[300], out_b[300], text[1024];
	char env_preload[600], env_stages[400], env_out[400];
	const char *env[] = { env_preload, "PERFLINK_PROFILE=1", "PERFLINK_PROFILE_INTERVAL=25",
			      "PERFLINK_PROFILE_SYSLOG=off", env_stages, env_out, NULL };
	char *run_a[] = { (char *)workload, "copy", "25", "0", "2097152",
			  "wait", "25", "1000", NULL };
	char *run_b[] = { (char *)workload, "copy", "25", "0", "1048576",
			  "wait", "25", "1000", NULL };
	char *cmp[] = { (char *)perflink, "compare", out_a, out_b, NULL };
	struct h_run r;

	if (h_tempdir(dir, sizeof(dir), "compare") < 0)
		abort();
	snprintf(stages, sizeof(stages), "%s/t.stages", dir);
	snprintf(out_a, sizeof(out_a), "%s/a.jsonl", dir);
	snprintf(out_b, sizeof(out_b), "%s/b.jsonl", dir);
	snprintf(text, sizeof(text),
		 "stage frame_wait wait * 0x%lx boundary\n"
		 "stage frame_copy cache * 0x%lx cache-bytes=%zu:8\n",
		 (unsigned long)SECCOMP_IOCTL_NOTIF_RECV, (unsigned long)UFFDIO_COPY,
		 offsetof(struct uffdio_copy, len));
	h_write_file(stages, text);
	snprintf(env_preload, sizeof(env_preload), "LD_PRELOAD=%s", shim);
	snprintf(env_stages, sizeof(env_stages), "PERFLINK_STAGES=%s", stages);

	snprintf(env_out, sizeof(env_out), "PERFLINK_PROFILE_OUT=%s", out_a);
	h_run(&r, run_a, env);
	if (r.status == 77) {
		TAP_SKIP("real runs: this kernel lacks seccomp listeners or userfaultfd");
		h_run_free(&r);
		h_rmdir(dir);
		return;
	}
	TAP_OK(r.status == 0, "real runs: A ran (%s)", h_oneline(r.err));
	h_run_free(&r);
	snprintf(env_out, sizeof(env_out), "PERFLINK_PROFILE_OUT=%s", out_b);
	h_run(&r, run_b, env);
	TAP_OK(r.status == 0, "real runs: B ran (%s)", h_oneline(r.err));
	h_run_free(&r);

	h_run(&r, cmp, NULL);
	TAP_OK(r.status == 0, "real runs: compare succeeds (%s)", h_oneline(r.err));
	h_diag(r.out);
	expect_row(r.out, "completed frames", "completed frames 25 25 unchanged");
	expect_row(r.out, "frame_copy cache bytes",
		   "frame_copy cache bytes 52,428,800 26,214,400 -26,214,400 (-50.0%)");
	expect_row(r.out, "frame_copy calls/frame", "frame_copy calls/frame 1.00 1.00 unchanged");
	TAP_OK(row(r.out, "frame_copy CPU/frame") && row(r.out, "frame_wait wall avg"),
	       "real runs: CPU and wall rows for each stage");
	h_run_free(&r);
	h_rmdir(dir);
}

int main(void)
{
	perflink = getenv("PL_PERFLINK");
	shim = getenv("PL_PRELOAD_LIB");
	workload = getenv("PL_WORKLOAD");
	fixtures = getenv("PL_PRELOAD_FIXTURES");
	if (!perflink || !shim || !workload || !fixtures) {
		printf("Bail out! PL_PERFLINK, PL_PRELOAD_LIB, PL_WORKLOAD, PL_PRELOAD_FIXTURES\n");
		return 1;
	}
	snprintf(a_path, sizeof(a_path), "%s/cached_ring.jsonl", fixtures);
	snprintf(b_path, sizeof(b_path), "%s/uncached_ring.jsonl", fixtures);
	snprintf(bad_path, sizeof(bad_path), "%s/missing_field.jsonl", fixtures);
	snprintf(neg_path, sizeof(neg_path), "%s/negative.jsonl", fixtures);
	test_fixtures();
	test_errors();
	test_real_runs();
	return tap_done();
}
