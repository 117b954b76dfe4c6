/* Size-capped report files: PATH grows to the cap, then becomes PATH.1
 * (replacing the previous one) and a new PATH starts, so at most twice the
 * cap stays on disk (as the Python render sampler's files do). A single text
 * larger than the cap is cut at a line end so the bound holds. The file is
 * opened for each append and closed again: the target may close every
 * descriptor, and a kept fd could be reused under us. */
#include "sampler.h"
#include "real.h"
#include "whole_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int pl__rotating_append(const char *path, const char *text, size_t len, uint32_t cap)
{
	char old[PL_PATH_MAX + 8];
	struct stat st;
	int fd, r;

	if (len > cap) {
		while (len > 0 && (len > cap || text[len - 1] != '\n'))
			len--;
		if (len == 0)
			return 0;
	}
	if (stat(path, &st) == 0 && (uint64_t)st.st_size + len > cap) {
		if ((size_t)snprintf(old, sizeof(old), "%s.1", path) >= sizeof(old))
			return -ENAMETOOLONG;
		if (rename(path, old) < 0)
			return -errno;
	}
	do
		fd = pl__real.open(path, /* a planted link is refused (report_out.c) */
				   O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW,
				   0600);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	r = pl__append_record(fd, text, len); /* whole, never past RLIMIT_FSIZE */
	if (pl__real.close(fd) < 0 && r == 0 && errno != EINTR)
		r = -errno;
	return r;
}
