/* The D scan's program and its reading (dstate_scan.c), for dstate_watch.c:
 * the tgids of the thread group leaders in D now, asked of the kernel with
 * one BPF program run (Linux 6.7: the open-coded task iterator). */
#ifndef PL_TRACER_DSTATE_SCAN_H
#define PL_TRACER_DSTATE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Load the program and link it as this process's task iterator. 0, or
 * -errno (-ENOENT: the kernel has no task iterator kfuncs, or its types
 * are not as the program reads them); the fds are -1 then. */
int pl__dscan_open(int *prog_fd, int *link_fd);

/* The leaders in D now, up to cap into out; how many, or -errno.
 * *overflow: there were more (the caller reads every process). */
ssize_t pl__dscan_read(int link_fd, int *out, size_t cap, bool *overflow);

#endif
