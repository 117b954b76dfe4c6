/* See link_auth.h: loading the pre-shared key. */
#include "link_auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int pl__link_key_load(struct pl_link_key *key, const char *path, char *err, size_t err_len)
{
	struct stat st;
	ssize_t n;
	int fd, e;

	key->len = 0;
	/* O_NOFOLLOW: a link planted in the key's place is refused, not read;
	 * O_NONBLOCK: a FIFO there cannot hang the start */
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
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		e = EPERM;
		snprintf(err, err_len, "%s: readable or writable by group or others (mode %03o; "
			 "chmod 600 it)", path, (unsigned)(st.st_mode & 0777));
		goto fail;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		e = EPERM;
		snprintf(err, err_len, "%s: owned by uid %u, not by this user or root", path,
			 (unsigned)st.st_uid);
		goto fail;
	}
	if (st.st_size < PL_AUTH_KEY_MIN_BYTES || st.st_size > PL_AUTH_KEY_MAX_BYTES) {
		snprintf(err, err_len, "%s: %lld bytes; a key is %d to %d bytes", path,
			 (long long)st.st_size, PL_AUTH_KEY_MIN_BYTES, PL_AUTH_KEY_MAX_BYTES);
		goto fail;
	}
	do
		n = pread(fd, key->bytes, (size_t)st.st_size, 0);
	while (n < 0 && errno == EINTR);
	if (n != st.st_size) {
		e = n < 0 ? errno : EIO;
		snprintf(err, err_len, "%s: %s", path, n < 0 ? strerror(e) : "changed while read");
		pl__link_key_wipe(key);
		goto fail;
	}
	key->len = (size_t)n;
	close(fd);
	return 0;
fail:
	close(fd);
	return -e;
}

void pl__link_key_wipe(struct pl_link_key *key)
{
	explicit_bzero(key->bytes, sizeof(key->bytes));
	key->len = 0;
}
