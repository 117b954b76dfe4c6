/* A watched process's memory cgroup: how often its usage hit the limit.
 * vmstat counts a memory cgroup's reclaim only from Linux 5.8 (pgscan_anon,
 * pgscan_file) and 4.9 has no PSI, so this is what names that reclaim on
 * every kernel: cgroup v1's memory.failcnt, v2's memory.events "max". Read
 * at a stall episode's start and at its report. */
#ifndef PL_DAEMON_STALL_MEMCG_H
#define PL_DAEMON_STALL_MEMCG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "procfile.h"

struct pl_memcg {
	struct pl_procfile pf; /* the counter's file, kept open */
	bool v2;
	bool tried;            /* opened, or found to have none */
};
#define PL_MEMCG_INIT { PL_PROCFILE_INIT, false, false }

/* From a /proc/PID/cgroup text, the memory cgroup's path (v1's memory
 * hierarchy, else v2's; *v2 says which): 0, -ENOENT when there is none,
 * -EINVAL for a path that is not absolute or climbs (".."). */
int pl__memcg_parse(const char *text, char *path, size_t cap, bool *v2);
/* Open pid's counter, once: pid's cgroup file under rootfd, the counter
 * under /sys/fs/cgroup (live: rootfd is the kernel's /proc) or under
 * rootfd's sys/fs/cgroup (a recorded tree). 0, or -errno (none: a
 * process in the root cgroup, which has no limit, or no memory
 * controller). */
int pl__memcg_open(struct pl_memcg *m, int rootfd, bool live, int pid);
/* The limit hits so far: 0 or -errno. */
int pl__memcg_read(struct pl_memcg *m, uint64_t *hits);
void pl__memcg_close(struct pl_memcg *m);

#endif
