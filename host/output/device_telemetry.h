/* What perflink-host reads out of the device's TELEMETRY messages. A
 * payload holds one or more JSON lines; each line is parsed (hostile input:
 * a line that is not valid JSON is counted and skipped) and
 *   - "frame_latency" lines give the device's round trip of frames:
 *     {"type":"frame_latency","frames":[[frame_id,send_ns,reply_ns],...],
 *      "dropped":N}, into the latency table;
 *   - "link_diag" lines: the latest last_send and totals objects are kept
 *     for summary.json (scalar fields only);
 *   - every other valid line goes to its telemetry file, if there are files.
 * A line hook, when set, sees every valid line (libperflink-host).
 */
#ifndef PL_HOST_DEVICE_TELEMETRY_H
#define PL_HOST_DEVICE_TELEMETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json_writer.h"
#include "latency_table.h"
#include "telemetry_files.h"

enum pl_telemetry_problem {
	PL_TM_BAD_JSON,       /* not valid JSON (or nested too deep) */
	PL_TM_BAD_TYPE,       /* "type" present but not a safe name: routed to other */
	PL_TM_BAD_LATENCY,    /* a frame_latency entry that is not 3 unsigned integers */
	PL_TM_LATENCY_UNKNOWN_FRAME, /* a round trip for a frame the host does not have */
	PL_TM_LATENCY_REPLY_BEFORE_SEND,
	PL_TM_PROBLEM_COUNT
};
const char *pl__telemetry_problem_name(enum pl_telemetry_problem p);

#define PL_DIAG_FIELDS 32

struct pl_diag_field {
	char key[40];
	char value[40]; /* a JSON number as written, or true/false */
	bool is_bool;
};

struct pl_diag_object {
	struct pl_diag_field f[PL_DIAG_FIELDS];
	unsigned n;
};

struct pl_device_telemetry {
	struct pl_latency_table *table;   /* may be NULL */
	struct pl_telemetry_files *files; /* may be NULL */
	uint64_t lines, problems[PL_TM_PROBLEM_COUNT];
	uint64_t latency_lines, latency_entries, latency_device_dropped;
	uint64_t link_diags;
	/* the latest link_diag */
	bool have_diag;
	struct pl_diag_object last_send, totals;
	bool have_frames_held;
	uint64_t frames_held;
	/* every valid JSON line, frame_latency too; type is a safe name
	 * (pl__telemetry_file_for) or NULL; line is not NUL-terminated */
	void (*line_hook)(void *ctx, const char *type, const char *line, size_t len);
	void *line_ctx;
	/* scratch for one line's frame_latency entries */
	uint64_t (*entries)[3];
	size_t entries_cap;
};

void pl__device_telemetry_init(struct pl_device_telemetry *dt, struct pl_latency_table *table,
			       struct pl_telemetry_files *files);
void pl__device_telemetry_free(struct pl_device_telemetry *dt);
/* One TELEMETRY payload: lines separated by '\n'. */
void pl__device_telemetry_feed(struct pl_device_telemetry *dt, const char *payload, size_t len);
/* The latest link_diag as {"last_send":{...},"totals":{...}} under key, or
 * null when none came. */
void pl__device_telemetry_diag_json(const struct pl_device_telemetry *dt, struct pl_json *j,
				    const char *key);

#endif
