/* The tracer on /proc trees built in a temporary directory (--proc-root):
 * the CSV it writes, pid reuse, processes that exit mid-read, io files that
 * cannot be read, delay accounting and PSI detection. Plus the CSV formatter
 * on known numbers (the expected strings are what Python's f"{x:.0f}" and
 * f"{x:.3f}" print for the same values). */
#include <errno.h>
#include <grp.h>
#include <math.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "stderr_capture.h"
#include "tap.h"

#include <time.h>
#include "test_tracer_tree.h"
#include "tracer.h"
#include "tracer_priv.h"

static char base[256];

/* A TAP description is one line: quote text up to its first newline. */
static int first_line_len(const char *text)
{
	return (int)strcspn(text, "\n");
}

static void test_csv_format(void)
{
	struct pl_csv_row r = { 1795955920.0175, 892.0315, "controlsd", 42, 'S',
				1536 / 1024.0, 2560 / 1024.0, 70.0, 3.5, 2.5 };
	struct pl_csv_sys s = { 1.0, 2.0, 1, 2, 3, 4, 5, 6, 7 };
	char buf[256];

	TAP_EQ_STR(pl__tracer_csv_header,
		   "wall,mono,proc,pid,state,d_wchar_kB,d_wbytes_kB,d_blkio_ms,disk_d_write_kB,"
		   "disk_d_busy_ms,compact_stall,allocstall,pgmajfault,dirty_kB,writeback_kB,"
		   "memfree_kB,memavail_kB\n",
		   "header is io_stall_tracer.py's");
	TAP_OK(pl__csv_format_row(buf, sizeof(buf), &r) > 0, "row formats");
	TAP_EQ_STR(buf, "1795955920.017,892.032,controlsd,42,S,2,2,70,4,2,,,,,,,\n",
		   "row as Python prints it (half to even: 1.5->2, 2.5->2, 3.5->4)");
	r.label = "evil,name\n";
	r.d_wchar_kb = -0.4;
	pl__csv_format_row(buf, sizeof(buf), &r);
	TAP_EQ_STR(buf, "1795955920.017,892.032,evil_name_,42,S,-0,2,70,4,2,,,,,,,\n",
		   "commas and newlines in a name cannot add columns; -0.4 prints -0 like Python");
	pl__csv_format_sys(buf, sizeof(buf), &s);
	TAP_EQ_STR(buf, "1.000,2.000,SYS,0,-,,,,,,1,2,3,4,5,6,7\n", "SYS row");
	TAP_OK(pl__csv_format_row(buf, 10, &r) == -ENOSPC, "short buffer is an error");
	r.d_wchar_kb = 123456789.5;
	pl__csv_format_row(buf, sizeof(buf), &r);
	TAP_EQ_STR(buf, "1795955920.017,892.032,evil_name_,42,S,123456790,2,70,4,2,,,,,,,\n",
		   ".0f rounds half to even at any size");
}

static void test_vmstat(void)
{
	char path[512];
	uint64_t want = 0;
	const char *txt, *p;
	struct pl_vmstat v;

	snprintf(path, sizeof(path), "%s/proc/old-3.10/vmstat", PL_FIXTURES);
	txt = tree_slurp(path);
	pl__tsys_parse_vmstat_all(txt, &v);
	TAP_EQ_U64(v.alloc, 7, "3.10: the single allocstall counter");
	TAP_EQ_U64(v.compact, 3, "3.10: compact_stall");
	TAP_EQ_U64(v.nr_dirtied, strstr(txt, "\nnr_dirtied ") ? strtoull(strstr(txt,
		   "\nnr_dirtied ") + 12, NULL, 10) : UINT64_MAX, "3.10: nr_dirtied as the file has it");
	snprintf(path, sizeof(path), "%s/proc/live-6.18/vmstat", PL_FIXTURES);
	txt = tree_slurp(path);
	for (p = strstr(txt, "\nallocstall"); p; p = strstr(p + 1, "\nallocstall"))
		want += strtoull(strchr(p, ' ') + 1, NULL, 10);
	pl__tsys_parse_vmstat_all(txt, &v);
	TAP_EQ_U64(v.alloc, want, "6.18: every allocstall_* summed");
	TAP_OK(strstr(txt, "\nnr_dirtied ") && v.nr_dirtied == strtoull(strstr(txt, "\nnr_dirtied ") + 12,
								      NULL, 10),
	       "6.18: nr_dirtied, the pages dirtied since boot");
	TAP_OK(v.nr_written == 55408 && v.dirty_thresh == 1221121 && v.dirty_bg_thresh == 609815,
	       "6.18: nr_written and the kernel's two dirty thresholds");
	pl__tsys_parse_vmstat_all("allocstall_normal x\ncompact_stall 18446744073709551616\n"
				  "nr_dirtied 12a\n", &v);
	TAP_OK(v.alloc == 0 && v.compact == 0, "malformed values are skipped, not guessed");
	TAP_EQ_U64(v.nr_dirtied, UINT64_MAX, "a malformed nr_dirtied reads as unknown");
	pl__tsys_parse_vmstat_all("nr_written 1\nnr_dirty_threshold 9 9\n", &v);
	TAP_OK(v.nr_written == 1 && v.dirty_thresh == UINT64_MAX && v.dirty_bg_thresh == UINT64_MAX,
	       "a malformed or absent threshold reads as unknown");
	pl__tsys_parse_vmstat_all("pgscan_kswapd 5\npgscan_direct 7\npgscan_direct_throttle 99\n"
				  "pgscan_khugepaged 1\npgscan_proactive 2\npgsteal_direct 6\n"
				  "pgscan_anon 30\npgscan_file 3x\npgscan_file 20\n", &v);
	TAP_OK(v.scan_direct == 7 && v.steal_direct == 6 && v.scan_other == 8 && v.scan_all == 50 &&
		       v.have_scan_all,
	       "the reclaim counters: direct, the other reclaimers, every reclaim by LRU "
	       "(not the throttle count; a malformed line skipped)");
	pl__tsys_parse_vmstat_all("pgscan_direct_dma32 3\npgscan_direct_normal 4\n", &v);
	TAP_OK(v.scan_direct == 7 && !v.have_scan_all,
	       "before 4.8, per zone; before 5.8, no pgscan_anon or pgscan_file");
}

