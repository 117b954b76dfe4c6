/* The report page's scripts and styles, inlined at build time
 * (inline_assets.py from the npm packages of package-lock.json and
 * report.js/report.css): pl__report_head goes inside <head> (the styles
 * and the libraries, each with its licence), pl__report_tail at the end of
 * <body> (the page's own script, which reads the data element). */
#ifndef PL_HOST_REPORT_ASSETS_H
#define PL_HOST_REPORT_ASSETS_H

#include <stddef.h>

extern const unsigned char pl__report_head[], pl__report_tail[];
extern const size_t pl__report_head_len, pl__report_tail_len;

#endif
