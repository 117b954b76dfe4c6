/* See guarded_file.h. */
#include "guarded_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int pl__guarded_file_read(const char *path, bool secret, size_t min_bytes, uint8_t *buf,
			  size_t cap, size_t *len, char *err, size_t err_len)
{
	mode_t refused = secret ? (S_IRWXG | S_IRWXO) : (S_IWGRP | S_IWOTH);
	struct stat st;
	ssize_t n;
	int fd, e;

	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		e = errno;
		snprintf(err, err_len, "%s: %s", path,
			 e == ELOOP ? "is a symbolic link (refused)" : strerror(e));
		return -e;
	}
	if (fstat(fd, &st) < 0) {
		e = errno;
		snprintf(err, err_len, "%s: %s", path, strerror(e));
		goto fail;
	}
	e = EINVAL;
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, err_len, "%s: not a regular file", path);
		goto fail;
	}
	if (st.st_mode & refused) {
		e = EPERM;
		snprintf(err, err_len, "%s: %s by group or others (mode %03o; chmod %s it)", path,
			 secret ? "readable or writable" : "writable", (unsigned)(st.st_mode & 0777),
			 secret ? "600" : "644");
		goto fail;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		e = EPERM;
		snprintf(err, err_len, "%s: owned by uid %u, not by this user or root", path,
			 (unsigned)st.st_uid);
		goto fail;
	}
	if ((uint64_t)st.st_size < min_bytes || (uint64_t)st.st_size > cap) {
		snprintf(err, err_len, "%s: %lld bytes; want %zu to %zu", path,
			 (long long)st.st_size, min_bytes, cap);
		goto fail;
	}
	do
		n = pread(fd, buf, (size_t)st.st_size, 0);
	while (n < 0 && errno == EINTR);
	if (n != st.st_size) {
		e = n < 0 ? errno : EIO;
		snprintf(err, err_len, "%s: %s", path, n < 0 ? strerror(e) : "changed while read");
		explicit_bzero(buf, cap);
		goto fail;
	}
	*len = (size_t)n;
	close(fd);
	return 0;
fail:
	close(fd);
	return -e;
}