/* The settings the tests use: the tree, the CSV, disk vda, two names. */
static void tree_config(struct pl_tracer_config *cfg, const char *root, const char *out)
{
	pl__tracer_config_init(cfg);
	free(cfg->proc_root);
	cfg->proc_root = strdup(root);
	free(cfg->out_path);
	cfg->out_path = strdup(out);
	free(cfg->disks);
	cfg->disks = strdup("vda");
	free(cfg->names);
	cfg->names = strdup("controlsd, loggerd");
}

/* The events the tracer hands on (perflinkd forwards them to the host):
 * how many, and the last one's type. */
static unsigned events_handed_on;
static char last_event_handed_on[64];

static void on_event(void *ctx, const char *json_line)
{
	const char *type = strstr(json_line, "\"type\":\"");

	(void)ctx;
	events_handed_on++;
	snprintf(last_event_handed_on, sizeof(last_event_handed_on), "%.*s",
		 type ? (int)strcspn(type + 8, "\"") : 0, type ? type + 8 : "");
}

static struct pl_tracer *open_tree_split(const char *root, const char *out, bool enable_da,
					  bool cost_split)
{
	struct pl_tracer_config cfg;
	struct pl_tracer *t = NULL;

	tree_config(&cfg, root, out);
	cfg.enable_delayacct = enable_da;
	cfg.cost_split = cost_split;
	cfg.on_event = on_event;
	if (pl__tracer_open(&t, &cfg) < 0)
		t = NULL;
	pl__tracer_config_free(&cfg);
	return t;
}

static struct pl_tracer *open_tree(const char *root, const char *out, bool enable_da)
{
	return open_tree_split(root, out, enable_da, false);
}

/* The CSV's lines of one tick without the wall and mono columns. */
static const char *rows_after(const char *csv, int skip_lines)
{
	static char out[8192];
	const char *p = tree_slurp(csv);
	size_t o = 0;

	for (int i = 0; i < skip_lines && p; i++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	out[0] = '\0';
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		const char *c = strchr(p, ',');

		c = c ? strchr(c + 1, ',') : NULL;
		if (!nl || !c || c > nl)
			break;
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%.*s", (int)(nl - c - 1), c + 1);
		p = nl + 1;
	}
	return out;
}

static int count_lines(const char *path)
{
	const char *p = tree_slurp(path);
	int n = 0;

	for (; *p; p++)
		n += *p == '\n';
	return n;
}

