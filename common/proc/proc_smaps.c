/* See proc_smaps.h. */
#include "proc_smaps.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* Feed the complete lines in buf[0..len) and return how many bytes of an
 * unfinished last line are left, or -EINVAL. */
static ssize_t feed_lines(struct pl_smaps_sum *out, const char *buf, size_t len)
{
	size_t off = 0;

	for (;;) {
		const char *nl = memchr(buf + off, '\n', len - off);

		if (!nl)
			return (ssize_t)(len - off);
		if (pl__smaps_add_line(out, buf + off, (size_t)(nl - (buf + off))) < 0)
			return -EINVAL;
		off = (size_t)(nl - buf) + 1;
	}
}

int pl__smaps_read_sum(int dirfd, const char *rel, struct pl_smaps_sum *out, char *scratch,
		       size_t scratch_len)
{
	size_t have = 0;
	int fd, err = 0;

	pl__smaps_sum_init(out);
	if (scratch_len < 2)
		return -EINVAL;
	do
		fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n, left;

		if (have == scratch_len) {
			err = -E2BIG;
			break;
		}
		n = read(fd, scratch + have, scratch_len - have);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0) {
			/* The kernel ends every line with '\n'; text left over
			 * is a last line cut short. */
			if (have > 0)
				err = -EINVAL;
			break;
		}
		have += (size_t)n;
		left = feed_lines(out, scratch, have);
		if (left < 0) {
			err = -EINVAL;
			break;
		}
		memmove(scratch, scratch + have - (size_t)left, (size_t)left);
		have = (size_t)left;
	}
	close(fd);
	if (err < 0)
		pl__smaps_sum_init(out);
	return err;
}
