/* See whole_write.h. */
#include "whole_write.h"

#include <errno.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

off_t pl__file_length(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? st.st_size : -1;
}

int pl__truncate_to(int fd, off_t length)
{
	int r;

	if (length < 0)
		return -EINVAL;
	do
		r = ftruncate(fd, length);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

int pl__write_record(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, p + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;
			off_t end;

			/* a file that cannot take the rest gives back what it
			 * took: its end is where the record began */
			if (done > 0 && (end = pl__file_length(fd)) >= (off_t)done)
				pl__truncate_to(fd, end - (off_t)done);
			return err;
		}
		done += (size_t)n;
	}
	return 0;
}

int pl__append_record(int fd, const void *buf, size_t len)
{
	struct rlimit fsize;
	off_t end;
	int r;

	do
		r = flock(fd, LOCK_EX);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	end = pl__file_length(fd);
	if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY &&
	    (end < 0 || (uint64_t)end + len > (uint64_t)fsize.rlim_cur))
		r = -EFBIG;
	else
		r = pl__write_record(fd, buf, len);
	flock(fd, LOCK_UN);
	return r;
}