static void test_deltas_and_reuse(void)
{
	char root[300], out[300];
	struct pl_tracer *t;
	struct pl_tracer_stats st;
	int lines;

	snprintf(root, sizeof(root), "%s/reuse", base);
	snprintf(out, sizeof(out), "%s/reuse.csv", base);
	tree_system(root, 1000, 50, 0, 0);
	tree_stat(root, 100, "controlsd", 'S', 1, 500, 10);
	tree_io(root, 100, 0, 0);
	tree_stat(root, 300, "kworker/u8:1", 'S', 1, 5, 0);
	tree_io(root, 300, 0, 0);
	t = open_tree(root, out, false);
	TAP_OK(t != NULL, "tracer opens a temp tree");
	if (!t)
		return;
	TAP_OK(pl__tracer_tick(t) == 0, "tick 1");
	lines = count_lines(out);
	TAP_EQ_STR(rows_after(out, 1), "SYS,0,-,,,,,,0,0,0,40,8,500000,700000",
		   "first tick: no deltas, only the SYS row");

	tree_system(root, 1007, 53, 2, 4);
	tree_stat(root, 100, "controlsd", 'S', 1, 500, 17);
	tree_io(root, 100, 10240, 8192);
	tree_stat(root, 300, "kworker/u8:1", 'D', 1, 5, 0);
	TAP_OK(pl__tracer_tick(t) == 0, "tick 2");
	TAP_EQ_STR(rows_after(out, lines),
		   "controlsd,100,S,10,8,70,4,3,,,,,,,"
		   "kworker/u8:1,300,D,0,0,0,4,3,,,,,,,"
		   "SYS,0,-,,,,,,2,4,0,40,8,500000,700000",
		   "tick 2: io and blkio deltas, a D-state process under its comm, SYS deltas");
	lines = count_lines(out);

	/* pid 100 is now another process (another starttime) with larger
	 * counters: no delta against the old one. */
	tree_stat(root, 100, "controlsd", 'S', 1, 900, 5000);
	tree_io(root, 100, 999999999, 888888888);
	tree_stat(root, 300, "kworker/u8:1", 'I', 1, 5, 0);
	TAP_OK(pl__tracer_tick(t) == 0, "tick 3");
	TAP_EQ_STR(rows_after(out, lines), "SYS,0,-,,,,,,0,0,0,40,8,500000,700000",
		   "reused pid starts fresh: no bogus row");
	lines = count_lines(out);
	tree_stat(root, 100, "controlsd", 'S', 1, 900, 5000);
	tree_io(root, 100, 999999999 + 5120, 888888888);
	TAP_OK(pl__tracer_tick(t) == 0, "tick 4");
	TAP_EQ_STR(rows_after(out, lines),
		   "controlsd,100,S,5,0,0,0,0,,,,,,,SYS,0,-,,,,,,0,0,0,40,8,500000,700000",
		   "then deltas against the new process");
	/* A process one second old whose block-I/O delay jumps by more than
	 * the uptime: what the kernel reports for a wait that was in progress
	 * when kernel.task_delayacct was switched on. The CSV says what the
	 * kernel said, as the Python tool's does. */
	{
		struct timespec now;
		unsigned long long born;
		char want[128], ev[320];
		const char *odd;

		clock_gettime(CLOCK_MONOTONIC, &now);
		born = (unsigned long long)now.tv_sec * 100 - 100;
		tree_stat(root, 400, "controlsd", 'S', 1, born, 0);
		tree_io(root, 400, 0, 0);
		TAP_OK(pl__tracer_tick(t) == 0, "tick 5");
		lines = count_lines(out);
		tree_stat(root, 400, "controlsd", 'S', 1, born, (unsigned long long)now.tv_sec * 100);
		TAP_OK(pl__tracer_tick(t) == 0, "tick 6");
		snprintf(want, sizeof(want), "controlsd,400,S,0,0,%llu0,0,0,",
			 (unsigned long long)now.tv_sec * 100);
		TAP_OK(strstr(rows_after(out, lines), want) != NULL,
		       "a delay longer than the process's life is in the CSV as is (%s)",
		       rows_after(out, lines));
		snprintf(ev, sizeof(ev), "%s/reuse.events.jsonl", base);
		odd = strstr(tree_slurp(ev), "\"type\":\"implausible_blkio\"");
		TAP_OK(odd && strstr(odd, "\"pid\":400,\"comm\":\"controlsd\"") &&
			       strstr(odd, "\"reason\":\"more delay than the process has lived"),
		       "the events file says why it is not to be believed");
		TAP_OK(odd && !strstr(odd, "\"type\":\"stall\""), "and it is no stall");
		TAP_OK(events_handed_on > 0 && strcmp(last_event_handed_on, "implausible_blkio") == 0,
		       "and it is handed on, as stalls are, for perflinkd to forward (%u, last %s)",
		       events_handed_on, last_event_handed_on);
		tree_stat(root, 400, "controlsd", 'S', 1, born, (unsigned long long)now.tv_sec * 200);
		TAP_OK(pl__tracer_tick(t) == 0, "tick 7: another jump");
		odd = strstr(tree_slurp(ev), "\"type\":\"implausible_blkio\"");
		TAP_OK(odd && !strstr(odd + 1, "\"type\":\"implausible_blkio\""),
		       "said once per process, not once per jump");
	}
	pl__tracer_get_stats(t, &st);
	TAP_EQ_U64(st.pid_reuses, 1, "pid reuse counted");
	TAP_EQ_U64(st.ticks, 7, "seven ticks");
	pl__tracer_close(t);
}

/* A case's tree and CSV under base, the tree with its system files. */
static void case_paths(const char *name, char *root, char *out, size_t cap)
{
	snprintf(root, cap, "%s/%s", base, name);
	snprintf(out, cap, "%s/%s.csv", base, name);
	tree_system(root, 1000, 50, 0, 0);
}

/* pid 789 "fsync-loop" in state with these counters (kB), one tick: the
 * tick's rows, or "" when the tick failed. */
static const char *fsync_loop_tick(struct pl_tracer *t, const char *root, const char *out,
				   char state, unsigned long long blkio, unsigned long long wchar_kb,
				   unsigned long long wbytes_kb)
{
	int lines = count_lines(out);

	tree_stat(root, 789, "fsync-loop", state, 1, 5, blkio);
	tree_io(root, 789, wchar_kb << 10, wbytes_kb << 10);
	return pl__tracer_tick(t) == 0 ? rows_after(out, lines) : "";
}

/* An unwatched process has a row only in D, and its deltas count, as the
 * Python tool's do, from the last sample it had a row for, however long
 * ago: not from the previous tick. */
