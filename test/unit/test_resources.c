/* The resource sampler on recorded /proc trees (--proc-root): the captured
 * live 6.18 tree, and the hand-made 4.9 (AGNOS, no smaps_rollup) and 3.10
 * trees (see their READMEs). Checks what each line says, that fields a
 * kernel lacks are left out rather than written as 0, and, through the
 * injected-failure seam, what happens when a process or thread exits in the
 * middle of a tick or a file cannot be read. */
#include "resources.h"
#include "resources_priv.h"
#include "tap.h"
#include "test_resources_jsonl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <unistd.h>

#define FIX PL_FIXTURES "/proc/"

static struct pl_resources *open_at(const char *root, const char *pids, const char *names,
				    double pss_s, struct jl_capture *cap, int *err_out)
{
	struct pl_resources_config cfg;
	struct pl_resources *r = NULL;
	int err;

	pl__resources_config_init(&cfg);
	free(cfg.out_path);
	cfg.out_path = strdup("");
	free(cfg.proc_root);
	cfg.proc_root = strdup(root);
	cfg.pids = pids ? strdup(pids) : NULL;
	cfg.names = names ? strdup(names) : NULL;
	cfg.pss_interval_s = pss_s;
	cfg.on_line = jl_capture_line;
	cfg.on_line_ctx = cap;
	memset(cap, 0, sizeof(*cap));
	err = pl__resources_open(&r, &cfg);
	pl__resources_config_free(&cfg);
	if (err_out)
		*err_out = err;
	return err == 0 ? r : NULL;
}

/* Take n ticks and parse everything written so far. */
static void ticks(struct pl_resources *r, int n, struct jl_capture *cap, struct jl_lines *out)
{
	int i;

	for (i = 0; i < n; i++)
		TAP_OK(pl__resources_tick(r) == 0, "tick %d", i);
	jl_lines_parse(out, cap->text ? cap->text : "");
	TAP_OK(out->all_ok, "every line is one JSON object ending in a newline");
}

