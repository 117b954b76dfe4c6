/* See udc_reoffer.h. */
#include "udc_reoffer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/* The source of the functionfs mount at dir (its instance name). */
static int ffs_instance(const char *mountinfo, const char *dir, char *name, size_t len)
{
	char want[PATH_MAX], line[4096];
	FILE *f;
	int err = -ENOENT;

	if (!realpath(dir, want))
		return -errno;
	if (!(f = fopen(mountinfo, "re")))
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* id parent maj:min root mountpoint options [optional...] - fstype source super */
		char *fields[6], *save = NULL, *tok, *dash = strstr(line, " - ");
		int n = 0;

		if (!dash)
			continue;
		*dash = '\0';
		for (tok = strtok_r(line, " ", &save); tok && n < 5; tok = strtok_r(NULL, " ", &save))
			fields[n++] = tok;
		if (n < 5)
			continue;
		unescape(fields[4]);
		if (strcmp(fields[4], want) != 0)
			continue;
		save = NULL;
		fields[0] = strtok_r(dash + 3, " \n", &save);
		fields[1] = strtok_r(NULL, " \n", &save);
		if (!fields[0] || !fields[1] || strcmp(fields[0], "functionfs") != 0) {
			err = -ENOENT; /* the last mount at dir is what counts */
			continue;
		}
		unescape(fields[1]);
		if ((size_t)snprintf(name, len, "%s", fields[1]) >= len)
			err = -ENAMETOOLONG;
		else
			err = 0;
	}
	fclose(f);
	return err;
}

int pl__udc_file_of_ffs(const char *mountinfo, const char *configfs, const char *ffs_dir,
			char *udc_file, size_t len)
{
	char instance[256], gadgets[PATH_MAX], path[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int err;

	if ((err = ffs_instance(mountinfo, ffs_dir, instance, sizeof(instance))) < 0)
		return err;
	if ((size_t)snprintf(gadgets, sizeof(gadgets), "%s/usb_gadget", configfs) >= sizeof(gadgets))
		return -ENAMETOOLONG;
	if (!(d = opendir(gadgets)))
		return -errno;
	err = -ENOENT;
	while ((e = readdir(d))) {
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s/functions/ffs.%s", gadgets,
				     e->d_name, instance) >= sizeof(path) ||
		    stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		err = (size_t)snprintf(udc_file, len, "%s/%s/UDC", gadgets, e->d_name) >= len
			      ? -ENAMETOOLONG
			      : 0;
		break;
	}
	closedir(d);
	return err;
}

int pl__udc_read(int fd, char *udc, size_t len)
{
	ssize_t n;

	if (len == 0)
		return -EINVAL;
	do
		n = pread(fd, udc, len - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	udc[n] = '\0';
	udc[strcspn(udc, "\n")] = '\0';
	return 0;
}

int pl__udc_write(int fd, const char *udc)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "%s\n", udc ? udc : "");
	ssize_t w;

	if (n < 0 || (size_t)n >= sizeof(line))
		return -ENAMETOOLONG;
	do
		w = pwrite(fd, line, (size_t)n, 0);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	return w == n ? 0 : -EIO;
}