static void test_unwatched_baseline(void)
{
	char root[300], out[300];
	struct pl_tracer *t;

	case_paths("baseline", root, out, sizeof(root));
	tree_stat(root, 789, "fsync-loop", 'D', 1, 5, 100);
	tree_io(root, 789, 0, 0);
	t = open_tree(root, out, false);
	if (!t || pl__tracer_tick(t) != 0) {
		TAP_OK(0, "tracer opens and ticks");
		pl__tracer_close(t);
		return;
	}
	/* asleep for two ticks, writing and waiting meanwhile */
	fsync_loop_tick(t, root, out, 'S', 150, 400, 300);
	fsync_loop_tick(t, root, out, 'S', 200, 800, 1000);
	TAP_EQ_STR(fsync_loop_tick(t, root, out, 'D', 201, 804, 1004),
		   "fsync-loop,789,D,804,1004,1010,0,0,,,,,,,SYS,0,-,,,,,,0,0,0,40,8,500000,700000",
		   "deltas since its last D sample (tick 1), not since tick 3 (4, 4, 10)");
	TAP_EQ_STR(fsync_loop_tick(t, root, out, 'D', 203, 805, 1010),
		   "fsync-loop,789,D,1,6,20,0,0,,,,,,,SYS,0,-,,,,,,0,0,0,40,8,500000,700000",
		   "then from the previous D sample");
	pl__tracer_close(t);
}

/* The Python tool forgets baselines only when its map holds more than 4000
 * pids, and then keeps the ones it used in that tick. */
static void test_baseline_prune(void)
{
	struct pl_tproc v[2];
	struct pl_tprocs tp;
	size_t touched[2] = { 0, 1 }; /* both read this tick */

	memset(&tp, 0, sizeof(tp));
	memset(v, 0, sizeof(v));
	tp.cfg.clk_tck = 100;
	tp.v = v;
	tp.n = 2;
	tp.tick = 1;
	tp.touched = touched;
	tp.n_touched = 2;
	v[0].touch_tick = v[1].touch_tick = 1;
	v[0].label = 0; /* watched, read this tick */
	v[0].stat_now = v[0].io_now = true;
	v[0].state = 'S';
	v[1].label = -1; /* asleep, last used in D */
	v[1].stat_now = v[1].io_now = true;
	v[1].state = 'S';
	v[1].csv.have = true;
	tp.csv_bases = 3999;
	pl__tbaseline_tick(&tp); /* v[0] is new: 4000 */
	TAP_OK(v[0].csv.have && v[1].csv.have && tp.csv_bases == 4000,
	       "4000 pids: the sleeping one's baseline is kept (%llu)",
	       (unsigned long long)tp.csv_bases);
	v[0].csv.have = false; /* as if another pid were new: 4001 */
	pl__tbaseline_tick(&tp);
	TAP_OK(v[0].csv.have && !v[1].csv.have && tp.csv_bases == 1,
	       "past 4000: only the pids used in this tick keep theirs (%llu)",
	       (unsigned long long)tp.csv_bases);
}

/* One tick with controlsd (pid 100) in state with these counters, the
 * tracer opened at the first; false when it failed. */
static bool tick_controlsd(const char *root, const char *out, struct pl_tracer **t, char state,
			   unsigned long long blkio, unsigned long long wbytes_kb)
{
	tree_stat(root, 100, "controlsd", state, 1, 5, blkio);
	tree_io(root, 100, wbytes_kb << 10, wbytes_kb << 10);
	if (!*t && !(*t = open_tree(root, out, false)))
		return false;
	return pl__tracer_tick(*t) == 0;
}

/* The victim writes 10 MB and waits 200 ms on block I/O; beside it an
 * unwatched fsync loop, in D all along, wrote 2 MB: it waited on the same
 * thing and is another victim, not the bully. */
static void test_blocked_is_no_bully(void)
{
	static const struct {
		char state;
		unsigned long long blkio, wbytes_kb, loop_blkio, loop_wbytes_kb;
	} ticks[] = {
		{ 'S', 0, 0, 0, 0 },
		{ 'S', 0, 10240, 5, 1024 },
		{ 'D', 20, 10240, 10, 2048 },
		{ 'S', 20, 10240, 10, 2048 },
	};
	char root[300], out[300], ev[320];
	struct pl_tracer *t;
	const char *stall, *bully;

	case_paths("fellow", root, out, sizeof(root));
	snprintf(ev, sizeof(ev), "%s/fellow.events.jsonl", base);
	t = NULL;
	for (size_t i = 0; i < sizeof(ticks) / sizeof(ticks[0]); i++) {
		tree_stat(root, 789, "fsync-loop", 'D', 1, 5, ticks[i].loop_blkio);
		tree_io(root, 789, ticks[i].loop_wbytes_kb << 10, ticks[i].loop_wbytes_kb << 10);
		if (!tick_controlsd(root, out, &t, ticks[i].state, ticks[i].blkio,
				    ticks[i].wbytes_kb))
			break;
	}
	TAP_OK(t != NULL, "tracer opens and ticks");
	pl__tracer_close(t);
	stall = strstr(tree_slurp(ev), "\"type\":\"stall\"");
	TAP_OK(stall && strstr(stall, "\"victim\":{\"pid\":100,"), "the victim's stall");
	bully = stall ? strstr(stall, "\"bully\"") : NULL;
	if (!bully)
		bully = "no stall";
	TAP_OK(stall && strstr(stall, "\"bully\":[]"),
	       "the fsync loop blocked beside it is not its bully (%.*s)", first_line_len(bully),
	       bully);
}

/* A runner (pid 500) starts a dd (pid 501) that is read once at 100 MB and
 * then writes 200 MB more before it exits; the runner reaps it, and its own
 * io jumps by the dd's whole 300 MB. The victim stalls as that happens: its
 * bully is the dd, with what it wrote after its last reading, not the
 * runner, which wrote nothing itself. */