static void test_agnos49(void)
{
	struct jl_capture cap;
	struct jl_lines l;
	struct pl_resources *r = open_at(FIX "agnos-4.9", "1234,1250", NULL, 10, &cap, NULL);
	const struct jl_doc *h, *s;
	int cam, log;

	TAP_OK(r != NULL, "4.9: opens on the tree");
	if (!r)
		return;
	ticks(r, 1, &cap, &l);
	TAP_EQ_U64(l.n, 2, "header and one sample");
	h = &l.doc[0];
	s = &l.doc[1];
	TAP_EQ_STR(jl_str(h, "type"), "header", "first line is the header");
	TAP_EQ_STR(jl_str(h, "kernel_release"), "4.9.103+", "release from the tree");
	TAP_EQ_STR(jl_str(h, "smaps_rollup"), "false", "no smaps_rollup on 4.9");
	TAP_EQ_STR(jl_str(h, "pss_source"), "smaps", "PSS from smaps");
	TAP_EQ_U64(jl_u64(h, "sysctl.vm.extra_free_kbytes"), 32768, "extra_free_kbytes recorded");
	TAP_EQ_U64(jl_u64(h, "sysctl.vm.min_free_kbytes"), 8192, "min_free_kbytes");
	TAP_EQ_U64(jl_u64(h, "sysctl.vm.dirty_expire_centisecs"), 200, "dirty_expire_centisecs");
	TAP_OK(jl_find(h, "sysctl.kernel.task_delayacct") &&
		       jl_find(h, "sysctl.kernel.task_delayacct")->kind == PL_JSON_NULL,
	       "task_delayacct: explicit null before 5.14");
	TAP_EQ_STR(jl_str(h, "sysctl_absent.0"), "kernel.task_delayacct", "and listed as absent");
	TAP_OK(jl_u64(h, "clk_tck") > 0 && jl_u64(h, "page_size") >= 4096 &&
		       jl_u64(h, "ncpu_online") > 0,
	       "clock tick, page size, CPUs recorded");
	TAP_EQ_U64(jl_u64(h, "selection.pids.1"), 1250, "selection recorded");

	TAP_EQ_STR(jl_str(s, "type"), "sample", "second line is a sample");
	TAP_OK(jl_u64(s, "mono_ns") != JL_MISSING && jl_u64(s, "wall_ns") != JL_MISSING,
	       "monotonic and wall timestamps");
	TAP_OK(jl_double(s, "sampler_ms") >= 0, "sampler_ms");
	TAP_EQ_STR(jl_str(s, "pss"), "true", "first sample reads PSS");
	TAP_EQ_U64(jl_u64(s, "meminfo_kb.MemAvailable"), 1502340, "MemAvailable");
	TAP_EQ_U64(jl_u64(s, "meminfo_kb.Dirty"), 48212, "Dirty");
	TAP_OK(!jl_has(s, "meminfo_kb.KReclaimable"), "KReclaimable absent on 4.9");
	TAP_EQ_U64(jl_u64(s, "vmstat.allocstall_normal"), 41, "per-zone allocstall (4.8+)");
	TAP_EQ_U64(jl_u64(s, "vmstat.allocstall_dma"), 8, "allocstall_dma");
	TAP_OK(!jl_has(s, "vmstat.pgskip_normal"), "unlisted per-zone counters left out");
	TAP_EQ_U64(jl_u64(s, "vmstat.compact_stall"), 61, "compact_stall");
	TAP_EQ_U64(jl_u64(s, "vmstat.pgsteal_direct"), 12033, "pgsteal_direct");
	TAP_OK(!jl_has(s, "vmstat.oom_kill") && !jl_has(s, "vmstat.nr_free_pages"),
	       "oom_kill absent; unlisted counters left out");
	TAP_EQ_STR(jl_str(s, "buddyinfo.1.zone"), "Normal", "buddyinfo zone");
	TAP_EQ_U64(jl_u64(s, "buddyinfo.1.free_blocks.3"), 41, "order-3 free blocks");
	TAP_EQ_U64(jl_len(s, "buddyinfo.1.free_blocks"), 11, "11 orders");

	cam = jl_index(s, "procs", "pid", "1234");
	log = jl_index(s, "procs", "pid", "1250");
	TAP_OK(cam >= 0 && log >= 0, "both processes sampled");
	TAP_EQ_STR(jl_str(s, "procs.%d.comm", cam), "camerad", "comm");
	TAP_EQ_STR(jl_str(s, "procs.%d.by.0", cam), "pid", "chosen by pid");
	TAP_EQ_U64(jl_u64(s, "procs.%d.utime_ticks", cam), 4211, "utime ticks");
	TAP_EQ_U64(jl_u64(s, "procs.%d.stime_ticks", cam), 1302, "stime ticks");
	TAP_EQ_U64(jl_u64(s, "procs.%d.minflt", cam), 60211, "minflt");
	TAP_EQ_U64(jl_u64(s, "procs.%d.majflt", cam), 12, "majflt");
	TAP_EQ_U64(jl_u64(s, "procs.%d.blkio_ticks", cam), 7, "blkio ticks (field 42)");
	TAP_EQ_U64(jl_u64(s, "procs.%d.uid", cam), 1000, "uid");
	TAP_EQ_U64(jl_u64(s, "procs.%d.vm_kb.VmRSS", cam), 198400, "VmRSS");
	TAP_EQ_U64(jl_u64(s, "procs.%d.vm_kb.RssShmem", cam), 4100, "RssShmem");
	TAP_EQ_U64(jl_u64(s, "procs.%d.vm_kb.VmSwap", cam), 2048, "VmSwap");
	TAP_EQ_U64(jl_len(s, "procs.0.threads"), 3, "three threads listed");
	TAP_EQ_STR(jl_str(s, "procs.%d.threads.1.comm", cam), "camerad_rear", "thread comm");
	TAP_EQ_U64(jl_u64(s, "procs.%d.threads.1.run_ns", cam), 18100000000ull, "thread run_ns");
	TAP_EQ_U64(jl_u64(s, "procs.%d.threads.1.wait_ns", cam), 120022300, "thread wait_ns");
	TAP_EQ_U64(jl_u64(s, "procs.%d.threads.1.timeslices", cam), 9120, "thread timeslices");
	TAP_EQ_U64(jl_u64(s, "procs.%d.threads.1.vcsw", cam), 9020, "thread voluntary switches");
	TAP_EQ_U64(jl_u64(s, "procs.%d.threads.1.nvcsw", cam), 102, "thread involuntary");
	TAP_EQ_U64(jl_u64(s, "procs.%d.threads.1.utime_ticks", cam), 1810, "thread utime");
	TAP_EQ_U64(jl_u64(s, "procs.%d.pss_kb.Pss", cam), 162698, "PSS summed from smaps");
	TAP_EQ_U64(jl_u64(s, "procs.%d.pss_kb.Rss", cam), 198400, "smaps Rss == VmRSS");
	TAP_EQ_U64(jl_u64(s, "procs.%d.pss_kb.SwapPss", cam), 2048, "SwapPss");
	TAP_EQ_U64(jl_u64(s, "procs.%d.pss_mappings", cam), 6, "mappings counted");
	TAP_OK(!jl_has(s, "procs.%d.pss_kb.Pss_Anon", cam), "Pss_Anon absent on 4.9, not 0");
	TAP_EQ_U64(jl_u64(s, "procs.%d.pss_kb.Pss", log), 120, "second process's PSS");
	TAP_EQ_U64(jl_len(s, "exited"), 0, "nothing exited");
	jl_lines_free(&l);
	pl__resources_close(r);
	free(cap.text);
}

