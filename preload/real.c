/* Lazy, recursion-safe resolution of the functions the hooks forward to. */
#include "real.h"
#include "real_symbol.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Set while this thread is inside dlsym: a hook entered from there must not
 * enter dlsym again (its lock is not recursive on every libc, and the lookup
 * would recurse without end). initial-exec: a TLS access must not allocate. */
static __thread int resolving __attribute__((tls_model("initial-exec")));

typedef void (*pl_any_fn)(void); /* casts to and from it are always allowed */

/* Look name up (or alt when libc lacks name, as musl lacks the *64 and
 * fortified variants); *store says whether the caller should keep the
 * result. Inside a nested lookup, return the kernel fallback for this one
 * call and keep nothing. errno is left as found: a hook must not change it. */
static pl_any_fn lookup(const char *name, const char *alt, pl_any_fn fallback, int *store)
{
	int saved_errno = errno;
	pl_any_fn f = fallback;
	void *p;

	*store = 0;
	if (resolving)
		return fallback;
	resolving = 1;
	p = pl__dlsym_unanswered(RTLD_NEXT, name);
	if (!p && alt)
		p = pl__dlsym_unanswered(RTLD_NEXT, alt);
	resolving = 0;
	/* POSIX guarantees a void * from dlsym holds a function's address */
	if (p)
		memcpy(&f, &p, sizeof(f));
	*store = 1;
	errno = saved_errno;
	return f;
}

/* Resolve pl__real.field (of type type), keep it, evaluate to it. */
#define RESOLVE(field, type, name, alt, fallback)                                        \
	__extension__({                                                                  \
		int store_;                                                              \
		type f_ = (type)lookup(name, alt, (pl_any_fn)(fallback), &store_);       \
		if (store_)                                                              \
			__atomic_store_n(&pl__real.field, f_, __ATOMIC_RELEASE);         \
		f_;                                                                      \
	})

#define NEEDS_MODE(flags) (((flags) & O_CREAT) || ((flags) & O_TMPFILE) == O_TMPFILE)

/* Kernel fallbacks: used only when libc has no such function or while a
 * lookup is in progress on this thread. */
static int sys_ioctl(int fd, pl_ioctl_req req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	return (int)syscall(SYS_ioctl, fd, (unsigned long)(unsigned int)req, arg);
}

static int sys_openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	if (NEEDS_MODE(flags)) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return (int)syscall(SYS_openat, dirfd, path, flags | O_LARGEFILE, mode);
}

static int sys_open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	if (NEEDS_MODE(flags)) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return sys_openat(AT_FDCWD, path, flags, mode);
}

static int sys_open_2(const char *path, int flags) { return sys_openat(AT_FDCWD, path, flags, 0); }
static int sys_openat_2(int dirfd, const char *path, int flags)
{
	return sys_openat(dirfd, path, flags, 0);
}

static int sys_creat(const char *path, mode_t mode)
{
	return sys_openat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

static int sys_close(int fd) { return (int)syscall(SYS_close, fd); }

static int sys_close_range(unsigned int first, unsigned int last, int flags)
{
#ifdef SYS_close_range
	return (int)syscall(SYS_close_range, first, last, flags);
#else
	(void)first;
	(void)last;
	(void)flags;
	errno = ENOSYS;
	return -1;
#endif
}

static void sys_closefrom(int low)
{
	int saved_errno = errno;

	if (low >= 0)
		sys_close_range((unsigned int)low, ~0u, 0);
	errno = saved_errno;
}

static int sys_dup(int fd) { return (int)syscall(SYS_dup, fd); }
static int sys_dup3(int fd, int newfd, int flags)
{
	return (int)syscall(SYS_dup3, fd, newfd, flags);
}

static int sys_dup2(int fd, int newfd)
{
	/* dup3 refuses fd == newfd; dup2 then only checks that fd is open */
	if (fd == newfd)
		return syscall(SYS_fcntl, fd, F_GETFD) < 0 ? -1 : newfd;
	return sys_dup3(fd, newfd, 0);
}

static int sys_cacheflush(void *addr, int bytes, int cache)
{
#ifdef SYS_cacheflush
	return (int)syscall(SYS_cacheflush, addr, bytes, cache);
#else
	(void)addr;
	(void)bytes;
	(void)cache;
	errno = ENOSYS;
	return -1;
#endif
}

/* The resolvers: each looks its symbol up, then makes the call. */

static int resolve_ioctl(int fd, pl_ioctl_req req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	return RESOLVE(ioctl, pl_ioctl_fn, "ioctl", NULL, sys_ioctl)(fd, req, arg);
}

static int resolve_ioctl_time64(int fd, pl_ioctl_req req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	/* glibc before 2.34 has no __ioctl_time64: its ioctl is the same call */
	return RESOLVE(ioctl_time64, pl_ioctl_fn, "__ioctl_time64", "ioctl",
		       sys_ioctl)(fd, req, arg);
}

#define OPEN_MODE(flags, mode)                            \
	do {                                              \
		va_list ap_;                              \
		if (NEEDS_MODE(flags)) {                  \
			va_start(ap_, flags);             \
			mode = (mode_t)va_arg(ap_, int);  \
			va_end(ap_);                      \
		}                                         \
	} while (0)

static int resolve_open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	return RESOLVE(open, pl_open_fn, "open", NULL, sys_open)(path, flags, mode);
}

static int resolve_open64(const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	return RESOLVE(lfs_open, pl_open_fn, "open64", "open", sys_open)(path, flags,
										     mode);
}

static int resolve_openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	return RESOLVE(openat, pl_openat_fn, "openat", NULL, sys_openat)(
		dirfd, path, flags, mode);
}