static void test_reaped_tail_is_the_child_s(void)
{
	static const struct {
		char state;
		unsigned long long blkio, runner_kb, dd_kb;
		bool dd_lives;
	} ticks[] = {
		{ 'S', 0, 0, 0, true },
		{ 'S', 0, 0, 102400, true },
		{ 'D', 20, 307200, 0, false },
		{ 'S', 20, 307200, 0, false },
	};
	char root[300], out[300], ev[320], dd_dir[320];
	struct pl_tracer *t = NULL;
	const char *stall, *bully;

	case_paths("reaped", root, out, sizeof(root));
	snprintf(ev, sizeof(ev), "%s/reaped.events.jsonl", base);
	snprintf(dd_dir, sizeof(dd_dir), "%s/501", root);
	for (size_t i = 0; i < sizeof(ticks) / sizeof(ticks[0]); i++) {
		tree_stat(root, 500, "runner", 'S', 1, 5, 0);
		tree_io(root, 500, ticks[i].runner_kb << 10, ticks[i].runner_kb << 10);
		if (ticks[i].dd_lives) {
			tree_stat_of_child(root, 501, 500, "dd", 'R', 1, 6, 0);
			tree_io(root, 501, ticks[i].dd_kb << 10, ticks[i].dd_kb << 10);
		} else {
			tree_rm(dd_dir);
		}
		if (!tick_controlsd(root, out, &t, ticks[i].state, ticks[i].blkio, 0))
			break;
	}
	TAP_OK(t != NULL, "tracer opens and ticks");
	pl__tracer_close(t);
	stall = strstr(tree_slurp(ev), "\"type\":\"stall\"");
	bully = stall ? strstr(stall, "\"bully\":[") : NULL;
	if (!bully)
		bully = "no stall";
	TAP_OK(stall && strstr(bully, "\"bully\":[{\"pid\":501,") &&
		       strstr(bully, "\"comm\":\"dd\""),
	       "the dd that was reaped is the bully, not the runner whose io took its writes "
	       "(%.*s)", first_line_len(bully) > 200 ? 200 : first_line_len(bully), bully);
	TAP_OK(stall && !strstr(bully, "\"pid\":500,"), "the runner is not among the bullies");
}

/* A D episode whose wchan is a name too long to keep and whose vmstat has
 * a malformed threshold: the event still comes, the name cut, the
 * thresholds estimated from the sysctls. */
static void test_wchan_and_thresholds(void)
{
	static const char *const states = "DDDS";
	char root[300], out[300], ev[320];
	struct pl_tracer *t = NULL;
	const char *stall;

	case_paths("wchan", root, out, sizeof(root));
	snprintf(ev, sizeof(ev), "%s/wchan.events.jsonl", base);
	tree_put(root, "vmstat", "nr_dirty 10\nnr_writeback 0\nnr_written 5\n"
		 "nr_dirty_threshold 12x\nnr_dirty_background_threshold 6\n");
	tree_put(root, "sys/vm/dirty_ratio", "20\n");
	tree_put(root, "sys/vm/dirty_background_ratio", "10\n");
	tree_put(root, "100/wchan", "%s", "folio_wait_bit_common_and_then_some_more_of_a_name_"
					 "that_no_kernel_has_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	for (size_t i = 0; states[i]; i++) {
		if (!tick_controlsd(root, out, &t, states[i], i >= 2 ? 30 : 0, 0))
			break;
	}
	TAP_OK(t != NULL, "tracer opens and ticks");
	pl__tracer_close(t);
	stall = strstr(tree_slurp(ev), "\"type\":\"stall\"");
	TAP_OK(stall && strstr(stall, "\"wait\":{\"wchan\":\"folio_wait_bit_common_and_then_some_"
				      "more_of_a_n\",\"wchan_kinds\":[\"read\"],\"memcg_limit_hits\":null}"),
	       "a long wchan is cut to 47 bytes, its kind from its start (a page's wait "
	       "of a victim that wrote nothing: a read)");
	TAP_OK(stall && strstr(stall, "\"dirty_bg_thresh_kB\":70000,\"dirty_thresh_kB\":140000,"
				      "\"dirty_thresh_source\":\"sysctl\""),
	       "a malformed vmstat threshold: the sysctls' estimate, said so");
}

static void test_exit_mid_read(void)
{
	char root[300], out[300], path[400];
	struct pl_tracer *t;
	struct pl_tracer_stats st;
	int lines;

	snprintf(root, sizeof(root), "%s/exit", base);
	snprintf(out, sizeof(out), "%s/exit.csv", base);
	tree_system(root, 1000, 50, 0, 0);
	tree_stat(root, 200, "loggerd", 'D', 1, 10, 0);
	tree_io(root, 200, 0, 0);
	tree_stat(root, 201, "loggerd", 'D', 1, 11, 0);
	tree_io(root, 201, 0, 0);
	t = open_tree(root, out, false);
	if (!t) {
		TAP_OK(0, "tracer opens");
		return;
	}
	TAP_OK(pl__tracer_tick(t) == 0, "tick 1 with two processes in D");
	lines = count_lines(out);
	/* 200 is gone entirely; 201 went between its stat and its io. */
	snprintf(path, sizeof(path), "%s/200", root);
	tree_rm(path);
	snprintf(path, sizeof(path), "%s/201/io", root);
	tree_rm(path);
	TAP_OK(pl__tracer_tick(t) == 0, "tick 2 is not a failure");
	TAP_EQ_STR(rows_after(out, lines), "SYS,0,-,,,,,,0,0,0,40,8,500000,700000",
		   "no rows for processes that exited");
	pl__tracer_get_stats(t, &st);
	TAP_EQ_U64(st.processes, 0, "their records are dropped");
	TAP_EQ_U64(st.exits, 2, "and counted as exits");
	TAP_OK(pl__tracer_tick(t) == 0, "tick 3 with a half-gone process");
	pl__tracer_close(t);
}

