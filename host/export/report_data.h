/* The data of report.html (report_html.h) as one JSON object, computed
 * from the recording: what the page's script draws, already reduced
 * (percentiles, the worst frames and the device's calls during each,
 * CPU % from ticks), so that the script only lays it out. */
#ifndef PL_HOST_REPORT_DATA_H
#define PL_HOST_REPORT_DATA_H

#include "json_writer.h"

struct pl_recording;

/* Write the members of the page's data object into j (an object open).
 * 0 or -ENOMEM. */
int pl__report_data(struct pl_json *j, const struct pl_recording *r);

#endif
