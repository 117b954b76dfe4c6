/* What the live tests share: running the programs they start, finding the
 * disks and a disk-backed folder, and switching the kernel's delay
 * accounting on for the run (and back). */
#ifndef PL_TEST_LIVE_RUN_H
#define PL_TEST_LIVE_RUN_H

#include <stddef.h>
#include <sys/types.h>

void live_sleep_ms(long ms);

/* argv[0] run through PATH, its stderr to err_path; the child's pid. */
pid_t live_spawn(char *const argv[], const char *err_path);

/* Every whole disk in /proc/diskstats that has done I/O, comma-separated
 * (what --disk takes); "" when there is none. */
void live_disks(char *out, size_t cap);

/* Write s into an existing file such as a /proc/sys one; 0 or -errno. */
int live_put(const char *path, const char *s);

/* kernel.task_delayacct switched on; its old value kept in old (cap bytes)
 * for live_delayacct_restore. 0, or -errno when it cannot be switched on. */
int live_delayacct_on(char *old, size_t cap);
void live_delayacct_restore(const char *old);

/* A folder for scratch files on a real disk (not tmpfs or ramfs, whose
 * fsyncs never wait for a device): $PL_LIVE_DIR if set (and nothing else
 * then), else /var/tmp, else /tmp. 0 with the folder in out, or -ENOENT. */
int live_disk_dir(char *out, size_t cap);

#endif
