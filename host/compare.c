/* perflink-host compare A B: the A/B table (common/ab_table.h) of two runs
 * that perflink-host --out recorded. From each directory's summary.json:
 * frames and bytes, the latency quantiles, held frames, MB/s; from its
 * telemetry (the recording reader of host/export): the sampled processes'
 * CPU use over the run (resources.jsonl, first to last sample) and the
 * stage totals of each process's last profiler report. */
#include "ab_table.h"
#include "compare.h"
#include "json_reader.h"
#include "options.h"
#include "proc_parse.h"
#include "recording.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* summary.json's fields the table shows, in its order */
enum field {
	F_FRAMES,
	F_BYTES,
	F_P50,
	F_P99,
	F_P999,
	F_MAX,
	F_ONE_WAY_P50,
	F_ONE_WAY_P99,
	F_HELD,
	F_MBPS,
	F_COUNT
};

static const struct {
	const char *key, *metric;
	enum pl_ab_unit unit;
	double scale; /* to the unit: ms to ns */
} fields[F_COUNT] = {
	[F_FRAMES] = { "frames", "frames", PL_AB_COUNT, 1 },
	[F_BYTES] = { "bytes", "bytes", PL_AB_BYTES, 1 },
	[F_P50] = { "p50_ms", "latency p50", PL_AB_NS, 1e6 },
	[F_P99] = { "p99_ms", "latency p99", PL_AB_NS, 1e6 },
	[F_P999] = { "p999_ms", "latency p99.9", PL_AB_NS, 1e6 },
	[F_MAX] = { "max_ms", "latency max", PL_AB_NS, 1e6 },
	[F_ONE_WAY_P50] = { "one_way_p50_ms", "one-way p50", PL_AB_NS, 1e6 },
	[F_ONE_WAY_P99] = { "one_way_p99_ms", "one-way p99", PL_AB_NS, 1e6 },
	[F_HELD] = { "held_frames", "held frames", PL_AB_COUNT, 1 },
	[F_MBPS] = { "mbps", "MB/s", PL_AB_RATE, 1 },
};

struct run {
	const char *dir;
	struct pl_ab_cell cell[F_COUNT];
	bool seen[F_COUNT];
	char latency_source[32];
	struct pl_recording rec;
	bool have_rec;
};

static void on_scalar(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct run *run = ctx;
	int f;

	if (strcmp(path, "latency_source") == 0 && kind == PL_JSON_STRING) {
		snprintf(run->latency_source, sizeof(run->latency_source), "%s", value);
		return;
	}
	for (f = 0; f < F_COUNT; f++) {
		uint64_t u;
		double v;
		char *end;

		if (strcmp(path, fields[f].key) != 0)
			continue;
		run->seen[f] = true;
		if (kind != PL_JSON_NUMBER) /* null: no value in that run */
			return;
		if (fields[f].unit == PL_AB_COUNT || fields[f].unit == PL_AB_BYTES) {
			if (pl__parse_u64_all(value, &u))
				run->cell[f] = pl__ab_exact(u);
			return;
		}
		v = strtod(value, &end);
		if (end != value && *end == '\0' && isfinite(v))
			run->cell[f] = pl__ab_value(v * fields[f].scale);
		return;
	}
}

/* 0, or -1 with the reason in err */
static int load_summary(struct run *run, char *err, size_t cap)
{
	char path[4096], *text = NULL;
	size_t len = 0;
	FILE *in;
	int r;

	if ((size_t)snprintf(path, sizeof(path), "%s/summary.json", run->dir) >= sizeof(path)) {
		snprintf(err, cap, "%s: path too long", run->dir);
		return -1;
	}
	in = fopen(path, "re");
	if (!in) {
		snprintf(err, cap, "%s: %s (not a directory perflink-host --out wrote?)", path,
			 strerror(errno));
		return -1;
	}
	{
		char buf[8192];
		size_t n;
		FILE *mem = open_memstream(&text, &len);

		if (!mem) {
			fclose(in);
			snprintf(err, cap, "out of memory");
			return -1;
		}
		while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
			fwrite(buf, 1, n, mem);
		r = ferror(in) ? -EIO : 0;
		if (fclose(mem) != 0 && !r)
			r = -ENOMEM;
		fclose(in);
	}
	if (r == 0)
		r = pl__json_walk(text, len, on_scalar, run);
	free(text);
	if (r < 0) {
		snprintf(err, cap, "%s: %s", path,
			 r == -EIO ? strerror(EIO) : r == -ENOMEM ? "out of memory" : "not valid JSON");
		return -1;
	}
	/* every summary.json has these, null where a run had no value */
	if (!run->seen[F_FRAMES] || !run->seen[F_P50] || !run->seen[F_MBPS] ||
	    !run->cell[F_FRAMES].present) {
		snprintf(err, cap, "%s: not a perflink-host summary (no frames, p50_ms or mbps)",
			 path);
		return -1;
	}
	return 0;
}

