/* `perflink trace` and io_stall_tracer.py side by side on one real stall,
 * with the same flags (--names victim --hz 10), their CSVs compared row by
 * row in meaning: the header byte for byte; the watched victim's rows adding
 * up, in both, to what it wrote and waited, and its D waits seen by both;
 * an unwatched process (the napper) in D now and then, a second apart, whose
 * rows in both count from their last D row of it, not from the last tick.
 * The processes keep ledgers of their own counters (stall_actors.h), so each
 * tool is held to what happened as well as to the other.
 *
 * Skipped without python3 or the Python tool (../shared/seeds/ beside the
 * source tree, or $PL_IO_STALL_TRACER), without root (it turns
 * kernel.task_delayacct on, and restores it), or without a disk-backed
 * folder. About 10-40 s: dd rounds of 3 GiB go on until both tools have
 * seen the napper in D in three phases and the victim waited 0.3 s once,
 * or for 40 s.
 *
 *   test_tracer_vs_python PERFLINK SOURCE_ROOT PYTHON3|- */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "live_run.h"
#include "read_file.h"
#include "stall_actors.h"
#include "tap.h"
#include "trace_compare.h"

#define START_TIMEOUT_S 10.0 /* python3's start on a loaded machine */
#define STALL_MAX_S 40.0 /* a fast disk (the CI machine of 2026-12-06) can take 20 s */
#define PHASES_WANTED 3

struct run {
	const char *dir; /* the run's scratch folder, made by main */
	char disks[256], delayacct[16];
	char csv[2][512], err[2][512];
	pid_t tool[2];
	struct actors *a;
	pid_t victim, napper, bully;
};

