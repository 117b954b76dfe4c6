/* See proc_recorder.h. Files are copied byte for byte; a file that vanishes
 * or cannot be read (another user's io without root) is left out of the
 * snapshot, which is what the tracer would have seen. */
#include "proc_recorder.h"
#include "whole_write.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "procfile.h"

static const char *const global_files[] = {
	"diskstats", "vmstat", "meminfo", "loadavg", "pressure/io", "pressure/memory",
	"pressure/cpu", "sys/kernel/task_delayacct", "sys/vm/dirty_ratio",
	"sys/vm/dirty_background_ratio", "sys/vm/dirty_bytes", "sys/vm/dirty_background_bytes",
	"sys/vm/dirty_expire_centisecs", "sys/vm/dirty_writeback_centisecs",
};
static const char *const global_dirs[] = { "pressure", "sys", "sys/kernel", "sys/vm" };
static const char *const pid_files[] = { "stat", "io", "schedstat", "wchan" };

static int write_file(int dirfd, const char *rel, const char *buf, size_t len)
{
	int fd, err = 0;

	do
		fd = openat(dirfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	err = pl__write_record(fd, buf, len);
	if (close(fd) != 0 && err == 0)
		err = -errno;
	return err;
}

static int make_dir(int dirfd, const char *rel)
{
	if (mkdirat(dirfd, rel, 0755) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Copy one file; 1 copied, 0 skipped, -errno when the output failed. */
static int copy(struct pl_procfile *pf, int rootfd, int snapfd, const char *rel)
{
	ssize_t n = pl__procfile_read_once(pf, rootfd, rel);

	if (n < 0)
		return 0;
	n = write_file(snapfd, rel, pf->buf, (size_t)n);
	return n < 0 ? (int)n : 1;
}

static int count(int r, struct pl_recorder_stats *st)
{
	if (r > 0)
		st->files++;
	else if (r == 0)
		st->skipped++;
	return r < 0 ? r : 0;
}

static int snapshot(int rootfd, int outfd, size_t index, struct pl_procfile *pf,
		    struct pl_recorder_stats *st)
{
	char name[32], rel[64], times[96];
	double wall = (double)pl__wall_ns() / 1e9, mono = (double)pl__mono_ns() / 1e9;
	struct dirent *d;
	DIR *dir;
	int snapfd, dfd, err = 0;
	size_t i;

	snprintf(name, sizeof(name), "%04zu", index);
	if ((err = make_dir(outfd, name)) < 0)
		return err;
	snapfd = pl__procdir_open(outfd, name);
	if (snapfd < 0)
		return snapfd;
	for (i = 0; i < sizeof(global_dirs) / sizeof(global_dirs[0]) && !err; i++)
		err = make_dir(snapfd, global_dirs[i]);
	for (i = 0; i < sizeof(global_files) / sizeof(global_files[0]) && !err; i++)
		err = count(copy(pf, rootfd, snapfd, global_files[i]), st);
	dfd = pl__procdir_open(rootfd, ".");
	dir = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!dir) {
		err = err ? err : -errno;
		if (dfd >= 0)
			close(dfd);
	}
	while (!err && (d = readdir(dir)) != NULL) {
		bool made = false;

		if (d->d_name[0] < '1' || d->d_name[0] > '9' ||
		    strspn(d->d_name, "0123456789") != strlen(d->d_name) || strlen(d->d_name) > 10)
			continue;
		for (i = 0; i < sizeof(pid_files) / sizeof(pid_files[0]) && !err; i++) {
			ssize_t n;

			/* a pid is at most 10 digits (checked above) */
			snprintf(rel, sizeof(rel), "%.10s/%s", d->d_name, pid_files[i]);
			n = pl__procfile_read_once(pf, rootfd, rel);
			if (n < 0) {
				st->skipped++;
				continue;
			}
			if (!made && (err = make_dir(snapfd, d->d_name)) < 0)
				break;
			made = true;
			err = count(write_file(snapfd, rel, pf->buf, (size_t)n) < 0 ? -EIO : 1, st);
		}
	}
	if (dir)
		closedir(dir);
	if (!err) {
		int len = snprintf(times, sizeof(times), "%.6f %.6f\n", wall, mono);

		err = write_file(snapfd, ".perflink-time", times, (size_t)len);
	}
	close(snapfd);
	if (!err)
		st->snapshots++;
	return err;
}

int pl__proc_record(const struct pl_recorder_config *cfg, volatile sig_atomic_t *stop,
		    struct pl_recorder_stats *st)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	uint64_t interval, deadline, end_ns = 0;
	int rootfd, outfd, err = 0;
	size_t i;

	memset(st, 0, sizeof(*st));
	if (!(cfg->hz > 0)) {
		pl__log_warnx("record-proc: --hz must be above 0");
		return -EINVAL;
	}
	rootfd = pl__procdir_open(AT_FDCWD, cfg->proc_root);
	if (rootfd < 0) {
		pl__log_warnc(-rootfd, "record-proc: %s", cfg->proc_root);
		return rootfd;
	}
	if (mkdir(cfg->out_dir, 0755) != 0 && errno != EEXIST) {
		err = -errno;
		pl__log_warnc(-err, "record-proc: cannot create %s", cfg->out_dir);
		close(rootfd);
		return err;
	}
	outfd = pl__procdir_open(AT_FDCWD, cfg->out_dir);
	if (outfd < 0) {
		pl__log_warnc(-outfd, "record-proc: %s", cfg->out_dir);
		close(rootfd);
		return outfd;
	}
	if (faccessat(outfd, "0000", F_OK, 0) == 0) {
		pl__log_warnx("record-proc: %s already holds a recording", cfg->out_dir);
		err = -EEXIST;
		goto out;
	}
	interval = (uint64_t)(1e9 / cfg->hz);
	deadline = pl__mono_ns();
	if (cfg->seconds > 0)
		end_ns = deadline + (uint64_t)(cfg->seconds * 1e9);
	for (i = 0; !*stop && i < 10000; i++) {
		struct timespec ts;

		if ((err = snapshot(rootfd, outfd, i, &pf, st)) < 0) {
			pl__log_warnc(-err, "record-proc: cannot write snapshot %zu in %s", i,
				      cfg->out_dir);
			break;
		}
		deadline += interval;
		if (end_ns && deadline >= end_ns)
			break;
		if (pl__mono_ns() > deadline + interval)
			deadline = pl__mono_ns(); /* behind: do not burst */
		ts.tv_sec = (time_t)(deadline / 1000000000u);
		ts.tv_nsec = (long)(deadline % 1000000000u);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
out:
	pl__procfile_free(&pf);
	close(outfd);
	close(rootfd);
	return err;
}