/* The recording's telemetry; none is no error (a run without telemetry). */
static int load_recording(struct run *run, char *err, size_t cap)
{
	int r = pl__recording_read(&run->rec, run->dir);

	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		snprintf(err, cap, "%s: cannot read the recording: %s", run->dir, strerror(-r));
		return -1;
	}
	run->have_rec = true;
	return 0;
}

/* The sampled processes' CPU use, % of one core, first to last sample;
 * comm NULL: all of them. */
static struct pl_ab_cell cpu_percent(const struct run *run, const char *comm)
{
	const struct pl_recording *r = &run->rec;
	double percent = 0;
	bool any = false;
	size_t i;

	if (!run->have_rec || !r->clk_tck)
		return pl__ab_none();
	for (i = 0; i < r->n_procs; i++) {
		const struct pl_recorded_process *p = &r->procs[i];

		if (!p->have_mono || p->mono_ns <= p->first_mono_ns ||
		    (comm && strcmp(p->comm, comm) != 0))
			continue;
		percent += (double)(p->cpu_ticks - p->first_cpu_ticks) / (double)r->clk_tck /
			   ((double)(p->mono_ns - p->first_mono_ns) / 1e9) * 100.0;
		any = true;
	}
	return any ? pl__ab_value(percent) : pl__ab_none();
}

/* one of a stage's totals, summed over the processes of that comm */
enum stage_total { CALLS, CPU, WALL };

static struct pl_ab_cell stage_total(const struct run *run, const char *comm, const char *stage,
				     enum stage_total what)
{
	uint64_t sum = 0;
	bool any = false;
	size_t i;

	for (i = 0; run->have_rec && i < run->rec.n_stages; i++) {
		const struct pl_recorded_stage *s = &run->rec.stages[i];

		if (strcmp(s->comm, comm) != 0 || strcmp(s->stage, stage) != 0)
			continue;
		sum += what == CALLS ? s->calls : what == CPU ? s->cpu_total_ns : s->wall_total_ns;
		any = true;
	}
	if (!any)
		return pl__ab_none();
	return what == CALLS ? pl__ab_exact(sum) : pl__ab_value((double)sum);
}

/* whether an earlier process (of a) or stage (of a, then b) has the name */
static bool seen_proc(const struct run *a, const struct run *b, size_t i, bool in_b)
{
	const struct pl_recording *r = in_b ? &b->rec : &a->rec;
	size_t k;

	for (k = 0; k < i; k++)
		if (strcmp(r->procs[k].comm, r->procs[i].comm) == 0)
			return true;
	for (k = 0; in_b && a->have_rec && k < a->rec.n_procs; k++)
		if (strcmp(a->rec.procs[k].comm, r->procs[i].comm) == 0)
			return true;
	return false;
}

static bool seen_stage(const struct run *a, const struct run *b, size_t i, bool in_b)
{
	const struct pl_recording *r = in_b ? &b->rec : &a->rec;
	const struct pl_recorded_stage *s = &r->stages[i];
	size_t k;

	for (k = 0; k < i; k++)
		if (strcmp(r->stages[k].comm, s->comm) == 0 && strcmp(r->stages[k].stage, s->stage) == 0)
			return true;
	for (k = 0; in_b && a->have_rec && k < a->rec.n_stages; k++)
		if (strcmp(a->rec.stages[k].comm, s->comm) == 0 &&
		    strcmp(a->rec.stages[k].stage, s->stage) == 0)
			return true;
	return false;
}