static int resolve_openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	return RESOLVE(lfs_openat, pl_openat_fn, "openat64", "openat", sys_openat)(
		dirfd, path, flags, mode);
}

static int resolve_open_2(const char *path, int flags)
{
	return RESOLVE(open_2, pl_open2_fn, "__open_2", NULL, sys_open_2)(path, flags);
}

static int resolve_open64_2(const char *path, int flags)
{
	return RESOLVE(open64_2, pl_open2_fn, "__open64_2", "__open_2", sys_open_2)(path, flags);
}

static int resolve_openat_2(int dirfd, const char *path, int flags)
{
	return RESOLVE(openat_2, pl_openat2_fn, "__openat_2", NULL,
		       sys_openat_2)(dirfd, path, flags);
}

static int resolve_openat64_2(int dirfd, const char *path, int flags)
{
	return RESOLVE(openat64_2, pl_openat2_fn, "__openat64_2", "__openat_2",
		       sys_openat_2)(dirfd, path, flags);
}

static int resolve_creat(const char *path, mode_t mode)
{
	return RESOLVE(creat, pl_creat_fn, "creat", NULL, sys_creat)(path, mode);
}

static int resolve_creat64(const char *path, mode_t mode)
{
	return RESOLVE(lfs_creat, pl_creat_fn, "creat64", "creat", sys_creat)(path,
											   mode);
}

static int resolve_close(int fd)
{
	return RESOLVE(close, pl_close_fn, "close", NULL, sys_close)(fd);
}

static int resolve_close_range(unsigned int first, unsigned int last, int flags)
{
	return RESOLVE(close_range, pl_close_range_fn, "close_range", NULL,
		       sys_close_range)(first, last, flags);
}

static void resolve_closefrom(int low)
{
	RESOLVE(closefrom, pl_closefrom_fn, "closefrom", NULL, sys_closefrom)(low);
}

static int resolve_dup(int fd)
{
	return RESOLVE(dup, pl_dup_fn, "dup", NULL, sys_dup)(fd);
}

static int resolve_dup2(int fd, int newfd)
{
	return RESOLVE(dup2, pl_dup2_fn, "dup2", NULL, sys_dup2)(fd, newfd);
}

static int resolve_dup3(int fd, int newfd, int flags)
{
	return RESOLVE(dup3, pl_dup3_fn, "dup3", NULL, sys_dup3)(fd, newfd, flags);
}

static int resolve_cacheflush(void *addr, int bytes, int cache)
{
	return RESOLVE(cacheflush, pl_cacheflush_fn, "cacheflush", "_flush_cache",
		       sys_cacheflush)(addr, bytes, cache);
}

struct pl_real pl__real = {
	.ioctl = resolve_ioctl,
	.ioctl_time64 = resolve_ioctl_time64,
	.open = resolve_open,
	.lfs_open = resolve_open64,
	.openat = resolve_openat,
	.lfs_openat = resolve_openat64,
	.open_2 = resolve_open_2,
	.open64_2 = resolve_open64_2,
	.openat_2 = resolve_openat_2,
	.openat64_2 = resolve_openat64_2,
	.creat = resolve_creat,
	.lfs_creat = resolve_creat64,
	.close = resolve_close,
	.close_range = resolve_close_range,
	.closefrom = resolve_closefrom,
	.dup = resolve_dup,
	.dup2 = resolve_dup2,
	.dup3 = resolve_dup3,
	.cacheflush = resolve_cacheflush,
};

void pl__real_resolve_all(void)
{
	(void)RESOLVE(ioctl, pl_ioctl_fn, "ioctl", NULL, sys_ioctl);
#if defined(__GLIBC__) && defined(__TIMESIZE) && __TIMESIZE == 32
	(void)RESOLVE(ioctl_time64, pl_ioctl_fn, "__ioctl_time64", "ioctl", sys_ioctl);
#endif
	(void)RESOLVE(open, pl_open_fn, "open", NULL, sys_open);
	(void)RESOLVE(lfs_open, pl_open_fn, "open64", "open", sys_open);
	(void)RESOLVE(openat, pl_openat_fn, "openat", NULL, sys_openat);
	(void)RESOLVE(lfs_openat, pl_openat_fn, "openat64", "openat", sys_openat);
	(void)RESOLVE(open_2, pl_open2_fn, "__open_2", NULL, sys_open_2);
	(void)RESOLVE(open64_2, pl_open2_fn, "__open64_2", "__open_2", sys_open_2);
	(void)RESOLVE(openat_2, pl_openat2_fn, "__openat_2", NULL, sys_openat_2);
	(void)RESOLVE(openat64_2, pl_openat2_fn, "__openat64_2", "__openat_2", sys_openat_2);
	(void)RESOLVE(creat, pl_creat_fn, "creat", NULL, sys_creat);
	(void)RESOLVE(lfs_creat, pl_creat_fn, "creat64", "creat", sys_creat);
	(void)RESOLVE(close, pl_close_fn, "close", NULL, sys_close);
	(void)RESOLVE(close_range, pl_close_range_fn, "close_range", NULL, sys_close_range);
	(void)RESOLVE(closefrom, pl_closefrom_fn, "closefrom", NULL, sys_closefrom);
	(void)RESOLVE(dup, pl_dup_fn, "dup", NULL, sys_dup);
	(void)RESOLVE(dup2, pl_dup2_fn, "dup2", NULL, sys_dup2);
	(void)RESOLVE(dup3, pl_dup3_fn, "dup3", NULL, sys_dup3);
#ifdef __mips__
	(void)RESOLVE(cacheflush, pl_cacheflush_fn, "cacheflush", "_flush_cache", sys_cacheflush);
#endif
}
