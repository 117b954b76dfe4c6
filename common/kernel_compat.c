/* See kernel_compat.h. */
#include "kernel_compat.h"
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The numbers from <linux/memfd.h>, for C libraries whose headers predate
 * memfd_create (uClibc, glibc before 2.27): the system call is made directly
 * so that a new kernel under an old libc still gets a memfd. */
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 0x0002U
#endif

static int memfd(const char *name)
{
#ifdef SYS_memfd_create
	long fd;

	if (pl__probe_forced(PL_PROBE_MEMFD))
		return -ENOSYS;
	do
		fd = syscall(SYS_memfd_create, name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : (int)fd;
#else
	/* the headers of this build's C library name no such call */
	(void)name;
	return -EOPNOTSUPP;
#endif
}

/* mkostemp wants a writable template; the label keeps only characters that
 * are safe in a file name. */
static int unlinked_file(const char *dir, const char *name)
{
	char path[256];
	size_t i, at;
	int n, fd, err;

	n = snprintf(path, sizeof(path), "%s/perflink-", dir);
	if (n < 0 || (size_t)n >= sizeof(path) - 40)
		return -ENAMETOOLONG;
	at = (size_t)n;
	for (i = 0; name[i] && i < 32; i++) {
		char c = name[i];

		path[at++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
					     (c >= '0' && c <= '9') || c == '-' || c == '_'
				     ? c
				     : '_';
	}
	snprintf(path + at, sizeof(path) - at, "-XXXXXX");
	do
		fd = mkostemp(path, O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	if (unlink(path) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static int size_fd(int fd, size_t size)
{
	off_t len = (off_t)size;
	int r, err;

	if (len < 0 || (size_t)len != size) {
		close(fd);
		return -EFBIG;
	}
	do
		r = ftruncate(fd, len);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static const char *memfd_why(int err)
{
	switch (err) {
	case -EPERM: return "refused, by a seccomp filter?";
	case -ENOSYS: return "ENOSYS: kernel before 3.17";
	default: return "not in this C library's headers";
	}
}

int pl__shm_fd_create(const char *name, size_t size)
{
	/* /dev/shm first: a tmpfs, so the pages are never written back to a
	 * disk, as with a memfd. $TMPDIR and /tmp may be on flash. */
	const char *dirs[3] = { "/dev/shm", getenv("TMPDIR"), "/tmp" };
	int fd, err, memfd_err, first_err = 0;
	unsigned i;

	fd = memfd(name);
	if (fd >= 0) {
		pl__probe_present(PL_PROBE_MEMFD);
		return size_fd(fd, size);
	}
	memfd_err = fd;
	/* ENOSYS: before 3.17; EOPNOTSUPP: built against headers without the
	 * number; EPERM: a seccomp filter that does not know the call.
	 * Anything else (EMFILE, ENOMEM) would fail the same way below. */
	if (memfd_err != -ENOSYS && memfd_err != -EPERM && memfd_err != -EOPNOTSUPP)
		return memfd_err;
	for (i = 0; i < 3; i++) {
		if (!dirs[i] || !dirs[i][0])
			continue;
		fd = unlinked_file(dirs[i], name);
		if (fd >= 0) {
			pl__probe_absent(PL_PROBE_MEMFD, false,
					 "memfd_create unavailable (%s): shared memory is an "
					 "unlinked file in %s",
					 memfd_why(memfd_err), dirs[i]);
			return size_fd(fd, size);
		}
		if (!first_err)
			first_err = fd;
	}
	err = first_err ? first_err : -ENOENT;
	pl__log_warnc(err, "memfd_create unavailable and no unlinked file in /dev/shm, "
			   "$TMPDIR or /tmp");
	return err;
}

int pl__aio_setup_result(int err, const char *what)
{
	if (err == 0) {
		pl__probe_present(PL_PROBE_FFS_AIO);
		return 0;
	}
	if (err == -ENOSYS || err == -EINVAL) {
		pl__probe_absent(PL_PROBE_FFS_AIO, true,
				 "native AIO is unavailable: %s gives %s (kernel without "
				 "CONFIG_AIO, or an emulator such as qemu-user that lacks it); the "
				 "link uses synchronous writes",
				 what, err == -ENOSYS ? "ENOSYS" : "EINVAL");
		return -ENOSYS;
	}
	pl__log_warnc(err, "%s", what);
	return err;
}

static int set_flags(int fd)
{
	int fl, r;

	if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	if ((r = fcntl(fd, F_GETFD)) < 0 || fcntl(fd, F_SETFD, r | FD_CLOEXEC) < 0)
		return -errno;
	return 0;
}

int pl__eventfd_create(unsigned initval)
{
	int fd = -1, err;

	if (!pl__probe_forced(PL_PROBE_EVENTFD_FLAGS)) {
		fd = eventfd(initval, EFD_NONBLOCK | EFD_CLOEXEC);
		if (fd >= 0) {
			pl__probe_present(PL_PROBE_EVENTFD_FLAGS);
			return fd;
		}
		if (errno != EINVAL)
			return -errno;
	}
	fd = eventfd(initval, 0);
	if (fd < 0)
		return -errno;
	if ((err = set_flags(fd)) < 0) {
		close(fd);
		return err;
	}
	pl__probe_absent(PL_PROBE_EVENTFD_FLAGS, false,
			 "eventfd refuses EFD_NONBLOCK|EFD_CLOEXEC (kernel before 2.6.27): flags "
			 "set with fcntl after creation");
	return fd;
}