/* As an unprivileged user (root drops to nobody in a child), an io file
 * that cannot be read costs the process its row, nothing else. */
static void test_unreadable_io(void)
{
	char root[300], out[300], path[400];
	pid_t child;
	int status = -1;

	snprintf(root, sizeof(root), "%s/denied", base);
	snprintf(out, sizeof(out), "%s/denied/out", base);
	tree_system(root, 1000, 50, 0, 0);
	tree_stat(root, 400, "loggerd", 'D', 1, 10, 0);
	tree_io(root, 400, 0, 0);
	tree_stat(root, 401, "loggerd", 'D', 1, 11, 0);
	tree_io(root, 401, 0, 0);
	tree_mkdirs(out);
	chmod(out, 0777);
	snprintf(path, sizeof(path), "%s/401/io", root);
	chmod(path, 0);
	child = fork();
	if (child == 0) {
		struct pl_tracer *t;
		struct pl_tracer_stats st;
		char csv[400];
		int bad = 0;

		if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
				       setuid(65534) != 0))
			_exit(10);
		snprintf(csv, sizeof(csv), "%s/t.csv", out);
		t = open_tree(root, csv, false);
		if (!t)
			_exit(11);
		bad |= pl__tracer_tick(t) != 0;
		bad |= pl__tracer_tick(t) != 0;
		pl__tracer_get_stats(t, &st);
		bad |= (st.io_denied != 1) << 1;
		bad |= (strstr(tree_slurp(csv), ",401,") != NULL) << 2;
		bad |= (strstr(tree_slurp(csv), "loggerd,400,D,0,0,0") == NULL) << 3;
		pl__tracer_close(t);
		_exit(bad);
	}
	waitpid(child, &status, 0);
	TAP_OK(WIFEXITED(status) && WEXITSTATUS(status) != 10, "dropped to nobody");
	TAP_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "unreadable io: counted, that row skipped, others written (status %d)",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static const char *config_line(const char *root, const char *name, bool enable_da)
{
	static char line[4096];
	char out[300], ev[300];
	struct pl_tracer *t;
	const char *txt, *nl;

	snprintf(out, sizeof(out), "%s/%s.csv", base, name);
	snprintf(ev, sizeof(ev), "%s/%s.events.jsonl", base, name);
	line[0] = '\0';
	t = open_tree(root, out, enable_da);
	if (!t)
		return line;
	pl__tracer_tick(t);
	txt = tree_slurp(ev);
	nl = strchr(txt, '\n');
	snprintf(line, sizeof(line), "%.*s", nl ? (int)(nl - txt) : 0, txt);
	if (enable_da) {
		char p[400];

		snprintf(p, sizeof(p), "%s/sys/kernel/task_delayacct", root);
		TAP_EQ_STR(tree_slurp(p), "1\n", "--enable-delayacct turned it on");
		pl__tracer_close(t);
		TAP_EQ_STR(tree_slurp(p), "0\n", "and off again at close");
		return line;
	}
	pl__tracer_close(t);
	return line;
}

static void test_delayacct_and_psi(void)
{
	char root[300];
	const char *l;

	snprintf(root, sizeof(root), "%s/da", base);
	tree_system(root, 1000, 50, 0, 0);
	l = config_line(root, "da-absent", false);
	TAP_OK(strncmp(l, "{\"type\":\"config\"", 16) == 0, "events start with a config line");
	TAP_OK(NULL != strstr(l, "\"task_delayacct\":\"absent\""), "no sysctl: absent (before 5.14)");
	TAP_OK(NULL != strstr(l, "\"psi_io\":false,\"psi_memory\":false"), "no pressure/: PSI absent");

	tree_put(root, "sys/kernel/task_delayacct", "0\n");
	tree_put(root, "pressure/io", "some avg10=1.50 avg60=0.00 avg300=0.00 total=100\n"
				      "full avg10=0.00 avg60=0.00 avg300=0.00 total=50\n");
	l = config_line(root, "da-off", false);
	TAP_OK(NULL != strstr(l, "\"task_delayacct\":\"off\",\"blkio_delays\":false"),
	       "task_delayacct 0: off, and the CSV's blkio says nothing");
	TAP_OK(NULL != strstr(l, "\"psi_io\":true,\"psi_memory\":false"), "pressure/io alone");
	l = config_line(root, "da-enable", true);
	TAP_OK(NULL != strstr(l, "\"task_delayacct\":\"on\""), "reported on after enabling");
	tree_put(root, "sys/kernel/task_delayacct", "garbage\n");
	l = config_line(root, "da-bad", false);
	TAP_OK(NULL != strstr(l, "\"task_delayacct\":\"unreadable\""), "garbage is not a guess");
}

