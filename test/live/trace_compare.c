/* The comparisons of two tracers' rows of one live stall (trace_compare.h).
 *
 * Timing: a row's mono is when its tick began, and the tool read the
 * process before its next tick began (the row's until). A row is placed in
 * the span of the process's ledger (a wait, a disk phase) that overlaps
 * that interval. The napper's phases are a second apart, so only a tick
 * that took a second could overlap two; such a row is said and left out. */
#include "trace_compare.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TICK_S 0.1 /* both tools run at --hz 10 */
#define CLOCK_PRINT_S 0.002 /* mono is printed with three decimals */

struct delta {
	double wchar_kb, wbytes_kb, blkio_ms;
};

/* The span r's reading fell in, or -1; *twice when it may have fallen in
 * the next one as well. */
static int span_of(const struct actor_span *s, unsigned n, const struct trace_row *r,
		   bool *twice)
{
	for (unsigned i = 0; i < n; i++) {
		if (s[i].end + CLOCK_PRINT_S < r->mono)
			continue;
		if (s[i].start - CLOCK_PRINT_S > r->until)
			return -1;
		*twice = i + 1 < n && s[i + 1].start - CLOCK_PRINT_S <= r->until;
		return (int)i;
	}
	return -1;
}

/* Whether r's reading may have fallen in s. */
static bool overlaps(const struct actor_span *s, const struct trace_row *r)
{
	return s->end + CLOCK_PRINT_S >= r->mono && s->start - CLOCK_PRINT_S <= r->until;
}

/* Whether rows has a D row of pid read maybe in s. */
static bool d_row_in(const struct trace_rows *rows, pid_t pid, const struct actor_span *s)
{
	for (size_t j = 0; j < rows->n; j++) {
		if (rows->v[j].pid == pid && rows->v[j].state == 'D' && overlaps(s, &rows->v[j]))
			return true;
	}
	return false;
}

/* How many D rows of pid rows has, read maybe in s. */
static unsigned d_rows_in(const struct trace_rows *rows, pid_t pid, const struct actor_span *s)
{
	unsigned n = 0;

	for (size_t j = 0; j < rows->n; j++)
		n += rows->v[j].pid == pid && rows->v[j].state == 'D' && overlaps(s, &rows->v[j]);
	return n;
}

static struct delta counters_change(const struct actor_counters *from,
				    const struct actor_counters *to, long clk_tck)
{
	return (struct delta){
		((double)to->wchar - (double)from->wchar) / 1024.0,
		((double)to->wbytes - (double)from->wbytes) / 1024.0,
		((double)to->blkio_ticks - (double)from->blkio_ticks) * 1000.0 / (double)clk_tck,
	};
}

/* A tool's ticks that began and ended inside s (it read the process
 * during s), and its D rows of pid among them. */
static void ticks_inside(const struct trace_rows *rows, pid_t pid, const struct actor_span *s,
			 unsigned *ticks, unsigned *d)
{
	*ticks = *d = 0;
	for (size_t t = 0; t + 1 < rows->sys; t++)
		*ticks += rows->tick[t] >= s->start && rows->tick[t + 1] <= s->end;
	for (size_t j = 0; j < rows->n; j++) {
		const struct trace_row *r = &rows->v[j];

		*d += r->pid == pid && r->state == 'D' && r->mono >= s->start && r->until <= s->end;
	}
}

/* The process is in D for most of each span (a wait, a disk phase), so a
 * tool that read it twice or more inside one has a D row in it, and of all
 * its ticks inside spans at least half read it in D (the victim runs a
 * little in write(), the napper between its fdatasyncs). A tool that kept
 * a D state once per wait, or read it late, falls well below. Counted per
 * tool and per tick, not against the other tool: a starved tool (Python at
 * nice 10 on a loaded CPU 0 has taken 1.3 s for a tick) has fewer ticks
 * inside, not fewer D rows per tick. */
