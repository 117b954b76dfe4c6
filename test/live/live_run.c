/* The live tests' shared plumbing (live_run.h). */
#include "live_run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "read_file.h"

#define DELAYACCT "/proc/sys/kernel/task_delayacct"
/* statfs(2)'s f_type of the file systems in memory (linux/magic.h, which
 * not every C library's headers bring) */
#define TMPFS_F_TYPE 0x01021994
#define RAMFS_F_TYPE 0x858458f6

void live_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

pid_t live_spawn(char *const argv[], const char *err_path)
{
	pid_t p = fork();

	if (p == 0) {
		int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0)
			dup2(fd, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	return p;
}

void live_disks(char *out, size_t cap)
{
	char *all = test_read_file("/proc/diskstats");
	const char *s = all ? all : "";
	size_t o = 0;

	out[0] = '\0';
	while (*s) {
		char name[64];
		unsigned long long reads;

		if (sscanf(s, "%*u %*u %63s %llu", name, &reads) == 2 && reads > 0 &&
		    strncmp(name, "loop", 4) != 0 && strncmp(name, "ram", 3) != 0 &&
		    o + strlen(name) + 2 < cap)
			o += (size_t)snprintf(out + o, cap - o, "%s%s", o ? "," : "", name);
		s = strchr(s, '\n');
		if (!s)
			break;
		s++;
	}
	free(all);
}

int live_put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		err = -EIO;
	close(fd);
	return err;
}

int live_delayacct_on(char *old, size_t cap)
{
	char *was = test_read_file(DELAYACCT), *now;
	int err;

	snprintf(old, cap, "%s", was ? was : "");
	free(was);
	if (!old[0])
		return -ENOENT;
	if ((err = live_put(DELAYACCT, "1\n")) < 0)
		return err;
	now = test_read_file(DELAYACCT);
	err = now && now[0] == '1' ? 0 : -EPERM;
	free(now);
	return err;
}

void live_delayacct_restore(const char *old)
{
	if (old[0] && live_put(DELAYACCT, old) < 0)
		fprintf(stderr, "cannot restore %s to %s", DELAYACCT, old);
}

static int on_disk(const char *dir)
{
	struct statfs fs;

	/* f_type is 32 bits of signed int on some targets */
	return statfs(dir, &fs) == 0 && (uint32_t)fs.f_type != TMPFS_F_TYPE &&
	       (uint32_t)fs.f_type != RAMFS_F_TYPE && access(dir, W_OK) == 0;
}

int live_disk_dir(char *out, size_t cap)
{
	const char *env = getenv("PL_LIVE_DIR");
	const char *const dirs[] = { "/var/tmp", "/tmp" };

	if (env && env[0]) {
		snprintf(out, cap, "%s", env);
		return on_disk(env) ? 0 : -ENOENT; /* the one asked for, or none */
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (on_disk(dirs[i])) {
			snprintf(out, cap, "%s", dirs[i]);
			return 0;
		}
	}
	return -ENOENT;
}