static void test_old310(void)
{
	struct jl_capture cap;
	struct jl_lines l;
	struct pl_resources *r = open_at(FIX "old-3.10/tree", "1234", NULL, 10, &cap, NULL);
	const struct jl_doc *h, *s;

	TAP_OK(r != NULL, "3.10: opens on the tree");
	if (!r)
		return;
	ticks(r, 1, &cap, &l);
	h = &l.doc[0];
	s = &l.doc[1];
	TAP_EQ_STR(jl_str(h, "kernel_release"), "3.10.14__isvp_swan_1.0__", "3.10 release");
	TAP_EQ_STR(jl_str(h, "pss_source"), "smaps", "PSS from smaps");
	TAP_OK(jl_find(h, "sysctl.vm.extra_free_kbytes")->kind == PL_JSON_NULL &&
		       jl_find(h, "sysctl.vm.watermark_scale_factor")->kind == PL_JSON_NULL,
	       "mainline 3.10: extra_free_kbytes and watermark_scale_factor null");
	TAP_EQ_U64(jl_len(h, "sysctl_absent"), 3, "three sysctls listed absent");
	TAP_EQ_U64(jl_u64(h, "sysctl.vm.min_free_kbytes"), 1024, "min_free_kbytes");
	TAP_OK(!jl_has(s, "meminfo_kb.MemAvailable"), "no MemAvailable before 3.14: left out");
	TAP_EQ_U64(jl_u64(s, "meminfo_kb.MemFree"), 4012, "MemFree");
	TAP_EQ_U64(jl_u64(s, "vmstat.pgsteal_kswapd_normal"), 10021, "per-zone pgsteal");
	TAP_OK(!jl_has(s, "procs.0.blkio_ticks"), "stat without field 42: blkio left out");
	TAP_EQ_U64(jl_u64(s, "procs.0.utime_ticks"), 731, "utime");
	TAP_EQ_U64(jl_u64(s, "procs.0.vm_kb.VmRSS"), 8060, "VmRSS");
	TAP_OK(!jl_has(s, "procs.0.vm_kb.RssAnon") && !jl_has(s, "procs.0.vm_kb.RssFile"),
	       "RssAnon/RssFile left out before 4.5");
	TAP_EQ_U64(jl_len(s, "procs.0.threads"), 3, "threads listed without schedstat");
	TAP_OK(!jl_has(s, "procs.0.threads.1.run_ns") && !jl_has(s, "procs.0.threads.1.timeslices"),
	       "no schedstat: run/wait times left out");
	TAP_EQ_U64(jl_u64(s, "procs.0.threads.1.vcsw"), 40211, "context switches still there");
	TAP_EQ_STR(jl_str(s, "procs.0.threads.1.comm"), "enc_stream0", "thread comm");
	TAP_EQ_U64(jl_u64(s, "procs.0.pss_kb.Pss"), 7214, "PSS summed from 3.10 smaps");
	TAP_OK(!jl_has(s, "procs.0.pss_kb.SwapPss"), "SwapPss left out before 4.3");
	jl_lines_free(&l);
	pl__resources_close(r);
	free(cap.text);
}