static void spans_in_d(const struct traced t[2], pid_t pid, const struct actor_span *s,
		       unsigned n, const char *what)
{
	unsigned missed[2] = { 0, 0 }, ticks[2] = { 0, 0 }, d[2] = { 0, 0 };

	for (unsigned i = 0; i < n; i++) {
		for (int k = 0; k < 2; k++) {
			unsigned in_ticks, in_d;

			ticks_inside(&t[k].rows, pid, &s[i], &in_ticks, &in_d);
			ticks[k] += in_ticks;
			d[k] += in_d;
			if (in_ticks >= 2 && !d_row_in(&t[k].rows, pid, &s[i])) {
				missed[k]++;
				printf("# %s: %u ticks inside the %s %.3f-%.3f, none in D\n",
				       t[k].tool, in_ticks, what, s[i].start, s[i].end);
			}
		}
	}
	printf("# %ss: %s read it in D in %u of its %u ticks inside them, %s in %u of %u\n", what,
	       t[0].tool, d[0], ticks[0], t[1].tool, d[1], ticks[1]);
	compare_check(missed[0] == 0 && missed[1] == 0,
		      "each %s with two ticks of a tool inside has a D row of that tool", what);
	compare_check(2 * d[0] >= ticks[0] && 2 * d[1] >= ticks[1],
		      "at least half the ticks inside %ss read it in D, in each tool", what);
}

void compare_victim_totals(const struct traced t[2], const struct actors *a, pid_t victim,
			   long clk_tck)
{
	struct delta own = counters_change(&a->victim_begin, &a->victim_end, clk_tck), sum[2];
	double tol[2];

	printf("# victim's own counters over its run: wchar %.0f kB, write_bytes %.0f kB, "
	       "blkio %.0f ms\n", own.wchar_kb, own.wbytes_kb, own.blkio_ms);
	for (int k = 0; k < 2; k++) {
		const struct trace_rows *r = &t[k].rows;
		size_t rows = 0;

		size_t named = 0;

		sum[k] = (struct delta){ 0, 0, 0 };
		for (size_t j = 0; j < r->n; j++) {
			if (r->v[j].pid != victim)
				continue;
			rows++;
			named += strcmp(r->v[j].proc, VICTIM_COMM) == 0;
			sum[k].wchar_kb += r->v[j].d_wchar_kb;
			sum[k].wbytes_kb += r->v[j].d_wbytes_kb;
			sum[k].blkio_ms += r->v[j].d_blkio_ms;
		}
		/* Each row rounds to a whole kB or ms; the baselines were read
		 * before its first write and after its last, so nothing else
		 * may differ. */
		tol[k] = 0.5 * (double)rows + 0.01;
		printf("# %s: %zu rows of the victim, adding up to wchar %.0f kB, write_bytes "
		       "%.0f kB, blkio %.0f ms\n", t[k].tool, rows, sum[k].wchar_kb,
		       sum[k].wbytes_kb, sum[k].blkio_ms);
		compare_check(rows > 0, "%s has rows of the victim", t[k].tool);
		compare_check(named == rows, "%s: each under the watch name '%s' (%zu of %zu)",
			      t[k].tool, VICTIM_COMM, named, rows);
		compare_check(fabs(sum[k].wchar_kb - own.wchar_kb) <= tol[k] &&
			       fabs(sum[k].wbytes_kb - own.wbytes_kb) <= tol[k] &&
			       fabs(sum[k].blkio_ms - own.blkio_ms) <= tol[k],
		       "%s: the victim's rows add up to its own counters' change (within %.1f, "
		       "half a unit a row)", t[k].tool, tol[k]);
	}
	compare_check(fabs(sum[0].wchar_kb - sum[1].wchar_kb) <= tol[0] + tol[1] &&
		       fabs(sum[0].wbytes_kb - sum[1].wbytes_kb) <= tol[0] + tol[1] &&
		       fabs(sum[0].blkio_ms - sum[1].blkio_ms) <= tol[0] + tol[1],
	       "the two tools' totals of the victim agree");
}

