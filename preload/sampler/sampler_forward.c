/* Each render-sampler window also goes to perflinkd (and over the link to
 * the host) as one telemetry line:
 *   {"type":"render_window","pid":N,"comm":"...","tid":N,"mono_ns":N,
 *    "window_s":N,"sample_period_ns":N,"fps":X,"frame_ms":X,
 *    "report":"<the window's text>","folded":"<folded stacks>",
 *    "modules":[{"name":"...","path":"...","build_id":"HEX"},...],
 *    "samples":[[MONO_NS,LINE],...],"samples_dropped":N,"windows_not_sent":N}
 * so the host gets the same report the file has, with the period what a
 * sample stands for in CPU time (its pprof profile's cpu/nanoseconds), and
 * with the samples when each was taken and which folded line (from 0; -1:
 * idle or not in the table) it went into: the render thread's timeline;
 * and with the modules its frames are in, each with its build-id, so that
 * the host can name from debug files the frames left as module+offset.
 * A line longer than perflinkd's ring takes gets its folded stacks cut to
 * fit (folded_cut_lines says how many lines went); a window that could
 * still not be handed on is counted in the next one's windows_not_sent.
 * Sampler thread only. */
#include "diag.h"
#include "json_writer.h"
#include "report_daemon.h"
#include "sampler.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static uint64_t windows_not_sent; /* sampler thread only */

/* The line, with the first flen bytes of the folded text (whole lines). */
static const char *make_line(struct pl_json *j, uint32_t window_s, uint64_t period_ns,
			     const struct pl_render_stats *rs, const char *text, size_t len,
			     const char *folded, size_t flen, uint64_t cut_lines,
			     const struct pl_window_samples *ws)
{
	const struct pl_window_module *m;
	size_t i, cursor;

	pl__json_reset(j);
	pl__json_begin_object(j, NULL);
	pl__json_str(j, "type", "render_window");
	pl__json_u64(j, "pid", (uint64_t)getpid());
	pl__json_str(j, "comm", program_invocation_short_name);
	if (ws->tid > 0)
		pl__json_u64(j, "tid", (uint64_t)ws->tid);
	pl__json_u64(j, "mono_ns", ws->end_ns);
	pl__json_u64(j, "window_s", window_s);
	pl__json_u64(j, "sample_period_ns", period_ns);
	if (rs->valid) {
		pl__json_double(j, "fps", rs->fps, 1);
		pl__json_double(j, "frame_ms", rs->frame_ms, 2);
	}
	/* the texts are NUL-free and exactly len bytes: copy into the strings */
	pl__json_str_n(j, "report", text, len);
	pl__json_str_n(j, "folded", folded ? folded : "", folded ? flen : 0);
	if (cut_lines)
		pl__json_u64(j, "folded_cut_lines", cut_lines);
	pl__json_begin_array(j, "modules");
	for (cursor = 0; (m = pl__window_module_at(&cursor));) {
		pl__json_begin_object(j, NULL);
		pl__json_str(j, "name", m->name);
		pl__json_str(j, "path", m->path);
		if (m->build_id[0])
			pl__json_str(j, "build_id", m->build_id);
		pl__json_end_object(j);
	}
	pl__json_end_array(j);
	pl__json_begin_array(j, "samples");
	for (i = 0; i < ws->n; i++) {
		pl__json_begin_array(j, NULL);
		pl__json_u64(j, NULL, ws->sample[i].mono_ns);
		pl__json_i64(j, NULL, ws->sample[i].line);
		pl__json_end_array(j);
	}
	pl__json_end_array(j);
	pl__json_u64(j, "samples_dropped", ws->dropped);
	pl__json_u64(j, "windows_not_sent", windows_not_sent);
	pl__json_end_object(j);
	return pl__json_finish(j);
}

static uint64_t lines_in(const char *s, size_t len)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < len; i++)
		n += s[i] == '\n';
	return n;
}

void pl__sampler_forward(uint32_t window_s, uint64_t period_ns, const struct pl_render_stats *rs,
			 const char *text, size_t len, const char *folded, size_t flen,
			 const struct pl_window_samples *ws)
{
	static struct pl_json j;
	static bool ready, said;
	size_t max = pl__report_daemon_line_max(), keep = folded ? flen : 0;
	uint64_t all_lines = folded ? lines_in(folded, flen) : 0, cut = 0;
	const char *line;

	if (!pl__report_daemon_enabled())
		return;
	if (!ready) {
		pl__json_init(&j);
		ready = true;
	}
	line = make_line(&j, window_s, period_ns, rs, text, len, folded, keep, 0, ws);
	/* too long for the ring: the folded stacks halved, at a line's end,
	 * until it fits (deep C++ stacks make a long window), and said so */
	while (line && strlen(line) > max && keep > 0) {
		const char *nl;

		keep /= 2;
		nl = keep ? memrchr(folded, '\n', keep) : NULL;
		keep = nl ? (size_t)(nl - folded) + 1 : 0;
		cut = all_lines - lines_in(folded, keep);
		line = make_line(&j, window_s, period_ns, rs, text, len, folded, keep, cut, ws);
	}
	if (line && strlen(line) <= max && pl__report_daemon_send(line))
		return;
	windows_not_sent++;
	if (!said) {
		said = true;
		pl__diag("a render window could not be handed to perflinkd (its ring is full or the "
			 "window too long); the next windows count it in windows_not_sent");
	}
}
