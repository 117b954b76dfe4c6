/* `perflink compare A [B]`: the A/B table (common/ab_table.h) of two
 * stage-profiler reports: per frame and per stage, absolute and relative
 * change. With one file, the table of that report alone.
 *
 * The reports are cumulative, so each file's last report (or --report N)
 * stands for the whole run. Per-frame values divide by the report's
 * completed frames. */
#include "ab_table.h"
#include "cli.h"
#include "options.h"
#include "profile_report.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct pl_ab_cell per_frame(uint64_t total, uint64_t frames)
{
	if (frames == 0)
		return pl__ab_none();
	return pl__ab_value((double)total / (double)frames);
}

static struct pl_ab_cell average(uint64_t total, uint64_t n)
{
	if (n == 0)
		return pl__ab_none();
	return pl__ab_value((double)total / (double)n);
}

static bool any(const struct pl_ab_table *t, uint64_t a, uint64_t b)
{
	return a != 0 || (t->files == 2 && b != 0);
}

static const struct pl_profile_stage *stage_of(const struct pl_profile_report *r, const char *name)
{
	return r ? pl__profile_stage(r, name) : NULL;
}

static int stage_rows(struct pl_ab_table *t, const char *name, const struct pl_profile_report *ra,
		      const struct pl_profile_report *rb)
{
	static const struct pl_profile_stage none;
	const struct pl_profile_stage *a = stage_of(ra, name), *b = stage_of(rb, name);
	const struct pl_profile_stage *sa = a ? a : &none, *sb = b ? b : &none;
	uint64_t fa = ra->frames, fb = rb ? rb->frames : 0;
	char m[PL_PROFILE_NAME_MAX + 32];
	struct pl_ab_cell ca, cb;
	int r = 0;

#define CELLS(expr_a, expr_b)                                                     \
	(ca = a ? (expr_a) : pl__ab_none(), cb = b ? (expr_b) : pl__ab_none())
#define ROW(unit, label, expr_a, expr_b)                                          \
	do {                                                                      \
		CELLS(expr_a, expr_b);                                            \
		snprintf(m, sizeof(m), "%s %s", name, label);                     \
		r = r < 0 ? r : pl__ab_table_add(t, unit, m, ca, cb);                          \
	} while (0)

	ROW(PL_AB_COUNT, "calls", pl__ab_exact(sa->calls), pl__ab_exact(sb->calls));
	ROW(PL_AB_RATIO, "calls/frame", per_frame(sa->calls, fa), per_frame(sb->calls, fb));
	ROW(PL_AB_NS, "CPU/frame", per_frame(sa->cpu_total_ns, fa), per_frame(sb->cpu_total_ns, fb));
	ROW(PL_AB_NS, "wall/frame", per_frame(sa->wall_total_ns, fa),
	    per_frame(sb->wall_total_ns, fb));
	ROW(PL_AB_NS, "CPU avg", average(sa->cpu_total_ns, sa->calls),
	    average(sb->cpu_total_ns, sb->calls));
	ROW(PL_AB_NS, "CPU max", pl__ab_exact(sa->cpu_max_ns), pl__ab_exact(sb->cpu_max_ns));
	ROW(PL_AB_NS, "wall avg", average(sa->wall_total_ns, sa->calls),
	    average(sb->wall_total_ns, sb->calls));
	ROW(PL_AB_NS, "wall max", pl__ab_exact(sa->wall_max_ns), pl__ab_exact(sb->wall_max_ns));
	if (any(t, sa->eagain + sa->enodata + sa->eintr, sb->eagain + sb->enodata + sb->eintr)) {
		ROW(PL_AB_COUNT, "EAGAIN retries", pl__ab_exact(sa->eagain), pl__ab_exact(sb->eagain));
		ROW(PL_AB_COUNT, "ENODATA retries", pl__ab_exact(sa->enodata), pl__ab_exact(sb->enodata));
		ROW(PL_AB_COUNT, "EINTR retries", pl__ab_exact(sa->eintr), pl__ab_exact(sb->eintr));
	}
	if (any(t, sa->errors, sb->errors))
		ROW(PL_AB_COUNT, "errors", pl__ab_exact(sa->errors), pl__ab_exact(sb->errors));
	if (any(t, sa->cache_bytes, sb->cache_bytes))
		ROW(PL_AB_BYTES, "cache bytes", pl__ab_exact(sa->cache_bytes), pl__ab_exact(sb->cache_bytes));
	if (any(t, sa->stream_bytes, sb->stream_bytes))
		ROW(PL_AB_BYTES, "stream bytes", pl__ab_exact(sa->stream_bytes), pl__ab_exact(sb->stream_bytes));
#undef ROW
#undef CELLS
	return r;
}