static int build(struct pl_ab_table *t, const struct run *a, const struct run *b)
{
	char m[PL_AB_METRIC_MAX];
	int f, side, r = 0;
	size_t i;

	for (f = 0; f < F_COUNT && r == 0; f++)
		r = pl__ab_table_add(t, fields[f].unit, fields[f].metric, a->cell[f], b->cell[f]);
	if (r == 0 && (cpu_percent(a, NULL).present || cpu_percent(b, NULL).present))
		r = pl__ab_table_add(t, PL_AB_PERCENT, "device CPU (sampled processes)",
				     cpu_percent(a, NULL), cpu_percent(b, NULL));
	/* A's processes and stages in A's order, then those only B has */
	for (side = 0; side < 2 && r == 0; side++) {
		const struct run *run = side ? b : a;

		for (i = 0; run->have_rec && i < run->rec.n_procs && r == 0; i++) {
			const char *comm = run->rec.procs[i].comm;
			struct pl_ab_cell ca = cpu_percent(a, comm), cb = cpu_percent(b, comm);

			if (!ca.present && !cb.present)
				continue; /* one sample, or no clk_tck: no CPU use known */
			if (seen_proc(a, b, i, side == 1))
				continue;
			snprintf(m, sizeof(m), "CPU %s", comm);
			r = pl__ab_table_add(t, PL_AB_PERCENT, m, ca, cb);
		}
	}
	for (side = 0; side < 2 && r == 0; side++) {
		const struct run *run = side ? b : a;

		for (i = 0; run->have_rec && i < run->rec.n_stages && r == 0; i++) {
			const struct pl_recorded_stage *s = &run->rec.stages[i];
			static const struct {
				enum stage_total what;
				const char *label;
				enum pl_ab_unit unit;
			} totals[] = { { CALLS, "calls", PL_AB_COUNT },
				       { CPU, "CPU", PL_AB_NS },
				       { WALL, "wall", PL_AB_NS } };
			size_t k;

			if (seen_stage(a, b, i, side == 1))
				continue;
			for (k = 0; k < sizeof(totals) / sizeof(totals[0]) && r == 0; k++) {
				snprintf(m, sizeof(m), "%s %s %s", s->comm, s->stage,
					 totals[k].label);
				r = pl__ab_table_add(t, totals[k].unit, m,
						     stage_total(a, s->comm, s->stage, totals[k].what),
						     stage_total(b, s->comm, s->stage, totals[k].what));
			}
		}
	}
	return r;
}

static void usage(FILE *out, const struct pl_option *table)
{
	fprintf(out,
		"usage: perflink-host compare [OPTIONS] A B\n\n"
		"The A/B table of two runs that perflink-host --out recorded (directories A\n"
		"and B): Metric | A | B | Change, the change absolute and in percent.\n"
		"From each DIR/summary.json: frames, bytes, latency p50/p99/p99.9/max (the\n"
		"device's round trip where it reported one, else one way, as summary.json's\n"
		"latency_source says), one-way p50/p99, held frames, MB/s. From\n"
		"DIR/telemetry: the CPU use of the processes perflinkd sampled (resources,\n"
		"first to last sample, %% of one core; all of them, then each by name) and the\n"
		"stage totals of each process's last profiler report (calls, CPU, wall).\n"
		"A value a run does not have shows as -. Exit 0; 2 for a wrong command line\n"
		"or when a summary.json is missing or is not one (said on stderr); 1 when the\n"
		"table could not be written.\n\n"
		"options:\n");
	pl__options_print_help(table, out);
}

int pl__host_compare(int argc, char **argv)
{
	static struct run a, b;
	char *label_a = NULL, *label_b = NULL;
	bool markdown = false;
	struct pl_option opts[] = {
		{ "label-a", PL_OPT_STRING, &label_a, 0, 0, "TEXT", "column title for A" },
		{ "label-b", PL_OPT_STRING, &label_b, 0, 0, "TEXT", "column title for B" },
		{ "markdown", PL_OPT_BOOL, &markdown, 0, 0, NULL, "print a Markdown table" },
		PL_OPT_END,
	};
	struct pl_ab_table t = { NULL, 0, 0, 2 };
	char err[PL_ERRBUF + 4096];
	int next, rc, status = 2;

	rc = pl__options_parse_argv(opts, argc, argv, &next, err, sizeof(err));
	if (rc == 1) {
		usage(stdout, opts);
		pl__options_free(opts);
		return 0;
	}
	if (rc < 0 || argc - next != 2) {
		fprintf(stderr, "perflink-host compare: %s\n",
			rc < 0 ? err : "two recorded directories, A and B (see --help)");
		pl__options_free(opts);
		return 2;
	}
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.dir = argv[next];
	b.dir = argv[next + 1];
	if (load_summary(&a, err, sizeof(err)) < 0 || load_summary(&b, err, sizeof(err)) < 0 ||
	    load_recording(&a, err, sizeof(err)) < 0 || load_recording(&b, err, sizeof(err)) < 0) {
		fprintf(stderr, "perflink-host compare: %s\n", err);
		goto out;
	}
	if (build(&t, &a, &b) < 0) {
		fprintf(stderr, "perflink-host compare: out of memory\n");
		status = 1;
		goto out;
	}
	printf("A: %s (latency: %s)\nB: %s (latency: %s)\n\n", a.dir,
	       a.latency_source[0] ? a.latency_source : "?", b.dir,
	       b.latency_source[0] ? b.latency_source : "?");
	pl__ab_table_print(&t, stdout, label_a ? label_a : "A", label_b ? label_b : "B", markdown);
	status = fflush(stdout) == 0 ? 0 : 1;
out:
	pl__ab_table_free(&t);
	if (a.have_rec)
		pl__recording_free(&a.rec);
	if (b.have_rec)
		pl__recording_free(&b.rec);
	pl__options_free(opts);
	return status;
}