static void test_live_capture(void)
{
	struct jl_capture cap;
	struct jl_lines l;
	struct pl_resources *r = open_at(FIX "live-6.18-tree", NULL, "capture", 10, &cap, NULL);
	const struct jl_doc *h, *s;
	int i;

	TAP_OK(r != NULL, "live capture: opens");
	if (!r)
		return;
	ticks(r, 1, &cap, &l);
	h = &l.doc[0];
	s = &l.doc[1];
	TAP_EQ_STR(jl_str(h, "pss_source"), "smaps_rollup", "6.18 tree: smaps_rollup probed");
	TAP_EQ_STR(jl_str(h, "smaps_rollup"), "true", "smaps_rollup true");
	TAP_OK(jl_find(h, "sysctl.kernel.task_delayacct")->kind == PL_JSON_NUMBER,
	       "task_delayacct recorded on 6.18");
	TAP_EQ_U64(jl_u64(s, "procs.0.pid"), 11915, "found by name");
	TAP_EQ_STR(jl_str(s, "procs.0.by.0"), "name", "chosen by name");
	TAP_EQ_U64(jl_u64(s, "procs.0.pss_kb.Pss"), 144, "PSS from smaps_rollup");
	TAP_EQ_U64(jl_u64(s, "procs.0.pss_kb.Pss_Anon"), 124, "Pss_Anon on 6.x");
	TAP_OK(!jl_has(s, "procs.0.pss_mappings"), "no mapping count from the rollup");
	TAP_EQ_U64(jl_len(s, "procs.0.threads"), 4, "four threads");
	for (i = 0; i < 3; i++) {
		char comm[16];

		snprintf(comm, sizeof(comm), "worker-%d", i);
		TAP_EQ_STR(jl_str(s, "procs.0.threads.%d.comm", i + 1), comm, "worker thread comm");
	}
	TAP_EQ_U64(jl_u64(s, "procs.0.threads.1.run_ns"), 16356595, "captured run_ns");
	TAP_EQ_U64(jl_u64(s, "procs.0.threads.3.nvcsw"), 9, "captured nvcsw");
	jl_lines_free(&l);
	pl__resources_close(r);
	free(cap.text);

	/* As a descendant of init (it was reparented before the capture), threads
	 * off. PID 1 is not in the tree: a parent need not be listed. */
	r = open_at(FIX "live-6.18-tree", NULL, NULL, 0, &cap, NULL);
	TAP_OK(r != NULL, "opens without a selection");
	if (!r)
		return;
	r->cfg.threads = false;
	pl__resources_add_descendants_of(r, 1);
	ticks(r, 1, &cap, &l);
	s = &l.doc[1];
	TAP_EQ_U64(jl_u64(s, "procs.0.pid"), 11915,
		   "descendant of 1 (its parent when captured) found");
	TAP_EQ_STR(jl_str(s, "procs.0.by.0"), "tree", "chosen as part of a tree");
	TAP_OK(!jl_has(s, "procs.0.threads"), "--threads=no: no thread list");
	TAP_EQ_STR(jl_str(s, "pss"), "false", "--pss-interval 0: no PSS");
	TAP_OK(!jl_has(s, "procs.0.pss_kb"), "and no PSS fields");
	TAP_EQ_U64(jl_u64(&l.doc[0], "selection.descendants_of.0"), 1,
		   "header names the parent");
	jl_lines_free(&l);
	pl__resources_close(r);
	free(cap.text);
}

static void test_bad_config(void)
{
	struct jl_capture cap;
	int err = 0;

	TAP_OK(!open_at(FIX "agnos-4.9", "12x", NULL, 10, &cap, &err) && err == -EINVAL,
	       "--pids 12x refused");
	TAP_OK(!open_at(FIX "agnos-4.9", "0", NULL, 10, &cap, &err) && err == -EINVAL,
	       "--pids 0 refused");
	TAP_OK(!open_at(FIX "agnos-4.9", NULL, " , ,", 10, &cap, &err) && err == -EINVAL,
	       "--names with no name refused");
	TAP_OK(!open_at(FIX "no-such-tree", "1", NULL, 10, &cap, &err) && err == -ENOENT,
	       "missing proc root refused");
	{
		struct pl_resources *r = open_at(FIX "agnos-4.9", "1234,999999", NULL, 10, &cap,
						 &err);
		struct jl_lines l;

		TAP_OK(r != NULL, "a missing pid is not fatal");
		if (r) {
			ticks(r, 1, &cap, &l);
			TAP_EQ_U64(jl_u64(&l.doc[0], "selection.pids_missing.0"), 999999,
				   "missing pid named in the header");
			TAP_EQ_U64(jl_len(&l.doc[1], "procs"), 1, "the other one is sampled");
			jl_lines_free(&l);
			pl__resources_close(r);
			free(cap.text);
		}
	}
}