/* A symbolic link planted where the CSV or the events file goes (a shared
 * directory such as /tmp, where another user may plant one): the tracer
 * refuses to open rather than overwrite the file it points to. */
static void test_planted_links(void)
{
	char root[300], out[300], victim[300], events[300];
	struct pl_tracer *t;

	snprintf(root, sizeof(root), "%s/links", base);
	snprintf(out, sizeof(out), "%s/links.csv", base);
	snprintf(events, sizeof(events), "%s/links.events.jsonl", base);
	snprintf(victim, sizeof(victim), "%s/victim", base);
	tree_system(root, 1000, 50, 0, 0);
	tree_put(base, "victim", "precious\n");
	if (symlink(victim, out) < 0)
		abort();
	t = open_tree(root, out, false);
	TAP_OK(t == NULL && !strcmp(tree_slurp(victim), "precious\n"),
	       "--out naming a symbolic link: refused, the file it points to untouched");
	pl__tracer_close(t);
	unlink(out);
	if (symlink(victim, events) < 0)
		abort();
	t = open_tree(root, out, false);
	TAP_OK(t == NULL && !strcmp(tree_slurp(victim), "precious\n"),
	       "the events file a symbolic link: refused, the file untouched");
	pl__tracer_close(t);
}

/* A file size limit (or a full disk) reached in the middle of a tick: the
 * CSV ends at its last whole tick, never in half a row. */
static void test_csv_whole_ticks(void)
{
	char root[300], out[300];
	const char *csv;
	size_t header = strlen(pl__tracer_csv_header);
	int status, rows = 0;
	pid_t pid;

	snprintf(root, sizeof(root), "%s/limit", base);
	snprintf(out, sizeof(out), "%s/limit.csv", base);
	tree_system(root, 1000, 50, 0, 0);
	for (int i = 0; i < 40; i++) {
		tree_stat(root, 100 + i, "controlsd", 'S', 1, 500, 10);
		tree_io(root, 100 + i, 0, 0);
	}
	pid = fork();
	if (pid == 0) {
		struct rlimit small = { (rlim_t)header + 1000, (rlim_t)header + 1000 };
		struct pl_tracer *t;

		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &small);
		t = open_tree(root, out, false);
		if (!t)
			_exit(2);
		for (int i = 0; i < 200; i++) {
			for (int k = 0; k < 40; k++) /* every watched process wrote */
				tree_io(root, 100 + k, (unsigned long long)(i + 1) * 4096, 0);
			if (pl__tracer_tick(t) < 0)
				_exit(0);
		}
		_exit(3);
	}
	waitpid(pid, &status, 0);
	TAP_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "a file size limit stops the tracer with an error (%d)", status);
	csv = tree_slurp(out);
	for (const char *p = csv; *p; p++)
		rows += *p == '\n';
	TAP_OK(strlen(csv) >= header && csv[strlen(csv) - 1] == '\n',
	       "and the CSV ends at a whole row (%zu bytes, %d lines)", strlen(csv), rows);
}

static void test_bad_root(void)
{
	struct pl_tracer *t = open_tree("/nonexistent/proc", "/nonexistent/x.csv", false);

	TAP_OK(t == NULL, "a missing --proc-root fails to open, cleanly");
}

/* --cost-split counts each phase's work as it happens (a tree is read in
 * full every tick: no fds kept, no gating) and changes no output. */
static void test_cost_split(void)
{
	char root[300], out[2][300], rows[2][8192];
	struct pl_tracer *t[2];
	struct pl_tracer_stats st;

	snprintf(root, sizeof(root), "%s/split", base);
	snprintf(out[0], sizeof(out[0]), "%s/split-off.csv", base);
	snprintf(out[1], sizeof(out[1]), "%s/split-on.csv", base);
	tree_system(root, 1000, 50, 0, 0);
	tree_stat(root, 100, "controlsd", 'S', 1, 500, 10);
	tree_io(root, 100, 0, 0);
	tree_stat(root, 101, "loggerd", 'R', 1, 501, 0);
	tree_io(root, 101, 0, 0);
	tree_stat(root, 300, "kworker/u8:1", 'S', 1, 5, 0);
	tree_io(root, 300, 0, 0);
	t[0] = open_tree_split(root, out[0], false, false);
	t[1] = open_tree_split(root, out[1], false, true);
	TAP_OK(t[0] && t[1], "tracers with and without --cost-split open");
	if (!t[0] || !t[1])
		goto out;
	for (int tick = 1; tick <= 4; tick++) {
		if (tick == 2) {
			tree_system(root, 1100, 60, 1, 0);
			tree_stat(root, 100, "controlsd", 'D', 1, 500, 30);
			tree_io(root, 100, 40960, 8192);
			tree_stat(root, 300, "kworker/u8:1", 'D', 1, 5, 0);
		}
		if (tick == 3) {
			tree_stat(root, 400, "dd", 'D', 1, 600, 0);
			tree_io(root, 400, 0, 0);
		}
		for (int i = 0; i < 2; i++)
			TAP_OK(pl__tracer_tick(t[i]) == 0, "tick %d, split %s", tick,
			       i ? "on" : "off");
	}
	for (int i = 0; i < 2; i++)
		snprintf(rows[i], sizeof(rows[i]), "%s", rows_after(out[i], 1));
	TAP_EQ_STR(rows[1], rows[0], "the same rows with the split as without");
	pl__tracer_get_stats(t[0], &st);
	TAP_OK(!st.cost_split && st.cost_ticks == 0, "no split unless asked for");
	pl__tracer_get_stats(t[1], &st);
	TAP_OK(st.cost_split, "the split is reported");
	TAP_EQ_U64(st.cost_ticks, 3, "over the ticks after the first");
	TAP_EQ_U64(st.phase[PL_TPHASE_SYSTEM].items, 3, "the system files once a tick");
	/* controlsd, loggerd and the kworker at each tick, dd from tick 3 on */
	TAP_EQ_U64(st.phase[PL_TPHASE_PROCESSES].items, 11, "a tree reads every process");
	TAP_EQ_U64(st.dir_scans, 4, "a tree is listed every tick");
	TAP_EQ_U64(st.probes, 0, "and never probed by pid (its loadavg is not its own)");
	TAP_EQ_U64(st.phase[PL_TPHASE_OUTPUT].items, 3, "output once a tick");
	TAP_EQ_U64(st.phase[PL_TPHASE_EVENTS].items, 3, "stall detection once a tick");
	TAP_OK(st.phase[PL_TPHASE_PROCESSES].ns > 0 && st.tick_cpu_ns > 0,
	       "the phases and the ticks' CPU time are timed");
out:
	pl__tracer_close(t[0]);
	pl__tracer_close(t[1]);
}

