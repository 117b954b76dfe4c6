/* See progress.h. */
#include "progress.h"

#include <string.h>

void pl__progress_init(struct pl_progress *p, FILE *out, bool enabled)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->enabled = enabled;
}

void pl__progress_tick(struct pl_progress *p, uint64_t now_ns, uint64_t frames, uint64_t bytes,
		       const struct pl_latency_table *t)
{
	double p50, p99, dt;
	bool rtt;

	if (!p->enabled)
		return;
	if (!p->last_ns) {
		p->last_ns = now_ns;
		p->last_bytes = bytes;
		return;
	}
	if (now_ns - p->last_ns < 1000000000u)
		return;
	dt = (double)(now_ns - p->last_ns) / 1e9;
	fprintf(p->out, "\rframes %llu  MB/s %.1f", (unsigned long long)frames,
		(double)(bytes - p->last_bytes) / 1e6 / dt);
	rtt = t->hist_rtt_n > 0;
	if (pl__latency_table_quick(t, rtt, 0.50, &p50) && pl__latency_table_quick(t, rtt, 0.99, &p99))
		fprintf(p->out, "  %s p50 %.2f ms  p99 %.2f ms", rtt ? "round trip" : "one way",
			p50 / 1e6, p99 / 1e6);
	/* clear what a longer previous line left */
	fputs("\033[K", p->out);
	fflush(p->out);
	p->shown = true;
	p->last_ns = now_ns;
	p->last_bytes = bytes;
}

void pl__progress_end(struct pl_progress *p)
{
	if (p->shown) {
		fputc('\n', p->out);
		fflush(p->out);
	}
	p->shown = false;
}
