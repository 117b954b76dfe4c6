/* `perflink compare A [B]`: the A/B table of two stage-profiler reports,
 * in the form docs/PROFILING.md-style write-ups use (Metric | A | B |
 * Change): per frame and per stage, absolute and relative change. With one
 * file, the table of that report alone.
 *
 * The reports are cumulative, so each file's last report (or --report N)
 * stands for the whole run. Per-frame values divide by the report's
 * completed frames. */
#include "cli.h"
#include "options.h"
#include "profile_report.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum unit { U_COUNT, U_BYTES, U_NS, U_RATIO, U_RATE };

struct cell {
	bool present;
	double v;
	uint64_t u; /* exact, for counts and bytes */
};

struct row {
	char metric[PL_PROFILE_NAME_MAX + 32];
	enum unit unit;
	struct cell c[2];
};

struct table {
	struct row *rows;
	size_t n, cap;
	int files;
};

static int add_row(struct table *t, enum unit unit, const char *metric, const struct cell *a,
		   const struct cell *b)
{
	struct row *r;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct row *rows = realloc(t->rows, cap * sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		t->rows = rows;
		t->cap = cap;
	}
	r = &t->rows[t->n++];
	snprintf(r->metric, sizeof(r->metric), "%s", metric);
	r->unit = unit;
	r->c[0] = *a;
	r->c[1] = b ? *b : (struct cell){ false, 0, 0 };
	return 0;
}

static struct cell exact(uint64_t u)
{
	return (struct cell){ true, (double)u, u };
}

static struct cell per_frame(uint64_t total, uint64_t frames)
{
	if (frames == 0)
		return (struct cell){ false, 0, 0 };
	return (struct cell){ true, (double)total / (double)frames, 0 };
}

static struct cell average(uint64_t total, uint64_t n)
{
	if (n == 0)
		return (struct cell){ false, 0, 0 };
	return (struct cell){ true, (double)total / (double)n, 0 };
}

/* --- formatting ------------------------------------------------------- */

static void with_commas(char *out, size_t cap, uint64_t v)
{
	char digits[32];
	size_t n, i, o = 0;

	n = (size_t)snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
	for (i = 0; i < n && o + 2 < cap; i++) {
		if (i && (n - i) % 3 == 0)
			out[o++] = ',';
		out[o++] = digits[i];
	}
	out[o] = '\0';
}

struct ns_scale {
	const char *name;
	double div;
	int decimals;
};

/* One unit for a row, chosen by its larger value: "795 us", "18.8 ms". */
static struct ns_scale ns_scale_for(double max)
{
	if (max < 1e3)
		return (struct ns_scale){ "ns", 1, 0 };
	if (max < 1e4)
		return (struct ns_scale){ "us", 1e3, 1 };
	if (max < 1e6)
		return (struct ns_scale){ "us", 1e3, 0 };
	if (max < 1e7)
		return (struct ns_scale){ "ms", 1e6, 2 };
	if (max < 1e10)
		return (struct ns_scale){ "ms", 1e6, 1 };
	return (struct ns_scale){ "s", 1e9, 2 };
}

static void format_value(char *out, size_t cap, const struct row *r, const struct cell *c,
			 const struct ns_scale *s)
{
	if (!c->present) {
		snprintf(out, cap, "-");
		return;
	}
	switch (r->unit) {
	case U_COUNT:
	case U_BYTES:
		with_commas(out, cap, c->u);
		break;
	case U_NS:
		snprintf(out, cap, "%.*f %s", s->decimals, c->v / s->div, s->name);
		break;
	case U_RATIO:
		snprintf(out, cap, "%.2f", c->v);
		break;
	case U_RATE:
		snprintf(out, cap, "%.3f", c->v);
		break;
	}
}

static void format_change(char *out, size_t cap, const struct row *r, const struct ns_scale *s)
{
	const struct cell *a = &r->c[0], *b = &r->c[1];
	char abs[64], va[64], vb[64];
	double pct;

	if (!a->present || !b->present) {
		snprintf(out, cap, "%s", a->present ? "only in A" : b->present ? "only in B" : "-");
		return;
	}
	format_value(va, sizeof(va), r, a, s);
	format_value(vb, sizeof(vb), r, b, s);
	if (strcmp(va, vb) == 0) {
		snprintf(out, cap, "unchanged");
		return;
	}
	switch (r->unit) {
	case U_COUNT:
	case U_BYTES: {
		char digits[40];

		with_commas(digits, sizeof(digits), b->u >= a->u ? b->u - a->u : a->u - b->u);
		snprintf(abs, sizeof(abs), "%s%s", b->u >= a->u ? "+" : "-", digits);
		break;
	}
	case U_NS:
		snprintf(abs, sizeof(abs), "%+.*f %s", s->decimals, (b->v - a->v) / s->div,
			 s->name);
		break;
	case U_RATIO:
		snprintf(abs, sizeof(abs), "%+.2f", b->v - a->v);
		break;
	case U_RATE:
		snprintf(abs, sizeof(abs), "%+.3f", b->v - a->v);
		break;
	}
	if (a->v == 0) {
		snprintf(out, cap, "%s (new)", abs);
		return;
	}
	pct = (b->v - a->v) / a->v * 100.0;
	snprintf(out, cap, "%s (%+.1f%%)", abs, pct);
}

