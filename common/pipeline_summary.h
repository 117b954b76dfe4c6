/* Pipeline summary of a renderer's published frames (the figures a car
 * renderer's own pipeline summary reports, docs/sampler.md): how many
 * frames were published in a period, how the camera frame ids behaved, and
 * the p95 of four latencies. Pure logic:
 * no I/O, no threads, no clock reads, no allocation (the state is one
 * fixed-size struct the caller owns). Not thread-safe: the caller
 * serialises pl__pipeline_add and pl__pipeline_report.
 *
 * Stamps, in ns; 0 means unknown:
 *   captured_ns   the renderer took the camera frame
 *   submitted_ns  it submitted the frame's drawing
 *   published_ns  the frame was published (shown / sent)
 *   eof_ns        the camera's end-of-frame (exposure) time
 *
 * The renderer's rules, exactly, with 0 added for unknown stamps:
 * - Out of order is ignored: a frame whose known stamps among captured,
 *   submitted, published are not in that order (captured <= submitted <=
 *   published) is dropped whole: not counted, not sampled, and it does not
 *   touch the camera-id continuity. An unknown stamp only leaves out the
 *   latencies that need it (the renderer has no unknown stamps: this is the
 *   narrowest extension that never invents a difference).
 * - Unlike clocks kept apart: eof_ns is an exposure time from the camera,
 *   not a step of the renderer's pipeline, and may come from another
 *   clock. It is never part of capture_to_* and never decides whether a
 *   frame is kept; it only gives camera_eof_to_publish, and only when
 *   0 < eof_ns <= published_ns (else that frame has no such value, and
 *   the frame still counts for the rest).
 * - Camera ids: with a camera (camera_stream != PL_PIPELINE_NO_CAMERA) the
 *   frame id is compared with the previous kept frame's when that frame
 *   came from the same stream: equal is a repeat, a jump of d > 1 is d - 1
 *   gaps, going back is a reset. A different stream, or a frame without a
 *   camera in between, breaks the chain (no comparison): ids of different
 *   streams are never compared. The chain survives the end of a period.
 *   These are observations, not proof that the renderer dropped a frame.
 * - p95 per latency over the period's last PL_PIPELINE_SAMPLES kept frames
 *   that have that latency: the sorted value at index
 *   max(0, ceil(95 n / 100) - 1), in ms with two decimals; null with none.
 *
 * pl__pipeline_report writes one JSON object and starts the next period;
 * the caller decides when (every 5 s, PL_PIPELINE_PERIOD_NS):
 *   {"type":"pipeline","published_frames":N,"camera_id_repeats":N,
 *    "camera_id_gaps":N,"camera_id_resets":N,"capture_to_submit_p95_ms":X,
 *    "submit_to_publish_p95_ms":X,"capture_to_publish_p95_ms":X,
 *    "camera_eof_to_publish_p95_ms":X}
 */
#ifndef PL_COMMON_PIPELINE_SUMMARY_H
#define PL_COMMON_PIPELINE_SUMMARY_H

#include "json_writer.h"

#include <stdbool.h>
#include <stdint.h>

#define PL_PIPELINE_PERIOD_NS 5000000000ull
#define PL_PIPELINE_SAMPLES 240 /* the renderer's summary keeps its last 240 */
#define PL_PIPELINE_NO_CAMERA UINT32_MAX

enum {
	PL_PIPELINE_CAPTURE_TO_SUBMIT,
	PL_PIPELINE_SUBMIT_TO_PUBLISH,
	PL_PIPELINE_CAPTURE_TO_PUBLISH,
	PL_PIPELINE_EOF_TO_PUBLISH,
	PL_PIPELINE_LATENCIES
};

/* UINT64_MAX in a sample: that latency is unknown for the frame. */
struct pl_pipeline {
	uint64_t sample[PL_PIPELINE_SAMPLES][PL_PIPELINE_LATENCIES];
	uint64_t scratch[PL_PIPELINE_SAMPLES];
	uint32_t n_samples, next_sample; /* a ring: the newest overwrite the oldest */
	uint64_t frames, repeats, gaps, resets;
	bool have_previous;
	uint32_t previous_stream;
	uint64_t previous_frame_id;
};

/* An empty first period. 0 (it cannot fail; an int for the callers that
 * check). */
int pl__pipeline_init(struct pl_pipeline *p);

/* One published frame. camera_stream PL_PIPELINE_NO_CAMERA: no camera
 * frame behind it (frame_id and eof_ns are then ignored). */
void pl__pipeline_add(struct pl_pipeline *p, uint64_t captured_ns, uint64_t submitted_ns,
		      uint64_t published_ns, uint32_t camera_stream, uint64_t frame_id,
		      uint64_t eof_ns);

/* The period's summary as one JSON object into j (at top level or as an
 * array element), then the next period starts. period_ns: how long the
 * period was (the last one of a process is shorter), as "period_s". */
void pl__pipeline_report(struct pl_pipeline *p, uint64_t period_ns, uint64_t end_mono_ns,
			  struct pl_json *j);

/* The p95 the report would give for latency (PL_PIPELINE_*), in ns;
 * false when the period has no value of it. */
bool pl__pipeline_p95_ns(struct pl_pipeline *p, int latency, uint64_t *ns);

#endif
