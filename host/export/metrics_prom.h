/* A recording as Prometheus text exposition (format 0.0.4), for
 * node_exporter's textfile collector: every name starts perflink_, every
 * value is in base units (seconds, bytes), counters end in _total. */
#ifndef PL_HOST_METRICS_PROM_H
#define PL_HOST_METRICS_PROM_H

#include <stdio.h>

#include "recording.h"

/* recording: a struct pl_recording (the shape pl__atomic_file_write
 * calls). 0, -ENOMEM or -EIO. */
int pl__metrics_prom_write(FILE *out, const void *recording);
/* A label value as the format wants it: \\, \" and \n escaped. */
void pl__prom_label_value(FILE *out, const char *value);

#endif
