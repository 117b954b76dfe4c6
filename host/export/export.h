/* perflink-host export: a recorded directory (what --out wrote) to the
 * files other tools read, each written whole or not at all:
 *   DIR/metrics.prom            Prometheus text (metrics_prom.h)
 *   DIR/trace.perfetto-trace    a Perfetto trace (perfetto_trace.h), in
 *                               parts of about trace_max_bytes when longer:
 *                               then also trace.1.perfetto-trace, ...
 *   DIR/profile.pb.gz, DIR/profiles/  pprof profiles (pprof_profile.h)
 *   DIR/report.html             one offline page of it all (report_html.h)
 *   DIR/stacks.folded           the render stacks, folded (stacks_folded.h)
 * Frames the device left as module+offset are named first from the debug
 * files of symbols, when it names a folder (symbolize.h).
 * Lines of the recording that do not parse are left out; how many, per
 * file, goes to stderr and into perflink_export_skipped_lines_total. */
#ifndef PL_HOST_EXPORT_H
#define PL_HOST_EXPORT_H

#include "symbolize.h"

#include <stdint.h>

/* A trace longer than this goes into parts that each open on their own. */
#define PL_TRACE_MAX_BYTES_DEFAULT (256ull * 1000 * 1000)

struct pl_export_options {
	uint64_t trace_max_bytes;
	struct pl_symbol_dirs symbols;
};

/* 0; -ENOENT when dir holds no recording (said on stderr); another
 * -errno when a file could not be read or written (said on stderr). */
int pl__export_dir(const char *dir, const struct pl_export_options *opt);

#endif
