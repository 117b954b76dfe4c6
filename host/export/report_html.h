/* A recording as one self-contained HTML page, report.html: the run's
 * header and drops, latency percentiles, histogram and time series with
 * stall markers, the worst frames with what the device did during each,
 * the stage table, the render thread's flame graph and the resource
 * charts. The libraries (uPlot, d3, d3-flame-graph) and the page's own
 * script are inlined (host/report/), the data is one JSON element that the
 * script reads, so the page needs no network. Every text from the
 * recording reaches the page as JSON (with <, > and & escaped) and the
 * script puts it in as text, never as markup. */
#ifndef PL_HOST_REPORT_HTML_H
#define PL_HOST_REPORT_HTML_H

#include <stdio.h>

struct pl_recording;

struct pl_report_html {
	const struct pl_recording *r;
	const char *dir; /* where summary.json is read from (NULL: not read) */
};

/* A stage call longer than this many times its stage's median (per
 * process) is shown under a worst frame it overlaps. */
#define PL_REPORT_SLOW_CALL_FACTOR 2
#define PL_REPORT_WORST_FRAMES 10
#define PL_REPORT_EVENTS_PER_FRAME 20
/* distinct stacks of one process in the flame graph; the rest are one */
#define PL_REPORT_FLAME_STACKS 20000

/* ctx is a struct pl_report_html (the shape pl__atomic_file_write calls).
 * 0, -ENOMEM or -EIO. */
int pl__report_html_write(FILE *out, const void *ctx);

#endif
