/* Each render-sampler window also goes to perflinkd (and over the link to
 * the host) as one telemetry line:
 *   {"type":"render_window","pid":N,"comm":"...","tid":N,"mono_ns":N,
 *    "window_s":N,"sample_period_ns":N,"fps":X,"frame_ms":X,
 *    "report":"<the window's text>","folded":"<folded stacks>",
 *    "samples":[[MONO_NS,LINE],...],"samples_dropped":N}
 * so the host gets the same report the file has, with the period what a
 * sample stands for in CPU time (its pprof profile's cpu/nanoseconds), and
 * with the samples when each was taken and which folded line (from 0; -1:
 * idle or not in the table) it went into: the render thread's timeline.
 * Sampler thread only. */
#include "json_writer.h"
#include "report_daemon.h"
#include "sampler.h"

#include <errno.h>
#include <unistd.h>

void pl__sampler_forward(uint32_t window_s, uint64_t period_ns, const struct pl_render_stats *rs,
			 const char *text, size_t len, const char *folded, size_t flen,
			 const struct pl_window_samples *ws)
{
	size_t i;
	static struct pl_json j;
	static bool ready;
	const char *line;

	if (!pl__report_daemon_enabled())
		return;
	if (!ready) {
		pl__json_init(&j);
		ready = true;
	}
	pl__json_reset(&j);
	pl__json_begin_object(&j, NULL);
	pl__json_str(&j, "type", "render_window");
	pl__json_u64(&j, "pid", (uint64_t)getpid());
	pl__json_str(&j, "comm", program_invocation_short_name);
	if (ws->tid > 0)
		pl__json_u64(&j, "tid", (uint64_t)ws->tid);
	pl__json_u64(&j, "mono_ns", ws->end_ns);
	pl__json_u64(&j, "window_s", window_s);
	pl__json_u64(&j, "sample_period_ns", period_ns);
	if (rs->valid) {
		pl__json_double(&j, "fps", rs->fps, 1);
		pl__json_double(&j, "frame_ms", rs->frame_ms, 2);
	}
	/* the texts are NUL-free and exactly len bytes: copy into the strings */
	pl__json_str_n(&j, "report", text, len);
	pl__json_str_n(&j, "folded", folded ? folded : "", folded ? flen : 0);
	pl__json_begin_array(&j, "samples");
	for (i = 0; i < ws->n; i++) {
		pl__json_begin_array(&j, NULL);
		pl__json_u64(&j, NULL, ws->sample[i].mono_ns);
		pl__json_i64(&j, NULL, ws->sample[i].line);
		pl__json_end_array(&j);
	}
	pl__json_end_array(&j);
	pl__json_u64(&j, "samples_dropped", ws->dropped);
	pl__json_end_object(&j);
	if ((line = pl__json_finish(&j)))
		pl__report_daemon_send(line);
}
