/* perflink-host export: a recorded directory (what --out wrote) to the
 * files other tools read, each written whole or not at all:
 *   DIR/metrics.prom            Prometheus text (metrics_prom.h)
 *   DIR/trace.perfetto-trace    a Perfetto trace (perfetto_trace.h)
 * Lines of the recording that do not parse are left out; how many, per
 * file, goes to stderr and into perflink_export_skipped_lines_total. */
#ifndef PL_HOST_EXPORT_H
#define PL_HOST_EXPORT_H

/* 0; -ENOENT when dir holds no recording (said on stderr); another
 * -errno when a file could not be read or written (said on stderr). */
int pl__export_dir(const char *dir);

#endif
