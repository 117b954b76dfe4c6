/* See pidfile.h. */
#include "pidfile.h"
#include "log.h"
#include "unix_listen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

int pl__pidfile_open(struct pl_pidfile *pf, const char *path)
{
	char text[32], other[32];
	ssize_t n;
	int fd, ret, len;

	if ((ret = pl__dir_trusted(path, "pidfile")) < 0)
		return ret;
	do
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		ret = -errno;
		pl__log_warnx("pidfile %s: %s", path, strerror(errno));
		return ret;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		ret = -errno;
		n = pread(fd, other, sizeof(other) - 1, 0);
		other[n > 0 ? n : 0] = '\0';
		other[strcspn(other, "\n")] = '\0';
		if (ret == -EWOULDBLOCK)
			pl__log_warnx("pidfile %s: perflinkd already runs (pid %s)", path,
				      other[0] ? other : "unknown");
		else
			pl__log_warnx("pidfile %s: lock: %s", path, strerror(-ret));
		close(fd);
		return ret == -EWOULDBLOCK ? -EAGAIN : ret;
	}
	len = snprintf(text, sizeof(text), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0) {
		ret = -errno;
	} else {
		do
			n = pwrite(fd, text, (size_t)len, 0);
		while (n < 0 && errno == EINTR);
		ret = n == len ? 0 : n < 0 ? -errno : -EIO;
	}
	if (ret < 0) {
		pl__log_warnx("pidfile %s: write: %s", path, strerror(-ret));
		close(fd);
		return ret;
	}
	pf->path = strdup(path);
	if (!pf->path) {
		pl__log_warnx("pidfile: out of memory");
		close(fd);
		unlink(path);
		return -ENOMEM;
	}
	pf->fd = fd;
	return 0;
}

void pl__pidfile_remove(struct pl_pidfile *pf)
{
	if (pf->fd < 0)
		return;
	/* Unlink while still holding the lock, so that a new perflinkd never
	 * sees a file that is about to vanish as its own. */
	unlink(pf->path);
	close(pf->fd);
	pf->fd = -1;
	free(pf->path);
	pf->path = NULL;
}