void compare_check(int ok, const char *fmt, ...)
{
	char what[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	TAP_OK(ok, "%s", what);
}

void compare_skip(const char *fmt, ...)
{
	char why[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	TAP_SKIP(why);
}

static const char *const tool_name[2] = { "python", "perflink" };

static double mono_s(void)
{
	return (double)pl__mono_ns() / 1e9;
}

/* The tools' latest ticks; the lower of the two, -1 before both have one. */
static double both_ticked(const struct run *r, struct trace_rows rows[2])
{
	double m = 1e300;

	for (int k = 0; k < 2; k++) {
		trace_rows_free(&rows[k]);
		trace_rows_load(r->csv[k], &rows[k]);
		m = rows[k].last_sys_mono < m ? rows[k].last_sys_mono : m;
	}
	return m;
}

/* Until both tools have begun a tick after t (they have read every process
 * as it was at t), or timeout_s. 0 or -ETIMEDOUT. */
static int ticked_after(const struct run *r, double t, double timeout_s)
{
	struct trace_rows rows[2] = { 0 };
	double until = mono_s() + timeout_s;
	int err = -ETIMEDOUT;

	while (mono_s() < until) {
		if (both_ticked(r, rows) > t) {
			err = 0;
			break;
		}
		live_sleep_ms(50);
	}
	trace_rows_free(&rows[0]);
	trace_rows_free(&rows[1]);
	return err;
}

static void start_tools(struct run *r, const char *python, const char *script,
			const char *perflink)
{
	for (int k = 0; k < 2; k++) {
		snprintf(r->csv[k], sizeof(r->csv[k]), "%s/%s.csv", r->dir, tool_name[k]);
		snprintf(r->err[k], sizeof(r->err[k]), "%s/%s.err", r->dir, tool_name[k]);
	}
	{
		char *py[] = { (char *)python, (char *)script, "--out", r->csv[0], "--names",
			       VICTIM_COMM, "--hz", "10", "--disk", r->disks, NULL };
		char *pl[] = { (char *)perflink, "trace", "--out", r->csv[1], "--names",
			       VICTIM_COMM, "--hz", "10", "--disk", r->disks, NULL };

		r->tool[0] = live_spawn(py, r->err[0]);
		r->tool[1] = live_spawn(pl, r->err[1]);
	}
}

static void print_file(const char *tool, const char *path)
{
	char *text = test_read_file(path), *last;

	if (!text)
		return;
	for (char *l = strtok_r(text, "\n", &last); l; l = strtok_r(NULL, "\n", &last))
		printf("# %s stderr: %s\n", tool, l);
	free(text);
}

/* The victim's longest wait so far. */
static double victim_longest_s(const struct actors *a)
{
	double longest = 0;

	for (unsigned i = 0; i < a->victim_waits; i++) {
		const struct actor_span *w = &a->victim_wait[i];

		longest = w->end - w->start > longest ? w->end - w->start : longest;
	}
	return longest;
}

/* Whether both tools saw the napper in D in PHASES_WANTED phases and the
 * victim waited COMPARE_STALL_WAIT_S; seen: the napper's phases each saw. */
static bool stalled_enough(const struct run *r, unsigned seen[2])
{
	struct trace_rows rows[2] = { 0 };

	both_ticked(r, rows);
	for (int k = 0; k < 2; k++) {
		seen[k] = compare_napper_phases_seen(&rows[k], r->a, r->napper);
		trace_rows_free(&rows[k]);
	}
	return seen[0] >= PHASES_WANTED && seen[1] >= PHASES_WANTED &&
	       victim_longest_s(r->a) >= COMPARE_STALL_WAIT_S;
}

/* dd rounds until the stall has shown what the checks need, or for
 * STALL_MAX_S (the round then in progress cut short). */
static void stall(struct run *r)
{
	double until = mono_s() + STALL_MAX_S;
	char err[512];
	unsigned rounds = 0, seen[2] = { 0, 0 };
	bool enough = false, dd_failed = false;

	snprintf(err, sizeof(err), "%s/dd.err", r->dir);
	while (!enough && !dd_failed && mono_s() < until) {
		int status = 0;
		pid_t ended;

		if ((r->bully = actors_bully(r->dir, err)) <= 0)
			break;
		/* the CSVs are files another process appends to: read every 250 ms */
		while ((ended = waitpid(r->bully, &status, WNOHANG)) == 0 && mono_s() < until &&
		       !(enough = stalled_enough(r, seen)))
			live_sleep_ms(250);
		if (ended == 0)
			actors_end(r->bully);
		else if ((dd_failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0))
			print_file("dd", err);
		r->bully = 0;
		rounds += !dd_failed;
	}
	enough = stalled_enough(r, seen);
	TAP_OK(rounds > 0, "dd wrote to the disk (%u rounds of up to 3 GiB)", rounds);
	printf("# napper seen in D in %u phases by %s, %u by %s; victim's longest wait %.3f s%s\n",
	       seen[0], tool_name[0], seen[1], tool_name[1], victim_longest_s(r->a),
	       enough ? "" : " (not enough in the time: the checks below will say what lacks)");
}

static void stop_all(struct run *r)
{
	int status;

	actors_end(r->bully);
	actors_end(r->victim);
	actors_end(r->napper);
	for (int k = 0; k < 2; k++) {
		if (r->tool[k] <= 0)
			continue;
		kill(r->tool[k], SIGTERM);
		waitpid(r->tool[k], &status, 0);
		if (k == 1)
			TAP_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			       "perflink trace stops cleanly on SIGTERM");
	}
	live_delayacct_restore(r->delayacct);
}

/* Both tools on the stall; the checks once both have stopped. */
static void run(struct run *r, const char *python, const char *script, const char *perflink)
{
	struct traced t[2] = { { tool_name[0], { 0 } }, { tool_name[1], { 0 } } };
	double ready, done;

	start_tools(r, python, script, perflink);
	if (ticked_after(r, 0, START_TIMEOUT_S) < 0) {
		TAP_OK(0, "both tools write ticks");
		stop_all(r);
		print_file(tool_name[0], r->err[0]);
		print_file(tool_name[1], r->err[1]);
		return;
	}
	TAP_OK(1, "both tools write ticks");
	r->victim = actors_victim(r->a, r->dir);
	ready = mono_s();
	TAP_OK(r->victim > 0 && ticked_after(r, ready, START_TIMEOUT_S) == 0,
	       "both tools read the victim before it starts");
	actors_victim_go();
	r->napper = actors_napper(r->a, r->dir);
	stall(r);
	r->a->stop = 1;
	TAP_OK(actors_wait_done() == 0, "victim and napper end their last step");
	done = mono_s();
	TAP_OK(ticked_after(r, done, START_TIMEOUT_S) == 0,
	       "both tools read them after their last step");
	stop_all(r);
	print_file(tool_name[1], r->err[1]);
	for (int k = 0; k < 2; k++) {
		int err = trace_rows_load(r->csv[k], &t[k].rows);

		TAP_OK(err == 0, "%s's CSV read back", t[k].tool);
		printf("# %s: %zu ticks (%.3f s from one's start to the next's at most), %zu "
		       "process rows, %zu lines that do not parse\n", t[k].tool, t[k].rows.sys,
		       t[k].rows.longest_tick_s, t[k].rows.n, t[k].rows.malformed);
	}
	TAP_EQ_STR(t[1].rows.header, t[0].rows.header, "the CSV headers are identical");
	TAP_OK(t[1].rows.malformed == 0, "every line of perflink's CSV parses");
	compare_victim_totals(t, r->a, r->victim, sysconf(_SC_CLK_TCK));
	compare_victim_waits(t, r->a, r->victim);
	compare_napper(t, r->a, r->napper, sysconf(_SC_CLK_TCK));
	trace_rows_free(&t[0].rows);
	trace_rows_free(&t[1].rows);
}

static const char *python_tool(const char *source_root, char *buf, size_t cap)
{
	const char *env = getenv("PL_IO_STALL_TRACER");

	if (env && env[0])
		return env;
	snprintf(buf, cap, "%s/../shared/seeds/io_stall_tracer.py", source_root);
	return buf;
}

int main(int argc, char **argv)
{
	static struct run r;
	char script_buf[600], base[300] = "", why[800], dir[400];
	const char *script;

	if (argc < 4) {
		fprintf(stderr, "usage: %s PERFLINK SOURCE_ROOT PYTHON3|-\n", argv[0]);
		return 2;
	}
	script = python_tool(argv[2], script_buf, sizeof(script_buf));
	if (strcmp(argv[3], "-") == 0 || access(argv[3], X_OK) != 0) {
		TAP_SKIP("no python3 to run io_stall_tracer.py with");
		return tap_done();
	}
	if (access(script, R_OK) != 0) {
		snprintf(why, sizeof(why), "no %s (set PL_IO_STALL_TRACER to its path)", script);
		TAP_SKIP(why);
		return tap_done();
	}
	if (geteuid() != 0) {
		TAP_SKIP("needs root: turning kernel.task_delayacct on and provoking a stall");
		return tap_done();
	}
	if (live_disk_dir(base, sizeof(base)) < 0) {
		snprintf(why, sizeof(why), "no disk-backed folder for the stall (%s; set PL_LIVE_DIR)",
			 base[0] ? "PL_LIVE_DIR is not one" : "neither /var/tmp nor /tmp");
		TAP_SKIP(why);
		return tap_done();
	}
	snprintf(dir, sizeof(dir), "%s/pl-live-vs-python.XXXXXX", base);
	r.dir = dir;
	if (!mkdtemp(dir) || !(r.a = actors_map())) {
		perror(dir);
		return 99;
	}
	if (live_delayacct_on(r.delayacct, sizeof(r.delayacct)) < 0) {
		TAP_SKIP("kernel.task_delayacct cannot be switched on: no block-I/O delays");
	} else {
		live_disks(r.disks, sizeof(r.disks));
		run(&r, argv[3], script, argv[1]);
	}
	if (tap_failed) {
		/* the CSVs, to see what differed */
		printf("# kept %s (%s removed)\n", r.dir, ACTORS_BULLY_FILE);
		snprintf(script_buf, sizeof(script_buf), "%s/%s", r.dir, ACTORS_BULLY_FILE);
		unlink(script_buf);
	} else {
		char cmd[500];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", r.dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", r.dir);
	}
	return tap_done();
}
