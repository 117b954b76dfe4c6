/* See ab_table.h. */
#include "ab_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int pl__ab_table_add(struct pl_ab_table *t, enum pl_ab_unit unit, const char *metric,
		     struct pl_ab_cell a, struct pl_ab_cell b)
{
	struct pl_ab_row *r;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct pl_ab_row *rows = realloc(t->rows, cap * sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		t->rows = rows;
		t->cap = cap;
	}
	r = &t->rows[t->n++];
	snprintf(r->metric, sizeof(r->metric), "%s", metric);
	r->unit = unit;
	r->c[0] = a;
	r->c[1] = b;
	return 0;
}

void pl__ab_table_free(struct pl_ab_table *t)
{
	free(t->rows);
	t->rows = NULL;
	t->n = t->cap = 0;
}

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

static void format_value(char *out, size_t cap, const struct pl_ab_row *r,
			 const struct pl_ab_cell *c, const struct ns_scale *s)
{
	if (!c->present) {
		snprintf(out, cap, "-");
		return;
	}
	switch (r->unit) {
	case PL_AB_COUNT:
	case PL_AB_BYTES:
		with_commas(out, cap, c->u);
		break;
	case PL_AB_NS:
		snprintf(out, cap, "%.*f %s", s->decimals, c->v / s->div, s->name);
		break;
	case PL_AB_RATIO:
		snprintf(out, cap, "%.2f", c->v);
		break;
	case PL_AB_RATE:
		snprintf(out, cap, "%.3f", c->v);
		break;
	case PL_AB_PERCENT:
		snprintf(out, cap, "%.3f%%", c->v);
		break;
	}
}

static void format_change(char *out, size_t cap, const struct pl_ab_row *r,
			  const struct ns_scale *s)
{
	const struct pl_ab_cell *a = &r->c[0], *b = &r->c[1];
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
	case PL_AB_COUNT:
	case PL_AB_BYTES: {
		char digits[40];

		with_commas(digits, sizeof(digits), b->u >= a->u ? b->u - a->u : a->u - b->u);
		snprintf(abs, sizeof(abs), "%s%s", b->u >= a->u ? "+" : "-", digits);
		break;
	}
	case PL_AB_NS:
		snprintf(abs, sizeof(abs), "%+.*f %s", s->decimals, (b->v - a->v) / s->div,
			 s->name);
		break;
	case PL_AB_RATIO:
		snprintf(abs, sizeof(abs), "%+.2f", b->v - a->v);
		break;
	case PL_AB_RATE:
		snprintf(abs, sizeof(abs), "%+.3f", b->v - a->v);
		break;
	case PL_AB_PERCENT:
		/* a share's change is in points; the percent is of A's share */
		snprintf(abs, sizeof(abs), "%+.3f points", b->v - a->v);
		break;
	}
	if (a->v == 0) {
		snprintf(out, cap, "%s (new)", abs);
		return;
	}
	pct = (b->v - a->v) / a->v * 100.0;
	snprintf(out, cap, "%s (%+.1f%%)", abs, pct);
}

void pl__ab_table_print(const struct pl_ab_table *t, FILE *out, const char *label_a,
			const char *label_b, bool markdown)
{
	const char *head[4] = { "Metric", label_a, label_b, "Change" };
	int cols = t->files == 2 ? 4 : 2, w[4], i;
	char cell[4][PL_AB_METRIC_MAX];
	size_t k;

	for (i = 0; i < cols; i++)
		w[i] = (int)strlen(head[i]);
	/* two passes: widths, then the text */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			for (i = 0; i < cols; i++)
				fprintf(out, markdown ? "| %-*s " : "%-*s  ", markdown ? 0 : w[i],
					head[i]);
			fprintf(out, markdown ? "|\n" : "\n");
			if (markdown) {
				for (i = 0; i < cols; i++)
					fprintf(out, "| %s ", i == 0 || i == 3 ? "---" : "---:");
				fprintf(out, "|\n");
			}
		}
		for (k = 0; k < t->n; k++) {
			const struct pl_ab_row *r = &t->rows[k];
			double va = r->c[0].present ? r->c[0].v : 0;
			double vb = r->c[1].present ? r->c[1].v : 0;
			/* no fmax: plcommon does not link libm */
			double max = va > vb ? va : vb;
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
					fprintf(out, "| %s ", cell[i]);
				} else {
					/* numbers right-aligned, names and changes left */
					fprintf(out, i == 1 || i == 2 ? "%*s  " : "%-*s  ", w[i],
						cell[i]);
				}
			}
			if (pass == 1)
				fprintf(out, markdown ? "|\n" : "\n");
		}
	}
}
