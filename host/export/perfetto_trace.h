/* A recording as a Perfetto trace (trace.perfetto-trace: the Trace
 * message's packets, one after another; host/export/perfetto_subset.proto
 * lists the fields). One sequence; timestamps are the device's
 * CLOCK_MONOTONIC in ns, as the recording has them.
 *
 *   track "perflink link"   a slice per frame, named "frame ID", from the
 *                           device's send to the reply reaching it (the
 *                           round trip) or, without one, to the host's
 *                           receive; on child tracks "frames 0", "frames
 *                           1", ... where frames overlap; instants
 *                           "frames held +N" (replaced, lost) where the
 *                           device's link_diag totals went up
 *   a process track per     a slice per stall event of that victim, named
 *   stalled device process  by its mechanism, over the event's window
 * and per process and thread the stage calls, render samples and counters
 * that docs/host-export.md describes. */
#ifndef PL_HOST_PERFETTO_TRACE_H
#define PL_HOST_PERFETTO_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "recording.h"

/* recording: a struct pl_recording (the shape pl__atomic_file_write
 * calls). One file, however large. 0, -ENOMEM or -EIO. */
int pl__perfetto_trace_write(FILE *out, const void *recording);

/* A trace in parts of about cap_bytes each (0: one part): a part ends
 * only where no slice is open, after the first packet that takes it to
 * cap_bytes or past, and each part begins with every track descriptor
 * written before it, so that each opens on its own. open(ctx, N, &out)
 * gives part N (from 0); close(ctx, N, ok) finishes it (ok false: the
 * trace failed, discard it). 0 or -errno; *n_parts: how many were opened. */
struct pl_trace_parts {
	int (*open)(void *ctx, unsigned part, FILE **out);
	int (*close)(void *ctx, unsigned part, bool ok);
	void *ctx;
	uint64_t cap_bytes;
};
int pl__perfetto_trace_write_parts(const struct pl_recording *r, const struct pl_trace_parts *parts,
				   unsigned *n_parts);

#endif
