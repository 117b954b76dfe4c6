/* See procfile.h. */
#include "procfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pl__procfile_open(struct pl_procfile *pf, int dirfd, const char *rel)
{
	int fd;

	pl__procfile_close(pf);
	do
		fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	pf->fd = fd;
	return 0;
}

static int grow(struct pl_procfile *pf, size_t want)
{
	char *nbuf;

	if (want > PL_PROCFILE_MAX + 1)
		return -EFBIG;
	nbuf = realloc(pf->buf, want);
	if (!nbuf)
		return -ENOMEM;
	pf->buf = nbuf;
	pf->cap = want;
	return 0;
}

ssize_t pl__procfile_read(struct pl_procfile *pf)
{
	size_t off = 0;
	int err;

	if (pf->fd < 0)
		return -EBADF;
	if (pf->cap < 4096 && (err = grow(pf, 4096)) < 0)
		return err;
	/* seq_file fills the whole buffer it is given unless the file ends, so a
	 * short read is the end: one pread per tick in the usual case. A file
	 * that fills the buffer is read on at increasing offsets, and the buffer
	 * stays grown so that the next tick needs one pread again. */
	for (;;) {
		size_t room = pf->cap - 1 - off;
		ssize_t n = pread(pf->fd, pf->buf + off, room, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)n;
		if ((size_t)n < room)
			break;
		if ((err = grow(pf, pf->cap * 2)) < 0)
			return err;
	}
	pf->buf[off] = '\0';
	pf->len = off;
	return (ssize_t)off;
}

ssize_t pl__procfile_read_once(struct pl_procfile *pf, int dirfd, const char *rel)
{
	ssize_t n;
	int err = pl__procfile_open(pf, dirfd, rel);

	if (err < 0)
		return err;
	n = pl__procfile_read(pf);
	pl__procfile_close(pf);
	return n;
}

void pl__procfile_close(struct pl_procfile *pf)
{
	if (pf->fd >= 0)
		close(pf->fd);
	pf->fd = -1;
}

void pl__procfile_free(struct pl_procfile *pf)
{
	pl__procfile_close(pf);
	free(pf->buf);
	pf->buf = NULL;
	pf->cap = 0;
	pf->len = 0;
}

int pl__procdir_open(int dirfd, const char *rel)
{
	int fd;

	do
		fd = openat(dirfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

int pl__procdir_opendir(int dirfd, const char *rel, DIR **out)
{
	int fd = pl__procdir_open(dirfd, rel);
	int err;

	if (fd < 0)
		return fd;
	*out = fdopendir(fd);
	if (!*out) {
		err = -errno;
		close(fd);
		return err;
	}
	return 0;
}
