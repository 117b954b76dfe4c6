/* The A/B table of two runs, in the form the profiling write-ups use
 * (Metric | A | B | Change): a value per run in a unit chosen per row, and
 * the change absolute and in percent ("-1,499 (-22.2%)", "-0.557 points
 * (-10.4%)", "unchanged", "only in B"). With one run, Metric | A only.
 * `perflink compare` (stage-profiler reports) and `perflink-host compare`
 * (recorded runs) print theirs through it. */
#ifndef PL_COMMON_AB_TABLE_H
#define PL_COMMON_AB_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PL_AB_METRIC_MAX 160 /* bytes of a row's name, NUL included */

enum pl_ab_unit {
	PL_AB_COUNT,   /* a whole number, with thousands separators (u) */
	PL_AB_BYTES,   /* likewise (u) */
	PL_AB_NS,      /* ns, shown in ns, us, ms or s by the row's larger value */
	PL_AB_RATIO,   /* two decimals */
	PL_AB_RATE,    /* three decimals */
	PL_AB_PERCENT, /* "5.343%"; its change in points */
};

struct pl_ab_cell {
	bool present;
	double v;
	uint64_t u; /* exact, for counts and bytes */
};

struct pl_ab_row {
	char metric[PL_AB_METRIC_MAX];
	enum pl_ab_unit unit;
	struct pl_ab_cell c[2];
};

struct pl_ab_table {
	struct pl_ab_row *rows;
	size_t n, cap;
	int files; /* 1: A only; 2: A and B */
};

static inline struct pl_ab_cell pl__ab_exact(uint64_t u)
{
	return (struct pl_ab_cell){ true, (double)u, u };
}

static inline struct pl_ab_cell pl__ab_value(double v)
{
	return (struct pl_ab_cell){ true, v, 0 };
}

static inline struct pl_ab_cell pl__ab_none(void)
{
	return (struct pl_ab_cell){ false, 0, 0 };
}

/* Append a row (metric cut to PL_AB_METRIC_MAX). 0 or -ENOMEM. */
int pl__ab_table_add(struct pl_ab_table *t, enum pl_ab_unit unit, const char *metric,
		     struct pl_ab_cell a, struct pl_ab_cell b);
/* Columns aligned (numbers right, names and changes left), or a Markdown
 * table; the heads Metric, label_a, label_b, Change. */
void pl__ab_table_print(const struct pl_ab_table *t, FILE *out, const char *label_a,
			const char *label_b, bool markdown);
void pl__ab_table_free(struct pl_ab_table *t);

#endif
