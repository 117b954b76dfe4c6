/* perflink-host compare A B: the A/B table of two recorded runs (see
 * compare.c and docs/host-export.md). */
#ifndef PL_HOST_COMPARE_H
#define PL_HOST_COMPARE_H

/* argv[0] is "compare", its arguments follow. The exit status: 0; 1 when the table
 * could not be written; 2 for a wrong command line or a summary.json that
 * is missing or is not one (said on stderr). */
int pl__host_compare(int argc, char **argv);

#endif
