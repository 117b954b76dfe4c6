/* The symbols libperflink-preload.so exports, and nothing else: each hook
 * tests one flag and forwards (pipewire-v4l2's v4l2-func.c). Everything
 * else in the library is hidden (-fvisibility=hidden). The ioctl hooks are
 * in hooks_ioctl.c, which must not see libc's prototype of ioctl.
 *
 * Dormant (PERFLINK_PROFILE unset), a hook is the flag test and the
 * indirect call. Active, the open/close/dup family keeps the fd table
 * (fdtab.h) current.
 *
 * The large-file and time64 redirections of libc's headers must not rename
 * these definitions: each function here defines exactly the symbol it is
 * named after. */
#undef _FILE_OFFSET_BITS
#undef _TIME_BITS
#undef _FORTIFY_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/types.h>
#include <unistd.h>

#include "fdtab.h"
#include "own_fds.h"
#include "profile.h"
#include "real.h"

#define PL_EXPORT __attribute__((visibility("default")))
#define ACTIVE() __builtin_expect(pl__profile_on, 0)
#define NEEDS_MODE(flags) (((flags) & O_CREAT) || ((flags) & O_TMPFILE) == O_TMPFILE)

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1u << 2)
#endif

/* glibc's fortified entry points, declared only under _FORTIFY_SOURCE. */
#ifdef __GLIBC__
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
#endif

/* --- the open family ---------------------------------------------------- */

static inline int opened(int fd, const char *path)
{
	if (ACTIVE() && fd >= 0)
		pl__fd_opened(fd, path);
	return fd;
}

#define MODE_ARG(flags, mode)                               \
	do {                                                \
		if (NEEDS_MODE(flags)) {                    \
			va_list ap_;                        \
			va_start(ap_, flags);               \
			mode = (mode_t)va_arg(ap_, int);    \
			va_end(ap_);                        \
		}                                           \
	} while (0)

PL_EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	MODE_ARG(flags, mode);
	return opened(pl__real.open(path, flags, mode), path);
}

PL_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	MODE_ARG(flags, mode);
	/* a path relative to dirfd says nothing alone: /proc will tell */
	return opened(pl__real.openat(dirfd, path, flags, mode), dirfd == AT_FDCWD ? path : NULL);
}

PL_EXPORT int creat(const char *path, mode_t mode)
{
	return opened(pl__real.creat(path, mode), path);
}

/* musl has no fortified entry points, and its *64 names are macros for the
 * plain ones, so these exist for glibc only. */
#ifdef __GLIBC__
PL_EXPORT int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;

	MODE_ARG(flags, mode);
	return opened(pl__real.lfs_open(path, flags, mode), path);
}

PL_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	MODE_ARG(flags, mode);
	return opened(pl__real.lfs_openat(dirfd, path, flags, mode),
		      dirfd == AT_FDCWD ? path : NULL);
}

PL_EXPORT int creat64(const char *path, mode_t mode)
{
	return opened(pl__real.lfs_creat(path, mode), path);
}

PL_EXPORT int __open_2(const char *path, int flags)
{
	return opened(pl__real.open_2(path, flags), path);
}

PL_EXPORT int __open64_2(const char *path, int flags)
{
	return opened(pl__real.open64_2(path, flags), path);
}

PL_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	return opened(pl__real.openat_2(dirfd, path, flags), dirfd == AT_FDCWD ? path : NULL);
}

PL_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	return opened(pl__real.openat64_2(dirfd, path, flags), dirfd == AT_FDCWD ? path : NULL);
}
#endif

/* --- close and dup: an fd number changes what it refers to --------------- */

/* The entry is cleared before the call: once the kernel frees the number,
 * another thread's open may take it, and its entry must not be wiped. */
/* The shim's own descriptors (own_fds.h) are not the target's to close:
 * close of one says EBADF, as for a number not open. */
PL_EXPORT int close(int fd)
{
	if (pl__own_fd(fd)) {
		errno = EBADF;
		return -1;
	}
	if (ACTIVE())
		pl__fd_closed(fd);
	return pl__real.close(fd);
}

#ifdef PL_HAVE_CLOSE_RANGE
PL_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	if (ACTIVE() && !(flags & CLOSE_RANGE_CLOEXEC))
		pl__fd_closed_range(first, last);
	if (pl__own_fd_in(first, last))
		return pl__own_fds_close_range(first, last, flags, pl__real.close_range);
	return pl__real.close_range(first, last, flags);
}
#endif

#ifdef PL_HAVE_CLOSEFROM
/* A stretch of closefrom between the shim's descriptors: the last one,
 * open-ended, by closefrom itself, the others a number at a time (they lie
 * below the shim's few descriptors). */
static int close_stretch(unsigned int first, unsigned int last, int flags)
{
	(void)flags;
	if (last == ~0u) {
		pl__real.closefrom((int)first);
		return 0;
	}
	for (unsigned int fd = first; fd <= last; fd++)
		pl__real.close((int)fd);
	return 0;
}

PL_EXPORT void closefrom(int low)
{
	if (ACTIVE() && low >= 0)
		pl__fd_closed_range((unsigned int)low, ~0u);
	if (low >= 0 && pl__own_fd_in((unsigned int)low, ~0u)) {
		int saved = errno;

		pl__own_fds_close_range((unsigned int)low, ~0u, 0, close_stretch);
		errno = saved;
		return;
	}
	pl__real.closefrom(low);
}
#endif

PL_EXPORT int dup(int fd)
{
	int r = pl__real.dup(fd);

	if (ACTIVE() && r >= 0)
		pl__fd_copied(fd, r);
	return r;
}

PL_EXPORT int dup2(int fd, int newfd)
{
	int r;

	/* onto one of the shim's: the target's to do; the shim then finds its
	 * connection gone */
	if (fd != newfd && pl__own_fd(newfd))
		pl__own_fd_watch(newfd, false);
	if (!ACTIVE() || fd == newfd)
		return pl__real.dup2(fd, newfd);
	pl__fd_closed(newfd);
	r = pl__real.dup2(fd, newfd);
	if (r >= 0)
		pl__fd_copied(fd, r);
	return r;
}

PL_EXPORT int dup3(int fd, int newfd, int flags)
{
	int r;

	if (fd != newfd && pl__own_fd(newfd))
		pl__own_fd_watch(newfd, false);
	if (!ACTIVE() || fd == newfd)
		return pl__real.dup3(fd, newfd, flags);
	pl__fd_closed(newfd);
	r = pl__real.dup3(fd, newfd, flags);
	if (r >= 0)
		pl__fd_copied(fd, r);
	return r;
}