/* An events file that cannot be written: the tracer refuses to start and
 * leaves no CSV behind, nor empties one that was there. */
static void test_unwritable_events(void)
{
	char root[300], out[300];
	struct pl_tracer_config cfg;
	struct pl_tracer *t = NULL;
	struct stat sb;
	int err;

	snprintf(root, sizeof(root), "%s/events", base);
	snprintf(out, sizeof(out), "%s/events.csv", base);
	tree_system(root, 1000, 50, 0, 0);
	for (int pass = 0; pass < 2; pass++) {
		tree_config(&cfg, root, out);
		cfg.events_path = strdup("/nonexistent-dir-for-test/events.jsonl");
		if (pass == 1)
			tree_put(base, "events.csv", "an earlier run's rows\n");
		err = pl__tracer_open(&t, &cfg);
		pl__tracer_config_free(&cfg);
		TAP_OK(err == -ENOENT && t == NULL, "an unwritable --events: refused (%d)", err);
		if (pass == 0)
			TAP_OK(stat(out, &sb) != 0 && errno == ENOENT,
			       "and no header-only CSV is left behind");
		else
			TAP_EQ_STR(tree_slurp(out), "an earlier run's rows\n",
				   "and a CSV already there is left as it was");
		pl__tracer_close(t);
	}
}

/* Open on root with --disk disks; what it logged in *log. */
static int open_disks(const char *root, const char *out, const char *disks,
		      struct pl_tracer **t, const char **log)
{
	struct stderr_capture c;
	struct pl_tracer_config cfg;
	int err;

	tree_config(&cfg, root, out);
	free(cfg.disks);
	cfg.disks = strdup(disks);
	capture_begin(&c);
	err = pl__tracer_open(t, &cfg);
	*log = capture_end(&c);
	pl__tracer_config_free(&cfg);
	return err;
}

/* --disk against what diskstats has: none named is refused, one that is not
 * there is said; both name the disks there are. */
static void test_disk_names(void)
{
	char root[300], out[300];
	struct pl_tracer *t = NULL;
	const char *log;
	int err;

	snprintf(root, sizeof(root), "%s/disks", base);
	snprintf(out, sizeof(out), "%s/disks.csv", base);
	tree_system(root, 1000, 50, 0, 0);
	err = open_disks(root, out, " , ", &t, &log);
	TAP_OK(err == -EINVAL && !t, "an empty --disk is refused (%d)", err);
	TAP_OK(strstr(log, "--disk names no disk; diskstats has: vda, loop0") != NULL,
	       "naming the disks diskstats has: %s", log);
	pl__tracer_close(t);

	err = open_disks(root, out, "vda,nosuchdisk", &t, &log);
	TAP_OK(err == 0 && t, "a disk that is not there: the run goes on (perflinkd's default sda "
			      "on an mmcblk0 device)");
	TAP_OK(strstr(log, "--disk nosuchdisk: not in diskstats, which has: vda, loop0") != NULL &&
	       !strstr(log, "--disk vda"),
	       "and says so for that one, naming the disks there are: %.*s", first_line_len(log),
	       log);
	pl__tracer_close(t);
}

int main(void)
{
	snprintf(base, sizeof(base), "/tmp/pl-test-tracer.XXXXXX");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 99;
	}
	chmod(base, 0755);
	pl__log_init("test_tracer", true, 0);
	test_csv_format();
	test_vmstat();
	test_deltas_and_reuse();
	test_unwatched_baseline();
	test_baseline_prune();
	test_blocked_is_no_bully();
	test_reaped_tail_is_the_child_s();
	test_wchan_and_thresholds();
	test_exit_mid_read();
	test_unreadable_io();
	test_delayacct_and_psi();
	test_bad_root();
	test_planted_links();
	test_csv_whole_ticks();
	test_cost_split();
	test_unwritable_events();
	test_disk_names();
	tree_rm(base);
	return tap_done();
}
