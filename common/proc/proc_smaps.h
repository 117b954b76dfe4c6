/* Summing /proc/PID/smaps or smaps_rollup straight from the file.
 *
 * smaps has a block of ~20 lines for every mapping: a process with thousands
 * of mappings writes megabytes, more than a pl_procfile holds. It is read in
 * chunks through a caller-owned buffer and summed line by line, so the cost
 * is one pass and no allocation.
 *
 * Reading either file takes the target's mmap lock (smaps per chunk): read
 * them rarely (REFERENCES.md: a 200 GB process stalled 4.5 s). */
#ifndef PL_COMMON_PROC_SMAPS_H
#define PL_COMMON_PROC_SMAPS_H

#include <stddef.h>

#include "proc_parse_mem.h"

/* Open rel under dirfd, read it to the end and sum it into *out. scratch
 * must hold the longest line (a mapping header with a path: 4096 + 100 bytes
 * is enough; 16 KiB and more reads in fewer syscalls). Returns 0, -errno from
 * open/read (-EACCES for another user's process, -ENOENT or -ESRCH when it
 * is gone), -EINVAL for text that does not parse, -E2BIG for a line longer
 * than scratch. An empty file (a kernel thread, an exiting process) is 0
 * with out->mappings == 0. A process that exits between two chunks leaves
 * a short sum: callers check the process is still alive afterwards. */
int pl__smaps_read_sum(int dirfd, const char *rel, struct pl_smaps_sum *out, char *scratch,
		       size_t scratch_len);

#endif
