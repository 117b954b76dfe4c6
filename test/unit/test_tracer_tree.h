/* Build small /proc trees in a temporary directory for the tracer tests:
 * the tracer reads them through --proc-root exactly as it reads /proc. */
#ifndef PL_TEST_TRACER_TREE_H
#define PL_TEST_TRACER_TREE_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static inline void tree_mkdirs(const char *path)
{
	char tmp[512];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	}
	mkdir(tmp, 0755);
}

static inline void tree_put(const char *root, const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline void tree_put(const char *root, const char *rel, const char *fmt, ...)
{
	char path[512], dir[512];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	tree_mkdirs(dir);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(99);
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

/* A /proc/PID/stat line with the fields the tracer reads set, its parent
 * ppid. */
static inline void tree_stat_of_child(const char *root, int pid, int ppid, const char *comm,
				      char state, int threads, unsigned long long starttime,
				      unsigned long long blkio)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "%d/stat", pid);
	tree_put(root, rel,
		 "%d (%s) %c %d %d %d 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 %d 0 %llu 1000000 "
		 "200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 %llu 0 0 0 0 0 0 0 "
		 "0 0 0\n",
		 pid, comm, state, ppid, pid, pid, threads, starttime, blkio);
}

/* The same for a child of init. */
static inline void tree_stat(const char *root, int pid, const char *comm, char state, int threads,
		      unsigned long long starttime, unsigned long long blkio)
{
	tree_stat_of_child(root, pid, 1, comm, state, threads, starttime, blkio);
}

static inline void tree_io(const char *root, int pid, unsigned long long wchar,
		    unsigned long long wbytes)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "%d/io", pid);
	tree_put(root, rel,
		 "rchar: 100\nwchar: %llu\nsyscr: 1\nsyscw: 1\nread_bytes: 0\nwrite_bytes: %llu\n"
		 "cancelled_write_bytes: 0\n",
		 wchar, wbytes);
}

static inline void tree_system(const char *root, unsigned long long sectors, unsigned long long busy,
			unsigned long long compact, unsigned long long alloc)
{
	tree_put(root, "diskstats",
		 " 254       0 vda 100 0 2000 50 300 0 %llu 40 0 %llu 90 0 0 0 0 0 0\n"
		 "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		 sectors, busy);
	tree_put(root, "vmstat",
		 "nr_dirty 10\nnr_writeback 0\nallocstall_normal %llu\nallocstall_movable 1\n"
		 "pgmajfault 7\ncompact_stall %llu\n",
		 alloc, compact);
	tree_put(root, "meminfo",
		 "MemTotal:       1000000 kB\nMemFree:         500000 kB\n"
		 "MemAvailable:    700000 kB\nDirty:              40 kB\nWriteback:           8 kB\n");
}

static inline void tree_rm(const char *path)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd) != 0)
		exit(99);
}

/* Read a whole small file into a static buffer. */
static inline const char *tree_slurp(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n;

	buf[0] = '\0';
	if (!f)
		return buf;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

#endif