/* Injected failures: which (pid, tid, file) fails, and from when. */
struct fault {
	int pid, tid;
	const char *file; /* NULL: any file */
	int err;
	const char *after; /* fail only once this file of pid was asked for */
	bool after_too;    /* ... that file included */
	bool armed;
};

static int fault_fn(void *ctx, int pid, int tid, const char *file)
{
	struct fault *f = ctx;

	if (pid != f->pid)
		return 0;
	if (f->after && !f->armed) {
		if (strcmp(file, f->after) != 0)
			return 0;
		f->armed = true;
		if (!f->after_too)
			return 0;
	}
	if (f->tid >= 0 && tid != f->tid)
		return 0;
	if (f->file && strcmp(file, f->file) != 0)
		return 0;
	return f->err;
}

static struct jl_doc *fault_tick(struct fault *f, struct jl_lines *l, struct jl_capture *cap,
				 struct pl_resources **rp)
{
	struct pl_resources *r = open_at(FIX "agnos-4.9", "1234,1250", NULL, 10, cap, NULL);

	*rp = r;
	if (!r)
		return NULL;
	pl__resources_set_fault(r, fault_fn, f);
	ticks(r, 1, cap, l);
	return l->n >= 2 ? &l->doc[1] : NULL;
}

static void fault_done(struct jl_lines *l, struct jl_capture *cap, struct pl_resources *r)
{
	jl_lines_free(l);
	pl__resources_close(r);
	free(cap->text);
}