/* One tool's D rows of the victim against its waits and the other tool's D
 * rows in them. */
static void victim_d_rows(const struct traced *t, const struct traced *other, pid_t victim,
			  const struct actor_span *w, unsigned n)
{
	size_t d_rows = 0, outside = 0, shared = 0;

	for (size_t j = 0; j < t->rows.n; j++) {
		const struct trace_row *r = &t->rows.v[j];
		bool twice;
		int i;

		if (r->pid != victim || r->state != 'D')
			continue;
		d_rows++;
		if ((i = span_of(w, n, r, &twice)) < 0) {
			outside++;
			printf("# %s: D row of the victim read at %.3f-%.3f, in none of its "
			       "waits\n", t->tool, r->mono, r->until);
		} else {
			shared += d_row_in(&other->rows, victim, &w[i]);
		}
	}
	printf("# %s: %zu D rows of the victim, %zu in a wait %s has one in too\n", t->tool,
	       d_rows, shared, other->tool);
	compare_check(outside == 0, "%s: each D row of the victim is during one of its waits",
		      t->tool);
}

void compare_victim_waits(const struct traced t[2], const struct actors *a, pid_t victim)
{
	unsigned n = a->victim_waits;
	double longest = 0;

	for (unsigned i = 0; i < n; i++) {
		if (a->victim_wait[i].end - a->victim_wait[i].start > longest)
			longest = a->victim_wait[i].end - a->victim_wait[i].start;
	}
	printf("# victim: %u waits, the longest %.0f ms\n", n, longest * 1e3);
	/* The victim's own clock, not either tool's: on a machine whose disk
	 * keeps up (a fast virtual disk, 24 GiB of memory) dd may not make
	 * it wait that long in the whole run, in about one run of five here.
	 * Said as a skip; the checks of its waits below run on the waits
	 * there were, the napper's D states are made by a vfork wait. */
	if (longest >= COMPARE_STALL_WAIT_S)
		compare_check(true, "the stall made the victim wait %.1f s or more at least once",
			      COMPARE_STALL_WAIT_S);
	else
		compare_skip("the stall did not make the victim wait %.1f s on this machine (at "
			     "most %.0f ms in %u waits)",
			     COMPARE_STALL_WAIT_S, longest * 1e3, n);
	victim_d_rows(&t[0], &t[1], victim, a->victim_wait, n);
	victim_d_rows(&t[1], &t[0], victim, a->victim_wait, n);
	spans_in_d(t, victim, a->victim_wait, n, "victim's wait");
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static bool within(double v, double lo, double hi)
{
	return v >= lo - 0.5 && v <= hi + 0.5; /* a row rounds to a whole kB or ms */
}

struct napper_seen {
	unsigned gaps;          /* D rows whose previous D row is in an earlier phase */
	double wchar_per_phase[NAPPER_PHASES_MAX]; /* such a row's d_wchar over the phases */
	double median;
};

/* What a D row of the napper in phase j may carry when the tool's previous
 * D row of it was in phase prev (-1: none, so 0): from the ledger's
 * counters at the edges of the two phases. Whether r's deltas are in it. */
static bool napper_row_fits(const struct actors *a, int prev, int j, const struct trace_row *r,
			    long clk_tck, struct delta *lo, struct delta *hi)
{
	*lo = *hi = (struct delta){ 0, 0, 0 };
	if (prev >= 0) {
		*lo = counters_change(&a->napper_phase[prev].end, &a->napper_phase[j].start, clk_tck);
		*hi = counters_change(&a->napper_phase[prev].start, &a->napper_phase[j].end, clk_tck);
		/* within one phase the lower bound is below 0: no less than 0 */
		lo->wchar_kb = lo->wchar_kb > 0 ? lo->wchar_kb : 0;
		lo->wbytes_kb = lo->wbytes_kb > 0 ? lo->wbytes_kb : 0;
		lo->blkio_ms = lo->blkio_ms > 0 ? lo->blkio_ms : 0;
	}
	return within(r->d_wchar_kb, lo->wchar_kb, hi->wchar_kb) &&
	       within(r->d_wbytes_kb, lo->wbytes_kb, hi->wbytes_kb) &&
	       within(r->d_blkio_ms, lo->blkio_ms, hi->blkio_ms);
}

/* The napper's D rows in one tool against its ledger; the number of rows
 * that did not fit. */
static unsigned napper_rows(const struct traced *t, const struct actors *a, pid_t napper,
			    const struct actor_span *ph, long clk_tck, struct napper_seen *seen)
{
	unsigned n = a->napper_phases, bad = 0, not_d = 0, not_named = 0;
	int prev = -1;

	seen->gaps = 0;
	for (size_t i = 0; i < t->rows.n; i++) {
		const struct trace_row *r = &t->rows.v[i];
		struct delta lo = { 0, 0, 0 }, hi = { 0, 0, 0 };
		bool ok, twice = false;
		int j;

		if (r->pid != napper)
			continue;
		not_d += r->state != 'D';
		not_named += strcmp(r->proc, NAPPER_COMM) != 0;
		j = span_of(ph, n, r, &twice);
		if (j < 0 || twice) {
			printf("# %s: row of the napper read at %.3f-%.3f in %s of its disk "
			       "phases\n", t->tool, r->mono, r->until, j < 0 ? "none" : "two");
			bad += j < 0;
			prev = -2; /* what the next row counts from is not known */
			continue;
		}
		ok = prev != -2 && napper_row_fits(a, prev, j, r, clk_tck, &lo, &hi);
		bad += prev != -2 && !ok;
		/* Rows within one phase are not worth a line. */
		if (!ok || j != prev)
			printf("# %s: napper %c at %.3f, phase %d after %d: d_wchar %.0f kB "
			       "(%.0f-%.0f), d_wbytes %.0f kB (%.0f-%.0f), d_blkio %.0f ms "
			       "(%.0f-%.0f)%s\n", t->tool, r->state, r->mono, j, prev,
			       r->d_wchar_kb, lo.wchar_kb, hi.wchar_kb, r->d_wbytes_kb,
			       lo.wbytes_kb, hi.wbytes_kb, r->d_blkio_ms, lo.blkio_ms, hi.blkio_ms,
			       ok ? "" : " <- outside the ledger's range");
		if (prev >= 0 && j > prev)
			seen->wchar_per_phase[seen->gaps++] = r->d_wchar_kb / (double)(j - prev);
		prev = j;
	}
	compare_check(not_d == 0, "%s: the unwatched napper has rows only while in D (%u not)",
		      t->tool, not_d);
	compare_check(not_named == 0, "%s: all under its comm, '%s' (%u not)", t->tool, NAPPER_COMM,
		      not_named);
	qsort(seen->wchar_per_phase, seen->gaps, sizeof(double), cmp_double);
	seen->median = seen->gaps ? seen->wchar_per_phase[seen->gaps / 2] : 0;
	return bad;
}

/* Each phase's length and each tool's D rows in it, on one line. */
static void phases_seen(const struct traced t[2], pid_t napper, const struct actor_span *ph,
			unsigned n)
{
	printf("# napper's phases (index:ms:D rows of %s/%s):", t[0].tool, t[1].tool);
	for (unsigned i = 0; i < n; i++)
		printf(" %u:%.0f:%u/%u", i, (ph[i].end - ph[i].start) * 1e3,
		       d_rows_in(&t[0].rows, napper, &ph[i]), d_rows_in(&t[1].rows, napper, &ph[i]));
	printf("\n");
}

/* A tool's napper rows added up, beside what the ledger says they add up
 * to: its counters' change from the phase of the first D row to that of
 * the last. */
static void napper_totals(const struct traced *t, const struct actors *a, pid_t napper,
			  const struct actor_span *ph, long clk_tck)
{
	struct delta sum = { 0, 0, 0 }, lo, hi;
	int first = -1, last = -1;

	for (size_t i = 0; i < t->rows.n; i++) {
		const struct trace_row *r = &t->rows.v[i];
		bool twice;
		int j;

		if (r->pid != napper || (j = span_of(ph, a->napper_phases, r, &twice)) < 0)
			continue;
		sum.wchar_kb += r->d_wchar_kb;
		sum.wbytes_kb += r->d_wbytes_kb;
		sum.blkio_ms += r->d_blkio_ms;
		first = first < 0 ? j : first;
		last = j;
	}
	if (first < 0)
		return;
	lo = counters_change(&a->napper_phase[first].end, &a->napper_phase[last].start, clk_tck);
	hi = counters_change(&a->napper_phase[first].start, &a->napper_phase[last].end, clk_tck);
	printf("# %s: napper's D rows from phase %d to %d add up to wchar %.0f kB (ledger "
	       "%.0f-%.0f), write_bytes %.0f kB (%.0f-%.0f), blkio %.0f ms (%.0f-%.0f)\n", t->tool,
	       first, last, sum.wchar_kb, lo.wchar_kb, hi.wchar_kb, sum.wbytes_kb, lo.wbytes_kb,
	       hi.wbytes_kb, sum.blkio_ms, lo.blkio_ms, hi.blkio_ms);
}

void compare_napper(const struct traced t[2], const struct actors *a, pid_t napper,
		    long clk_tck)
{
	static struct actor_span ph[NAPPER_PHASES_MAX];
	static struct napper_seen seen[2];
	unsigned n = a->napper_phases;

	for (unsigned i = 0; i < n; i++)
		ph[i] = (struct actor_span){ a->napper_phase[i].start.mono,
					     a->napper_phase[i].end.mono };
	printf("# napper: %u disk phases, wchar %.0f kB between two\n", n,
	       n > 1 ? counters_change(&a->napper_phase[0].end, &a->napper_phase[1].start,
				       clk_tck).wchar_kb
		     : 0.0);
	phases_seen(t, napper, ph, n);
	for (int k = 0; k < 2; k++) {
		unsigned bad = napper_rows(&t[k], a, napper, ph, clk_tck, &seen[k]);

		napper_totals(&t[k], a, napper, ph, clk_tck);

		compare_check(bad == 0,
		       "%s: each D row of the napper counts from the previous one (the first "
		       "from 0), as its ledger says (%u rows do not)", t[k].tool, bad);
		compare_check(seen[k].gaps >= 2,
		       "%s saw the napper in D in phases a second apart (%u times, 2 needed)",
		       t[k].tool, seen[k].gaps);
	}
	/* Counted from the last D row, a phase apart, d_wchar is the 1 MiB the
	 * napper wrote to /dev/null in between (and a few kB); counted from the
	 * previous tick it would be 0 to 4 kB. */
	printf("# napper's d_wchar per phase across a gap, median: %s %.0f kB, %s %.0f kB\n",
	       t[0].tool, seen[0].median, t[1].tool, seen[1].median);
	compare_check(seen[0].median > 0 && seen[1].median > 0 &&
		       seen[0].median / seen[1].median >= 0.8 &&
		       seen[0].median / seen[1].median <= 1.25,
	       "the napper's deltas across a gap are on the same scale in both tools");
	spans_in_d(t, napper, ph, n, "napper's disk phase");
}

unsigned compare_napper_phases_seen(const struct trace_rows *rows, const struct actors *a,
				    pid_t napper)
{
	unsigned seen = 0;

	for (unsigned i = 0; i < a->napper_phases; i++) {
		const struct actor_span ph = { a->napper_phase[i].start.mono,
					       a->napper_phase[i].end.mono };

		seen += d_row_in(rows, napper, &ph);
	}
	return seen;
}