struct sums {
	uint64_t calls, cpu, wall, cache_calls, cache_bytes, stream_bytes, retries, errors;
};

static struct sums sum(const struct pl_profile_report *r)
{
	struct sums s;
	unsigned i;

	memset(&s, 0, sizeof(s));
	for (i = 0; r && i < r->n_stages; i++) {
		const struct pl_profile_stage *st = &r->stage[i];

		s.calls += st->calls;
		s.cpu += st->cpu_total_ns;
		s.wall += st->wall_total_ns;
		if (strcmp(st->kind, "cache") == 0)
			s.cache_calls += st->calls;
		s.cache_bytes += st->cache_bytes;
		s.stream_bytes += st->stream_bytes;
		s.retries += st->eagain + st->enodata + st->eintr;
		s.errors += st->errors;
	}
	return s;
}

static struct pl_ab_cell rate(const struct pl_profile_report *r)
{
	if (!r || r->elapsed_ns == 0)
		return pl__ab_none();
	return pl__ab_value((double)r->frames * 1e9 / (double)r->elapsed_ns);
}

static int build(struct pl_ab_table *t, const struct pl_profile_report *a,
		 const struct pl_profile_report *b)
{
	struct sums sa = sum(a), sb = sum(b);
	uint64_t fa = a->frames, fb = b ? b->frames : 0;
	struct pl_ab_cell none = pl__ab_none();
	unsigned i;
	int r = 0;

#define B(expr) (b ? (expr) : none)
	r = r ? r : pl__ab_table_add(t, PL_AB_COUNT, "completed frames", pl__ab_exact(fa), B(pl__ab_exact(fb)));
	r = r ? r : pl__ab_table_add(t, PL_AB_NS, "elapsed", pl__ab_exact(a->elapsed_ns), B(pl__ab_exact(b->elapsed_ns)));
	r = r ? r : pl__ab_table_add(t, PL_AB_RATE, "frames/s since start", rate(a), B(rate(b)));
	r = r ? r : pl__ab_table_add(t, PL_AB_RATIO, "measured calls/frame", per_frame(sa.calls, fa),
			B(per_frame(sb.calls, fb)));
	r = r ? r : pl__ab_table_add(t, PL_AB_NS, "measured CPU/frame", per_frame(sa.cpu, fa),
			B(per_frame(sb.cpu, fb)));
	r = r ? r : pl__ab_table_add(t, PL_AB_NS, "measured wall/frame", per_frame(sa.wall, fa),
			B(per_frame(sb.wall, fb)));
	r = r ? r : pl__ab_table_add(t, PL_AB_COUNT, "cache calls", pl__ab_exact(sa.cache_calls), B(pl__ab_exact(sb.cache_calls)));
	r = r ? r : pl__ab_table_add(t, PL_AB_RATIO, "cache calls/frame", per_frame(sa.cache_calls, fa),
			B(per_frame(sb.cache_calls, fb)));
	r = r ? r : pl__ab_table_add(t, PL_AB_BYTES, "cache-accounted bytes", pl__ab_exact(sa.cache_bytes),
			B(pl__ab_exact(sb.cache_bytes)));
	if (any(t, sa.stream_bytes, sb.stream_bytes))
		r = r ? r : pl__ab_table_add(t, PL_AB_BYTES, "published stream bytes", pl__ab_exact(sa.stream_bytes),
				B(pl__ab_exact(sb.stream_bytes)));
	r = r ? r : pl__ab_table_add(t, PL_AB_COUNT, "retries (EAGAIN/ENODATA/EINTR)", pl__ab_exact(sa.retries),
			B(pl__ab_exact(sb.retries)));
	r = r ? r : pl__ab_table_add(t, PL_AB_COUNT, "errors", pl__ab_exact(sa.errors), B(pl__ab_exact(sb.errors)));
	if (any(t, a->dropped_calls, b ? b->dropped_calls : 0))
		r = r ? r : pl__ab_table_add(t, PL_AB_COUNT, "dropped calls", pl__ab_exact(a->dropped_calls),
				B(pl__ab_exact(b->dropped_calls)));
#undef B
	/* A's stages in A's order, then those only B has */
	for (i = 0; r == 0 && i < a->n_stages; i++)
		r = stage_rows(t, a->stage[i].name, a, b);
	for (i = 0; r == 0 && b && i < b->n_stages; i++) {
		if (!pl__profile_stage(a, b->stage[i].name))
			r = stage_rows(t, b->stage[i].name, a, b);
	}
	return r;
}