static void test_faults(void)
{
	struct pl_resources_stats st;
	struct pl_resources *r;
	struct jl_capture cap;
	struct jl_lines l;
	struct jl_doc *s;

	/* The process exits between its stat and its status. */
	{
		struct fault f = { 1234, -1, NULL, -ESRCH, "status", true, false };

		s = fault_tick(&f, &l, &cap, &r);
		TAP_OK(s && jl_index(s, "procs", "pid", "1234") < 0, "exit mid-read: not sampled");
		TAP_OK(s && jl_u64(s, "exited.0.pid") == 1234, "exit mid-read: listed as exited");
		TAP_EQ_STR(s ? jl_str(s, "exited.0.why") : NULL, "exited mid-read", "why");
		TAP_OK(s && jl_index(s, "procs", "pid", "1250") >= 0, "the other process is fine");
		fault_done(&l, &cap, r);
	}
	/* The process exits after its smaps was read: a partial sum must not
	 * be written. The fault fails everything after smaps. */
	{
		struct fault f = { 1234, -1, NULL, -ESRCH, "smaps", false, false };

		s = fault_tick(&f, &l, &cap, &r);
		TAP_OK(s && jl_index(s, "procs", "pid", "1234") < 0,
		       "exit after the smaps read: no PSS written for it");
		TAP_EQ_STR(s ? jl_str(s, "exited.0.why") : NULL, "exited mid-read",
			   "and it is listed as exited mid-read");
		fault_done(&l, &cap, r);
	}
	/* One thread exits mid-read. */
	{
		struct fault f = { 1234, 1240, NULL, -ESRCH, NULL, false, false };

		s = fault_tick(&f, &l, &cap, &r);
		TAP_EQ_U64(s ? jl_len(s, "procs.0.threads") : 0, 2, "gone thread left out");
		TAP_EQ_U64(s ? jl_u64(s, "procs.0.threads_gone") : 0, 1, "and counted");
		TAP_OK(s && jl_index(s, "procs.0.threads", "tid", "1240") < 0,
		       "tid 1240 not listed");
		fault_done(&l, &cap, r);
	}
	/* A thread's schedstat fails with ESRCH but its stat still reads:
	 * the file is missing, the thread is there. */
	{
		struct fault f = { 1234, 1241, "schedstat", -ENOENT, NULL, false, false };
		int t;

		s = fault_tick(&f, &l, &cap, &r);
		t = s ? jl_index(s, "procs.0.threads", "tid", "1241") : -1;
		TAP_OK(t >= 0 && !jl_has(s, "procs.0.threads.%d.run_ns", t) &&
			       jl_u64(s, "procs.0.threads.%d.vcsw", t) == 6011,
		       "missing schedstat: thread listed without run_ns");
		fault_done(&l, &cap, r);
	}
	/* Another user's process: smaps unreadable. */
	{
		struct fault f = { 1234, 0, "smaps", -EACCES, NULL, false, false };

		s = fault_tick(&f, &l, &cap, &r);
		TAP_EQ_STR(s ? jl_str(s, "procs.0.pss_error") : NULL, "Permission denied",
			   "EACCES on smaps: said so");
		TAP_OK(s && !jl_has(s, "procs.0.pss_kb") &&
			       jl_u64(s, "procs.0.vm_kb.VmRSS") == 198400,
		       "no PSS numbers, the rest sampled");
		fault_done(&l, &cap, r);
	}
	/* smaps fails with ESRCH while the process stays: a kernel thread
	 * (no mm). PSS is null, not an error, and the process is listed. */
	{
		struct fault f = { 1250, 0, "smaps", -ESRCH, NULL, false, false };
		const struct jl_kv *kv;

		s = fault_tick(&f, &l, &cap, &r);
		kv = s ? jl_find(s, "procs.1.pss_kb") : NULL;
		TAP_OK(kv && kv->kind == PL_JSON_NULL && !jl_has(s, "procs.1.pss_error") &&
			       jl_u64(s, "procs.1.pid") == 1250,
		       "no mm: pss_kb null, no error, still sampled");
		fault_done(&l, &cap, r);
	}
	/* An I/O error on status: the VM counters are left out and counted. */
	{
		struct fault f = { 1250, 0, "status", -EIO, NULL, false, false };

		s = fault_tick(&f, &l, &cap, &r);
		TAP_OK(s && jl_u64(s, "procs.1.pid") == 1250 && !jl_has(s, "procs.1.vm_kb") &&
			       jl_u64(s, "procs.1.utime_ticks") == 911,
		       "status EIO: no vm_kb, stat fields kept");
		pl__resources_get_stats(r, &st);
		TAP_EQ_U64(st.read_errors, 1, "read error counted");
		fault_done(&l, &cap, r);
	}
	/* The task directory cannot be listed. */
	{
		struct fault f = { 1250, 0, "task", -EACCES, NULL, false, false };

		s = fault_tick(&f, &l, &cap, &r);
		TAP_EQ_STR(s ? jl_str(s, "procs.1.threads_error") : NULL, "Permission denied",
			   "task dir EACCES: said so");
		fault_done(&l, &cap, r);
	}
}

