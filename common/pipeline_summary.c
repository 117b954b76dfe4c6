/* See pipeline_summary.h for the rules: a car renderer's own summary's. */
#include "pipeline_summary.h"

#include <string.h>
#include <unistd.h>

#define UNKNOWN UINT64_MAX

int pl__pipeline_init(struct pl_pipeline *p)
{
	memset(p, 0, sizeof(*p));
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* b - a when both are known and in order, else UNKNOWN. */
static uint64_t span(uint64_t a, uint64_t b)
{
	return a != 0 && b != 0 && a <= b ? b - a : UNKNOWN;
}

static void follow_camera(struct pl_pipeline *p, uint32_t stream, uint64_t frame_id)
{
	if (stream == PL_PIPELINE_NO_CAMERA) {
		p->have_previous = false;
		return;
	}
	if (p->have_previous && p->previous_stream == stream) {
		if (frame_id == p->previous_frame_id)
			p->repeats = sat_add(p->repeats, 1);
		else if (frame_id < p->previous_frame_id)
			p->resets = sat_add(p->resets, 1);
		else
			p->gaps = sat_add(p->gaps, frame_id - p->previous_frame_id - 1);
	}
	p->have_previous = true;
	p->previous_stream = stream;
	p->previous_frame_id = frame_id;
}

void pl__pipeline_add(struct pl_pipeline *p, uint64_t captured_ns, uint64_t submitted_ns,
		      uint64_t published_ns, uint32_t camera_stream, uint64_t frame_id,
		      uint64_t eof_ns)
{
	uint64_t *s;

	/* the known stamps must be in pipeline order, or the frame is not kept */
	if ((captured_ns && submitted_ns && captured_ns > submitted_ns) ||
	    (submitted_ns && published_ns && submitted_ns > published_ns) ||
	    (captured_ns && published_ns && captured_ns > published_ns))
		return;
	follow_camera(p, camera_stream, frame_id);
	p->frames++;
	s = p->sample[p->next_sample];
	p->next_sample = (p->next_sample + 1) % PL_PIPELINE_SAMPLES;
	if (p->n_samples < PL_PIPELINE_SAMPLES)
		p->n_samples++;
	s[PL_PIPELINE_CAPTURE_TO_SUBMIT] = span(captured_ns, submitted_ns);
	s[PL_PIPELINE_SUBMIT_TO_PUBLISH] = span(submitted_ns, published_ns);
	s[PL_PIPELINE_CAPTURE_TO_PUBLISH] = span(captured_ns, published_ns);
	/* another clock: only its own order with published matters */
	s[PL_PIPELINE_EOF_TO_PUBLISH] = camera_stream == PL_PIPELINE_NO_CAMERA
						? UNKNOWN : span(eof_ns, published_ns);
}

/* At most PL_PIPELINE_SAMPLES values: insertion sort, in place (qsort may
 * allocate). */
static void sort(uint64_t *v, uint32_t n)
{
	uint32_t i, k;

	for (i = 1; i < n; i++) {
		uint64_t x = v[i];

		for (k = i; k > 0 && v[k - 1] > x; k--)
			v[k] = v[k - 1];
		v[k] = x;
	}
}

bool pl__pipeline_p95_ns(struct pl_pipeline *p, int latency, uint64_t *ns)
{
	uint32_t i, n = 0;

	if (latency < 0 || latency >= PL_PIPELINE_LATENCIES)
		return false;
	for (i = 0; i < p->n_samples; i++) {
		if (p->sample[i][latency] != UNKNOWN)
			p->scratch[n++] = p->sample[i][latency];
	}
	if (n == 0)
		return false;
	sort(p->scratch, n);
	*ns = p->scratch[(95 * n + 99) / 100 - 1]; /* n >= 1: the index is >= 0 */
	return true;
}

void pl__pipeline_report(struct pl_pipeline *p, uint64_t period_ns, uint64_t end_mono_ns,
			  struct pl_json *j)
{
	static const char *const names[PL_PIPELINE_LATENCIES] = {
		"capture_to_submit_p95_ms",
		"submit_to_publish_p95_ms",
		"capture_to_publish_p95_ms",
		"camera_eof_to_publish_p95_ms",
	};
	uint64_t ns;
	int k;

	pl__json_begin_object(j, NULL);
	pl__json_str(j, "type", "pipeline");
	pl__json_u64(j, "mono_ns", end_mono_ns);
	pl__json_u64(j, "pid", (uint64_t)getpid());
	pl__json_double(j, "period_s", (double)period_ns / 1e9, 2);
	pl__json_u64(j, "published_frames", p->frames);
	pl__json_u64(j, "camera_id_repeats", p->repeats);
	pl__json_u64(j, "camera_id_gaps", p->gaps);
	pl__json_u64(j, "camera_id_resets", p->resets);
	for (k = 0; k < PL_PIPELINE_LATENCIES; k++) {
		if (pl__pipeline_p95_ns(p, k, &ns))
			pl__json_double(j, names[k], (double)ns / 1e6, 2);
		else
			pl__json_null(j, names[k]);
	}
	pl__json_end_object(j);
	/* the next period; the camera-id chain carries over, as in the renderer's
	 * own summary */
	p->frames = p->repeats = p->gaps = p->resets = 0;
	p->n_samples = p->next_sample = 0;
}