/* --- the table -------------------------------------------------------- */

static int add(struct table *t, enum unit unit, const char *metric, struct cell a, struct cell b)
{
	return add_row(t, unit, metric, &a, &b);
}

static bool any(const struct table *t, uint64_t a, uint64_t b)
{
	return a != 0 || (t->files == 2 && b != 0);
}

static const struct pl_profile_stage *stage_of(const struct pl_profile_report *r, const char *name)
{
	return r ? pl__profile_stage(r, name) : NULL;
}

static int stage_rows(struct table *t, const char *name, const struct pl_profile_report *ra,
		      const struct pl_profile_report *rb)
{
	static const struct pl_profile_stage none;
	const struct pl_profile_stage *a = stage_of(ra, name), *b = stage_of(rb, name);
	const struct pl_profile_stage *sa = a ? a : &none, *sb = b ? b : &none;
	uint64_t fa = ra->frames, fb = rb ? rb->frames : 0;
	char m[PL_PROFILE_NAME_MAX + 32];
	struct cell ca, cb;
	int r = 0;

#define CELLS(expr_a, expr_b)                                                     \
	(ca = a ? (expr_a) : (struct cell){ false, 0, 0 },                         \
	 cb = b ? (expr_b) : (struct cell){ false, 0, 0 })
#define ROW(unit, label, expr_a, expr_b)                                          \
	do {                                                                      \
		CELLS(expr_a, expr_b);                                            \
		snprintf(m, sizeof(m), "%s %s", name, label);                     \
		r = r < 0 ? r : add(t, unit, m, ca, cb);                          \
	} while (0)

	ROW(U_COUNT, "calls", exact(sa->calls), exact(sb->calls));
	ROW(U_RATIO, "calls/frame", per_frame(sa->calls, fa), per_frame(sb->calls, fb));
	ROW(U_NS, "CPU/frame", per_frame(sa->cpu_total_ns, fa), per_frame(sb->cpu_total_ns, fb));
	ROW(U_NS, "wall/frame", per_frame(sa->wall_total_ns, fa),
	    per_frame(sb->wall_total_ns, fb));
	ROW(U_NS, "CPU avg", average(sa->cpu_total_ns, sa->calls),
	    average(sb->cpu_total_ns, sb->calls));
	ROW(U_NS, "CPU max", exact(sa->cpu_max_ns), exact(sb->cpu_max_ns));
	ROW(U_NS, "wall avg", average(sa->wall_total_ns, sa->calls),
	    average(sb->wall_total_ns, sb->calls));
	ROW(U_NS, "wall max", exact(sa->wall_max_ns), exact(sb->wall_max_ns));
	if (any(t, sa->eagain + sa->enodata + sa->eintr, sb->eagain + sb->enodata + sb->eintr)) {
		ROW(U_COUNT, "EAGAIN retries", exact(sa->eagain), exact(sb->eagain));
		ROW(U_COUNT, "ENODATA retries", exact(sa->enodata), exact(sb->enodata));
		ROW(U_COUNT, "EINTR retries", exact(sa->eintr), exact(sb->eintr));
	}
	if (any(t, sa->errors, sb->errors))
		ROW(U_COUNT, "errors", exact(sa->errors), exact(sb->errors));
	if (any(t, sa->cache_bytes, sb->cache_bytes))
		ROW(U_BYTES, "cache bytes", exact(sa->cache_bytes), exact(sb->cache_bytes));
	if (any(t, sa->stream_bytes, sb->stream_bytes))
		ROW(U_BYTES, "stream bytes", exact(sa->stream_bytes), exact(sb->stream_bytes));
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

static struct cell rate(const struct pl_profile_report *r)
{
	if (!r || r->elapsed_ns == 0)
		return (struct cell){ false, 0, 0 };
	return (struct cell){ true, (double)r->frames * 1e9 / (double)r->elapsed_ns, 0 };
}

static int build(struct table *t, const struct pl_profile_report *a,
		 const struct pl_profile_report *b)
{
	struct sums sa = sum(a), sb = sum(b);
	uint64_t fa = a->frames, fb = b ? b->frames : 0;
	struct cell none = { false, 0, 0 };
	unsigned i;
	int r = 0;

#define B(expr) (b ? (expr) : none)
	r = r ? r : add(t, U_COUNT, "completed frames", exact(fa), B(exact(fb)));
	r = r ? r : add(t, U_NS, "elapsed", exact(a->elapsed_ns), B(exact(b->elapsed_ns)));
	r = r ? r : add(t, U_RATE, "frames/s since start", rate(a), B(rate(b)));
	r = r ? r : add(t, U_RATIO, "measured calls/frame", per_frame(sa.calls, fa),
			B(per_frame(sb.calls, fb)));
	r = r ? r : add(t, U_NS, "measured CPU/frame", per_frame(sa.cpu, fa),
			B(per_frame(sb.cpu, fb)));
	r = r ? r : add(t, U_NS, "measured wall/frame", per_frame(sa.wall, fa),
			B(per_frame(sb.wall, fb)));
	r = r ? r : add(t, U_COUNT, "cache calls", exact(sa.cache_calls), B(exact(sb.cache_calls)));
	r = r ? r : add(t, U_RATIO, "cache calls/frame", per_frame(sa.cache_calls, fa),
			B(per_frame(sb.cache_calls, fb)));
	r = r ? r : add(t, U_BYTES, "cache-accounted bytes", exact(sa.cache_bytes),
			B(exact(sb.cache_bytes)));
	if (any(t, sa.stream_bytes, sb.stream_bytes))
		r = r ? r : add(t, U_BYTES, "published stream bytes", exact(sa.stream_bytes),
				B(exact(sb.stream_bytes)));
	r = r ? r : add(t, U_COUNT, "retries (EAGAIN/ENODATA/EINTR)", exact(sa.retries),
			B(exact(sb.retries)));
	r = r ? r : add(t, U_COUNT, "errors", exact(sa.errors), B(exact(sb.errors)));
	if (any(t, a->dropped_calls, b ? b->dropped_calls : 0))
		r = r ? r : add(t, U_COUNT, "dropped calls", exact(a->dropped_calls),
				B(exact(b->dropped_calls)));
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

static void print_table(const struct table *t, const char *label_a, const char *label_b,
			bool markdown)
{
	const char *head[4] = { "Metric", label_a, label_b, "Change" };
	int cols = t->files == 2 ? 4 : 2, w[4], i;
	char cell[4][128];
	size_t k;

	for (i = 0; i < cols; i++)
		w[i] = (int)strlen(head[i]);
	/* two passes: widths, then the text */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			for (i = 0; i < cols; i++)
				printf(markdown ? "| %-*s " : "%-*s  ", markdown ? 0 : w[i],
				       head[i]);
			printf(markdown ? "|\n" : "\n");
			if (markdown) {
				for (i = 0; i < cols; i++)
					printf("| %s ", i == 0 || i == 3 ? "---" : "---:");
				printf("|\n");
			}
		}
		for (k = 0; k < t->n; k++) {
			const struct row *r = &t->rows[k];
			double max = fmax(r->c[0].present ? r->c[0].v : 0,
					  r->c[1].present ? r->c[1].v : 0);
			struct ns_scale s = ns_scale_for(max);

			snprintf(cell[0], sizeof(cell[0]), "%s", r->metric);
			format_value(cell[1], sizeof(cell[1]), r, &r->c[0], &s);
			if (cols == 4) {
				format_value(cell[2], sizeof(cell[2]), r, &r->c[1], &s);
				format_change(cell[3], sizeof(cell[3]), r, &s);
			}
			for (i = 0; i < cols; i++) {
				if (pass == 0) {
					if ((int)strlen(cell[i]) > w[i])
						w[i] = (int)strlen(cell[i]);
				} else if (markdown) {
					printf("| %s ", cell[i]);
				} else {
					/* numbers right-aligned, names and changes left */
					printf(i == 1 || i == 2 ? "%*s  " : "%-*s  ", w[i],
					       cell[i]);
				}
			}
			if (pass == 1)
				printf(markdown ? "|\n" : "\n");
		}
	}
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
	struct table t = { NULL, 0, 0, 1 };
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
	print_table(&t, label_a ? label_a : "A", label_b ? label_b : "B", markdown);
	status = fflush(stdout) == 0 ? 0 : 1;
out:
	free(t.rows);
	pl__options_free(opts);
	return status;
}