static int write_file(const char *path, const char *text)
{
	/* In place, as a kernel would change it: a kept fd sees the new text. */
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static void test_fixture_pid_reuse(void)
{
	char dir[] = "/tmp/pl-res-XXXXXX", cmd[512], path[600];
	struct pl_resources_stats st;
	struct pl_resources *r;
	struct jl_capture cap;
	struct jl_lines l;
	const struct jl_doc *s;

	if (!mkdtemp(dir)) {
		TAP_SKIP("mkdtemp");
		return;
	}
	snprintf(cmd, sizeof(cmd), "cp -R '%s' '%s/t'", FIX "agnos-4.9", dir);
	if (system(cmd) != 0) {
		TAP_SKIP("cp -R");
		return;
	}
	snprintf(path, sizeof(path), "%s/t", dir);
	r = open_at(path, "1250", NULL, 0, &cap, NULL);
	TAP_OK(r != NULL, "opens on a copy");
	if (!r)
		return;
	TAP_OK(pl__resources_tick(r) == 0, "first tick");
	/* A new loggerd with the same pid but a later start. */
	snprintf(path, sizeof(path), "%s/t/1250/stat", dir);
	TAP_OK(write_file(path, "1250 (loggerd) S 1200 1234 1234 0 -1 4194560 3 0 0 0 1 1 0 0 "
				"-2 0 1 0 9999 302112768 5100 18446744073709551615 1 1 0 0 0 0 0 "
				"4096 1073775864 0 0 0 17 1 1 1 0 0 0 0 0 0 0 0 0 0 0\n") == 0,
	       "pid 1250 now has another starttime");
	TAP_OK(pl__resources_tick(r) == 0, "second tick");
	jl_lines_parse(&l, cap.text);
	s = &l.doc[2];
	TAP_EQ_U64(jl_len(&l.doc[1], "procs"), 1, "sampled before");
	TAP_EQ_U64(jl_len(s, "procs"), 0, "the new process under the old pid is not sampled");
	TAP_EQ_STR(jl_str(s, "exited.0.why"), "pid reused", "the old one is reported gone");
	TAP_EQ_U64(jl_u64(s, "exited.0.starttime_ticks"), 8200, "with its own starttime");
	TAP_OK(pl__resources_tick(r) == 0, "third tick");
	pl__resources_get_stats(r, &st);
	TAP_EQ_U64(st.processes, 0, "still nothing sampled");
	TAP_EQ_U64(st.exited, 1, "one exit counted");
	jl_lines_free(&l);
	pl__resources_close(r);
	free(cap.text);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
}

/* The AGNOS 4.9 fixture's pid 1250, written to path. */
static void agnos_output_config(struct pl_resources_config *cfg, const char *path)
{
	pl__resources_config_init(cfg);
	free(cfg->out_path);
	cfg->out_path = strdup(path);
	free(cfg->proc_root);
	cfg->proc_root = strdup(FIX "agnos-4.9");
	cfg->pids = strdup("1250");
}

static void test_output_file(void)
{
	char dir[] = "/tmp/pl-res-XXXXXX", path[64], buf[65536];
	struct pl_resources_config cfg;
	struct pl_resources *r = NULL;
	struct jl_lines l;
	ssize_t n;
	int fd;

	if (!mkdtemp(dir)) {
		TAP_SKIP("mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/resources.jsonl", dir);
	agnos_output_config(&cfg, path);
	TAP_OK(pl__resources_open(&r, &cfg) == 0, "opens with an output file");
	pl__resources_config_free(&cfg);
	if (!r)
		return;
	TAP_OK(pl__resources_tick(r) == 0, "tick 1");
	/* Flushed each tick: the file holds both lines before close. */
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	buf[n > 0 ? n : 0] = '\0';
	jl_lines_parse(&l, buf);
	TAP_OK(l.all_ok && l.n == 2, "header and sample on disk after one tick");
	jl_lines_free(&l);
	TAP_OK(pl__resources_tick(r) == 0, "tick 2");
	n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
	buf[n > 0 ? n : 0] = '\0';
	jl_lines_parse(&l, buf);
	TAP_OK(l.all_ok && l.n == 3 && jl_u64(&l.doc[2], "seq") == 1, "second sample appended");
	jl_lines_free(&l);
	if (fd >= 0)
		close(fd);
	pl__resources_close(r);
	unlink(path);
	rmdir(dir);

	/* a symbolic link planted where the file goes is refused, not followed */
	memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
	if (mkdtemp(dir)) {
		char victim[96];

		snprintf(victim, sizeof(victim), "%s/victim", dir);
		snprintf(path, sizeof(path), "%s/resources.jsonl", dir);
		fd = open(victim, O_WRONLY | O_CREAT, 0600);
		n = fd >= 0 ? write(fd, "precious", 8) : -1;
		if (fd >= 0)
			close(fd);
		if (symlink(victim, path) == 0) {
			agnos_output_config(&cfg, path);
			TAP_OK(pl__resources_open(&r, &cfg) == -ELOOP && r == NULL,
			       "an output that is a symbolic link is refused");
			pl__resources_config_free(&cfg);
			fd = open(victim, O_RDONLY);
			n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
			buf[n > 0 ? n : 0] = '\0';
			if (fd >= 0)
				close(fd);
			TAP_OK(!strcmp(buf, "precious"), "and the file it points to is untouched");
			unlink(path);
		}
		unlink(victim);
		rmdir(dir);
	}

	pl__resources_config_init(&cfg);
	free(cfg.out_path);
	cfg.out_path = strdup("/nonexistent-dir/x.jsonl");
	cfg.pids = strdup("1");
	TAP_OK(pl__resources_open(&r, &cfg) == -ENOENT && r == NULL,
	       "an output that cannot be created is refused at open");
	pl__resources_config_free(&cfg);
}

/* A file size limit (or a full disk) reached mid-line: the output ends at
 * its last whole line, never in half of one. */
static void test_output_whole_lines(void)
{
	char dir[] = "/tmp/pl-res-XXXXXX", path[64], buf[4096];
	struct jl_lines l;
	ssize_t n;
	int fd, status;
	pid_t pid;

	if (!mkdtemp(dir)) {
		TAP_SKIP("mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/resources.jsonl", dir);
	pid = fork();
	if (pid == 0) {
		struct rlimit small = { 1500, 1500 };
		struct pl_resources_config cfg;
		struct pl_resources *r = NULL;

		signal(SIGXFSZ, SIG_IGN);
		agnos_output_config(&cfg, path);
		setrlimit(RLIMIT_FSIZE, &small);
		if (pl__resources_open(&r, &cfg) < 0)
			_exit(2);
		for (int i = 0; i < 100; i++)
			if (pl__resources_tick(r) < 0)
				_exit(0); /* the limit was reached */
		_exit(3);
	}
	waitpid(pid, &status, 0);
	TAP_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "a 1500-byte file size limit stops the sampler with an error (%d)", status);
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	jl_lines_parse(&l, buf);
	TAP_OK(n > 0 && buf[n - 1] == '\n' && l.all_ok && l.n >= 1,
	       "and the file ends at its last whole line (%zd bytes, %zu lines)", n, l.n);
	jl_lines_free(&l);
	unlink(path);
	rmdir(dir);
}

/* Past the fd budget, files are opened and closed each tick: the lines say
 * the same as with kept fds. */
static void test_fd_budget(void)
{
	struct jl_capture cap_kept, cap_once;
	struct jl_lines kept, once;
	struct pl_resources_stats st;
	struct pl_resources *a = open_at(FIX "agnos-4.9", NULL, "camerad,loggerd", 10, &cap_kept,
					 NULL);
	struct pl_resources *b = open_at(FIX "agnos-4.9", NULL, "camerad,loggerd", 10, &cap_once,
					 NULL);
	size_t i, line, same = 0, compared = 0;
	uint64_t before;

	TAP_OK(a && b, "two samplers open");
	if (!a || !b)
		return;
	b->fds_budget = b->fds_kept;
	before = (uint64_t)b->fds_kept;
	ticks(a, 2, &cap_kept, &kept);
	ticks(b, 2, &cap_once, &once);
	pl__resources_get_stats(b, &st);
	TAP_EQ_U64(st.kept_fds, before, "no fd kept past the budget");
	pl__resources_get_stats(a, &st);
	TAP_OK(st.kept_fds > before + 10, "the other keeps its files open (%llu fds)",
	       (unsigned long long)st.kept_fds);
	/* Both samples: the first with PSS, the second without. */
	for (line = 1; line <= 2; line++) {
		for (i = 0; i < kept.doc[line].n; i++) {
			const struct jl_kv *kv = &kept.doc[line].kv[i];
			const char *other;

			if (strncmp(kv->path, "procs.", 6) != 0 || strstr(kv->path, "pss_ms"))
				continue;
			compared++;
			other = jl_str(&once.doc[line], "%s", kv->path);
			if (other && strcmp(other, kv->value) == 0)
				same++;
			else
				printf("# %s: %s vs %s\n", kv->path, kv->value,
				       other ? other : "(absent)");
		}
	}
	TAP_OK(compared > 100 && same == compared, "same process fields either way (%zu of %zu)",
	       same, compared);
	TAP_OK(jl_has(&once.doc[1], "procs.0.pss_kb.Pss"), "PSS read without a kept fd too");
	TAP_EQ_U64(jl_len(&once.doc[2], "procs"), 2, "both processes");
	jl_lines_free(&kept);
	jl_lines_free(&once);
	pl__resources_close(a);
	pl__resources_close(b);
	free(cap_kept.text);
	free(cap_once.text);
}

int main(void)
{
	test_agnos49();
	test_old310();
	test_live_capture();
	test_bad_config();
	test_faults();
	test_fixture_pid_reuse();
	test_output_file();
	test_output_whole_lines();
	test_fd_budget();
	return tap_done();
}
