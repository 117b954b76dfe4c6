/* perflink-host export: a recorded directory (what --out wrote) to the
 * files other tools read, each written whole or not at all:
 *   DIR/metrics.prom            Prometheus text (metrics_prom.h)
 *   DIR/trace.perfetto-trace    a Perfetto trace (perfetto_trace.h), in
 *                               parts of about trace_max_bytes when longer:
 *                               then also trace.1.perfetto-trace, ...
 *   DIR/profile.pb.gz, DIR/profiles/  pprof profiles (pprof_profile.h)
 *   DIR/report.html             one offline page of it all (report_html.h)
 * Lines of the recording that do not parse are left out; how many, per
 * file, goes to stderr and into perflink_export_skipped_lines_total. */
#ifndef PL_HOST_EXPORT_H
#define PL_HOST_EXPORT_H

/* 0; -ENOENT when dir holds no recording (said on stderr); another
 * -errno when a file could not be read or written (said on stderr). */
#include <stdint.h>

/* A trace longer than this goes into parts that each open on their own. */
#define PL_TRACE_MAX_BYTES_DEFAULT (256ull * 1000 * 1000)

int pl__export_dir(const char *dir, uint64_t trace_max_bytes);

#endif
