/* See unix_listen.h. */
#include "unix_listen.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* The directory that holds path: "." when path has no '/', "/" for a file
 * in the root. */
static void dir_of(const char *path, char *dir, size_t cap)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, cap, ".");
	else if (slash == path)
		snprintf(dir, cap, "/");
	else
		snprintf(dir, cap, "%.*s", (int)(slash - path), path);
}

int pl__dir_trusted(const char *path, const char *what)
{
	char dir[4096];
	struct stat st;

	dir_of(path, dir, sizeof(dir));
	if (stat(dir, &st) < 0) {
		int err = -errno;

		pl__log_warnx("%s: %s: %s", what, dir, strerror(-err));
		return err;
	}
	if (!S_ISDIR(st.st_mode)) {
		pl__log_warnx("%s: %s is not a directory", what, dir);
		return -ENOTDIR;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		pl__log_warnx("%s: %s belongs to uid %u, neither root nor us: refused, as that "
			      "user could replace what perflinkd makes there", what, dir,
			      (unsigned)st.st_uid);
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		pl__log_warnx("%s: others may write to %s (mode %04o): refused, as they could "
			      "replace what perflinkd makes there", what, dir,
			      (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

bool pl__accept_must_pause(int err)
{
	return err != EAGAIN && err != EWOULDBLOCK && err != EINTR && err != ECONNABORTED;
}

/* A socket file left behind by a daemon that died: nobody accepts on it. */
static int take_over_path(const struct sockaddr_un *sun, int type)
{
	struct stat st;
	int fd, ret;

	if (lstat(sun->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	do
		ret = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	while (ret < 0 && errno == EINTR);
	/* EPROTOTYPE: something of another socket type listens there. */
	ret = ret == 0 || errno == EPROTOTYPE ? -EADDRINUSE : errno == ECONNREFUSED ? 0 : -errno;
	close(fd);
	if (ret == 0 && unlink(sun->sun_path) < 0 && errno != ENOENT)
		return -errno;
	return ret;
}

static int make_parent_dir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];

	dir_of(path, dir, sizeof(dir));
	if (!strcmp(dir, ".") || !strcmp(dir, "/"))
		return 0;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int pl__unix_listen(const char *path, int type, bool has_group, gid_t gid, const char *what)
{
	struct sockaddr_un sun;
	mode_t old_umask;
	int fd, ret;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path) || path[0] == '\0') {
		pl__log_warnx("%s: '%s' is empty or too long (max %zu bytes)", what, path,
			      sizeof(sun.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	memcpy(sun.sun_path, path, strlen(path));
	ret = make_parent_dir(path);
	if (ret < 0) {
		pl__log_warnx("%s: cannot create the directory of %s: %s", what, path,
			      strerror(-ret));
		return ret;
	}
	if ((ret = pl__dir_trusted(path, what)) < 0)
		return ret;
	ret = take_over_path(&sun, type);
	if (ret < 0) {
		pl__log_warnx("%s: %s: %s", what, path,
			      ret == -EADDRINUSE ? "another perflinkd is listening there"
			      : ret == -EEXIST   ? "exists and is not a socket"
						 : strerror(-ret));
		return ret;
	}
	fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		pl__log_warnx("%s: socket: %s", what, strerror(errno));
		return ret;
	}
	/* The file is created by bind with the umask applied: make it
	 * owner-only from the start, widen to the group once chowned. */
	old_umask = umask(0177);
	ret = bind(fd, (const struct sockaddr *)&sun, sizeof(sun));
	umask(old_umask);
	if (ret < 0) {
		ret = -errno;
		pl__log_warnx("%s: bind %s: %s", what, path, strerror(errno));
		close(fd);
		return ret;
	}
	if ((has_group && chown(path, (uid_t)-1, gid) < 0) || chmod(path, 0660) < 0 ||
	    listen(fd, 64) < 0) {
		ret = -errno;
		pl__log_warnx("%s: %s: %s", what, path, strerror(errno));
		close(fd);
		unlink(path);
		return ret;
	}
	return fd;
}
