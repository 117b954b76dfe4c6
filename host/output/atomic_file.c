/* See atomic_file.h. */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pl__atomic_file_open(struct pl_atomic_file *a, const char *path)
{
	size_t len = strlen(path) + 32;
	int fd, err;

	memset(a, 0, sizeof(*a));
	a->path = strdup(path);
	a->tmp = malloc(len);
	if (!a->path || !a->tmp) {
		err = -ENOMEM;
		goto fail;
	}
	snprintf(a->tmp, len, "%s.tmp.%ld", path, (long)getpid());
	do
		fd = open(a->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		err = -errno;
		goto fail;
	}
	a->f = fdopen(fd, "w");
	if (!a->f) {
		err = -errno;
		close(fd);
		unlink(a->tmp);
		goto fail;
	}
	return 0;
fail:
	free(a->path);
	free(a->tmp);
	memset(a, 0, sizeof(*a));
	return err;
}

int pl__atomic_file_commit(struct pl_atomic_file *a)
{
	int err = 0;

	if (fflush(a->f) == EOF || ferror(a->f))
		err = -(errno ? errno : EIO);
	else if (fsync(fileno(a->f)) < 0 && errno != EINVAL)
		err = -errno; /* EINVAL: a file system without sync (a pipe, tmpfs in some kernels) */
	if (fclose(a->f) == EOF && !err)
		err = -errno;
	a->f = NULL;
	if (!err && rename(a->tmp, a->path) < 0)
		err = -errno;
	if (err)
		unlink(a->tmp);
	free(a->path);
	free(a->tmp);
	a->path = a->tmp = NULL;
	return err;
}

void pl__atomic_file_abort(struct pl_atomic_file *a)
{
	if (a->f) {
		fclose(a->f);
		unlink(a->tmp);
	}
	free(a->path);
	free(a->tmp);
	memset(a, 0, sizeof(*a));
}

int pl__atomic_file_write(const char *path, int (*write)(FILE *f, const void *ctx),
			  const void *ctx)
{
	struct pl_atomic_file a;
	int err;

	if ((err = pl__atomic_file_open(&a, path)) < 0)
		return err;
	if ((err = write(a.f, ctx)) < 0) {
		pl__atomic_file_abort(&a);
		return err;
	}
	return pl__atomic_file_commit(&a);
}
