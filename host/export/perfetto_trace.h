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
 *   stalled device process  by its mechanism, over the event's window */
#ifndef PL_HOST_PERFETTO_TRACE_H
#define PL_HOST_PERFETTO_TRACE_H

#include <stdio.h>

#include "recording.h"

/* recording: a struct pl_recording (the shape pl__atomic_file_write
 * calls). 0, -ENOMEM or -EIO. */
int pl__perfetto_trace_write(FILE *out, const void *recording);

#endif