static void describe(const char *tag, const char *path, const struct pl_profile_report *r)
{
	printf("%s: %s: %s pid %llu, report %llu (every %llu frames), line %zu", tag, path,
	       r->comm, (unsigned long long)r->pid, (unsigned long long)r->report,
	       (unsigned long long)r->interval_frames, r->line);
	if (r->skipped_lines)
		printf(", %u other line%s skipped", r->skipped_lines,
		       r->skipped_lines == 1 ? "" : "s");
	printf("\n");
}

static void usage(FILE *out, const struct pl_option *table)
{
	fprintf(out,
		"usage: perflink compare [OPTIONS] A.jsonl [B.jsonl]\n\n"
		"The A/B table of two stage-profiler reports (PERFLINK_PROFILE_OUT of\n"
		"libperflink-preload.so): Metric | A | B | Change, per frame and per stage.\n"
		"Reports are cumulative: each file's last report stands for its run unless\n"
		"--report picks one. With one file, that report's table.\n\n"
		"options:\n");
	pl__options_print_help(table, out);
}

int pl__cmd_compare(int argc, char **argv)
{
	static struct pl_profile_report ra, rb; /* large */
	long report = 0, pid = 0;
	bool markdown = false;
	char *label_a = NULL, *label_b = NULL;
	struct pl_option opts[] = {
		{ "report", PL_OPT_INT, &report, 0, 1e12, "N",
		  "use report number N of each file (default: the last)" },
		{ "pid", PL_OPT_INT, &pid, 0, 4194304, "PID",
		  "only reports of this process (a file may hold several)" },
		{ "label-a", PL_OPT_STRING, &label_a, 0, 0, "TEXT", "column title for A" },
		{ "label-b", PL_OPT_STRING, &label_b, 0, 0, "TEXT", "column title for B" },
		{ "markdown", PL_OPT_BOOL, &markdown, 0, 0, NULL, "print a Markdown table" },
		PL_OPT_END,
	};
	struct pl_profile_pick pick;
	struct pl_ab_table t = { NULL, 0, 0, 1 };
	char err[PL_ERRBUF];
	int next, rc, files, status = 1;

	rc = pl__options_parse_argv(opts, argc, argv, &next, err, sizeof(err));
	if (rc == 1) {
		usage(stdout, opts);
		pl__options_free(opts);
		return 0;
	}
	files = argc - next;
	if (rc < 0 || files < 1 || files > 2) {
		if (rc < 0)
			fprintf(stderr, "perflink compare: %s\n", err);
		else
			fprintf(stderr, "perflink compare: one or two report files (see --help)\n");
		pl__options_free(opts);
		return 2;
	}
	pick.report = (uint64_t)report;
	pick.pid = (uint64_t)pid;
	if (pl__profile_report_load(argv[next], &pick, &ra, err, sizeof(err)) < 0 ||
	    (files == 2 &&
	     pl__profile_report_load(argv[next + 1], &pick, &rb, err, sizeof(err)) < 0)) {
		fprintf(stderr, "perflink compare: %s\n", err);
		goto out;
	}
	t.files = files;
	if (build(&t, &ra, files == 2 ? &rb : NULL) < 0) {
		fprintf(stderr, "perflink compare: out of memory\n");
		goto out;
	}
	describe("A", argv[next], &ra);
	if (files == 2)
		describe("B", argv[next + 1], &rb);
	printf("\n");
	pl__ab_table_print(&t, stdout, label_a ? label_a : "A", label_b ? label_b : "B", markdown);
	status = fflush(stdout) == 0 ? 0 : 1;
out:
	pl__ab_table_free(&t);
	pl__options_free(opts);
	return status;
}
