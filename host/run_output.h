/* The end of a perflink-host run: the summary on stdout, and the files
 * (--out DIR: frames.csv and summary.json, then metrics.prom and
 * trace.perfetto-trace from them as `perflink-host export` writes them;
 * --frames-csv PATH), each
 * written whole or not at all. */
#ifndef PL_HOST_RUN_OUTPUT_H
#define PL_HOST_RUN_OUTPUT_H

#include "host.h"

/* Print the summary, write the files. The exit status the run's results
 * call for: 0, or 1 for malformed messages, sequence gaps, integrity
 * errors, missing frames or a file that could not be written. */
int pl__host_report(struct pl_host *h, const struct pl_host_options *opt);
/* --drain: bytes and MB/s only. 0 when bytes came, else 1. */
int pl__host_report_drain(const struct pl_host *h);

#endif
