/* The window's report, in the layout of the Python render sampler it
 * replaces: a header, then "on the stack", "innermost function" and "innermost line", each line
 * "{percent:6.1f}% {name}" of the busy (non-idle) samples. Like that sampler,
 * the inclusive section leaves out functions on every busy sample (the
 * thread's entry and loop say nothing). */
#include "sampler.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TOP 25
#define TOP_LINES 15

struct buf {
	char *p;
	size_t len, cap;
	int err;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->err)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->err = 1;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t c = b->cap * 2 + (size_t)n;
			char *q = realloc(b->p, c);

			if (!q) {
				b->err = 1;
				return;
			}
			b->p = q;
			b->cap = c;
		}
	}
}

static void section(struct buf *b, const char *title, const struct pl_count *c, size_t n,
		    size_t top, uint64_t busy, bool skip_all)
{
	size_t i, shown = 0;

	put(b, "-- %s\n", title);
	for (i = 0; i < n && shown < top; i++) {
		if (skip_all && c[i].count >= busy)
			continue;
		put(b, "%6.1f%% %s\n", 100.0 * (double)c[i].count / (double)busy, c[i].name);
		shown++;
	}
}

char *pl__report_text(uint32_t window_s, const struct pl_render_stats *rs, size_t *len)
{
	struct buf b = { malloc(4096), 0, 4096, 0 };
	uint64_t samples, idle, overflow, cut_short, busy;
	struct pl_ranking r;
	struct tm tm;
	time_t now = time(NULL);
	char when[32];

	*len = 0;
	pl__stacks_totals(&samples, &idle, &overflow, &cut_short);
	busy = samples - idle;
	if (!b.p || (busy > 0 && pl__stacks_rank(&r) < 0)) {
		free(b.p);
		return NULL;
	}
	/* UTC: no time zone file to read on the target */
	if (!gmtime_r(&now, &tm) || strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
		when[0] = '\0';
	put(&b, "==== %s %u s, rendering %u%% of %llu samples", when, window_s,
	    samples ? (unsigned)(100 * busy / samples) : 0u, (unsigned long long)samples);
	if (overflow)
		put(&b, ", %llu in stacks not kept", (unsigned long long)overflow);
	if (cut_short)
		put(&b, ", %llu cut short (unwinding failed)", (unsigned long long)cut_short);
	/* the task clock says nothing: the others are less exact */
	if (pl__signal_clock() == PL_SAMPLE_CLOCK_TIMER)
		put(&b, ", on the CPU-time timer (tick-checked)");
	else if (pl__signal_clock() == PL_SAMPLE_CLOCK_TASK_USER)
		put(&b, ", on the task clock, user time only");
	if (pl__ring_dropped())
		put(&b, ", %lu dropped since start", pl__ring_dropped());
	if (pl__unwind_copy_ends())
		put(&b, ", %lu deeper than the stack copy since start", pl__unwind_copy_ends());
	put(&b, " ====\n");
	if (rs->valid)
		put(&b, "render_stats fps=%.1f frame_ms=%.1f\n", rs->fps, rs->frame_ms);
	if (busy == 0) {
		/* written all the same: a gap in the report means no window */
		put(&b, "-- no busy sample in this window (the render thread %s)\n\n",
		    samples ? "spent its CPU time in swaps" : "used no CPU time");
	} else {
		section(&b, "on the stack (time inside each function)", r.inclusive,
			r.n_inclusive, TOP, busy, true);
		section(&b, "innermost function", r.self, r.n_self, TOP, busy, false);
		section(&b, "innermost line", r.lines, r.n_lines, TOP_LINES, busy, false);
		put(&b, "\n");
	}
	if (b.err) {
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p;
}
