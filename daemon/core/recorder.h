/* perflinkd's own recording (record-dir): every telemetry line the daemon
 * would send to the host (stall events, resource samples, producers' lines:
 * profile reports, per-call stage events, render windows, pipeline
 * summaries) also goes to DIR/telemetry/TYPE.jsonl, the layout perflink-host
 * --out writes, so that a device with no host attached (a camera without a
 * gadget) still gets a timeline: `perflink-host export DIR` on a copy of
 * the folder makes the trace and metrics from it (docs/perflinkd.md).
 *
 * Each line is written whole and flushed, so that a crash or a power cut
 * loses at most the line being written. Lines from peers are hostile: the
 * file is chosen by the line's top-level "type" through
 * common/telemetry_files.h's safe names. */
#ifndef PL_DAEMON_RECORDER_H
#define PL_DAEMON_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "telemetry_files.h"

struct pl_recorder {
	bool open;
	struct pl_telemetry_files files;
	uint64_t lines, bad_lines; /* written; not one JSON object */
};

/* Make (mode 0750) or take dir and dir/telemetry: a directory that is a
 * symbolic link, is another user's, or is writable by other users is
 * refused (anyone could plant links there). 0, or -errno with err filled. */
int pl__recorder_open(struct pl_recorder *r, const char *dir, char *err, size_t errlen);
/* One telemetry line (no newline needed; one is added). */
void pl__recorder_line(struct pl_recorder *r, const char *line, size_t len);
void pl__recorder_close(struct pl_recorder *r);

#endif
