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

/* The waits have no kernel fallback: every C library has them (only the
 * newest forms may be missing, and a program cannot call what its C
 * library lacks), and no lookup waits in one. Should a call come while a
 * lookup is in progress, it fails as a kernel without the call would. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define NO_WAIT_FALLBACK(name, params)         \
	static int name params                 \
	{                                      \
		errno = ENOSYS;                \
		return -1;                     \
	}
NO_WAIT_FALLBACK(no_poll, (struct pollfd *f, nfds_t n, int t))
NO_WAIT_FALLBACK(no_ppoll, (struct pollfd *f, nfds_t n, const struct timespec *t,
			    const sigset_t *m))
NO_WAIT_FALLBACK(no_ppoll64, (struct pollfd *f, nfds_t n, const void *t, const sigset_t *m))
NO_WAIT_FALLBACK(no_poll_chk, (struct pollfd *f, nfds_t n, int t, size_t l))
NO_WAIT_FALLBACK(no_ppoll_chk, (struct pollfd *f, nfds_t n, const struct timespec *t,
				const sigset_t *m, size_t l))
NO_WAIT_FALLBACK(no_select, (int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t))
NO_WAIT_FALLBACK(no_select64, (int n, fd_set *r, fd_set *w, fd_set *e, void *t))
NO_WAIT_FALLBACK(no_pselect, (int n, fd_set *r, fd_set *w, fd_set *e,
			      const struct timespec *t, const sigset_t *m))
NO_WAIT_FALLBACK(no_pselect64, (int n, fd_set *r, fd_set *w, fd_set *e, const void *t,
				const sigset_t *m))
NO_WAIT_FALLBACK(no_epoll_wait, (int ep, struct epoll_event *ev, int n, int t))
NO_WAIT_FALLBACK(no_epoll_pwait, (int ep, struct epoll_event *ev, int n, int t,
				  const sigset_t *m))
NO_WAIT_FALLBACK(no_epoll_pwait2, (int ep, struct epoll_event *ev, int n, const void *t,
				   const sigset_t *m))
NO_WAIT_FALLBACK(no_epoll_ctl, (int ep, int op, int fd, struct epoll_event *ev))
#pragma GCC diagnostic pop

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

static int resolve_poll(struct pollfd *f, nfds_t n, int t)
{
	return RESOLVE(poll, pl_poll_fn, "poll", NULL, no_poll)(f, n, t);
}

static int resolve_ppoll(struct pollfd *f, nfds_t n, const struct timespec *t, const sigset_t *m)
{
	return RESOLVE(ppoll, pl_ppoll_fn, "ppoll", NULL, no_ppoll)(f, n, t, m);
}

static int resolve_ppoll64(struct pollfd *f, nfds_t n, const void *t, const sigset_t *m)
{
	return RESOLVE(ppoll64, pl_ppoll64_fn, "__ppoll64", NULL, no_ppoll64)(f, n, t, m);
}

static int resolve_poll_chk(struct pollfd *f, nfds_t n, int t, size_t l)
{
	return RESOLVE(poll_chk, pl_poll_chk_fn, "__poll_chk", NULL, no_poll_chk)(f, n, t, l);
}

static int resolve_ppoll_chk(struct pollfd *f, nfds_t n, const struct timespec *t,
			     const sigset_t *m, size_t l)
{
	return RESOLVE(ppoll_chk, pl_ppoll_chk_fn, "__ppoll_chk", NULL, no_ppoll_chk)(f, n, t, m,
										      l);
}

static int resolve_select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t)
{
	return RESOLVE(select, pl_select_fn, "select", NULL, no_select)(n, r, w, e, t);
}

static int resolve_select64(int n, fd_set *r, fd_set *w, fd_set *e, void *t)
{
	return RESOLVE(select64, pl_select64_fn, "__select64", NULL, no_select64)(n, r, w, e, t);
}

static int resolve_pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *t,
			   const sigset_t *m)
{
	return RESOLVE(pselect, pl_pselect_fn, "pselect", NULL, no_pselect)(n, r, w, e, t, m);
}

static int resolve_pselect64(int n, fd_set *r, fd_set *w, fd_set *e, const void *t,
			     const sigset_t *m)
{
	return RESOLVE(pselect64, pl_pselect64_fn, "__pselect64", NULL, no_pselect64)(n, r, w, e,
										      t, m);
}

static int resolve_epoll_wait(int ep, struct epoll_event *ev, int n, int t)
{
	return RESOLVE(epoll_wait, pl_epoll_wait_fn, "epoll_wait", NULL, no_epoll_wait)(ep, ev,
											n, t);
}

static int resolve_epoll_pwait(int ep, struct epoll_event *ev, int n, int t, const sigset_t *m)
{
	return RESOLVE(epoll_pwait, pl_epoll_pwait_fn, "epoll_pwait", NULL,
		       no_epoll_pwait)(ep, ev, n, t, m);
}

static int resolve_epoll_pwait2(int ep, struct epoll_event *ev, int n, const void *t,
				const sigset_t *m)
{
	return RESOLVE(epoll_pwait2, pl_epoll_pwait2_fn, "epoll_pwait2", NULL,
		       no_epoll_pwait2)(ep, ev, n, t, m);
}

static int resolve_epoll_pwait2_time64(int ep, struct epoll_event *ev, int n, const void *t,
				       const sigset_t *m)
{
	return RESOLVE(epoll_pwait2_time64, pl_epoll_pwait2_fn, "__epoll_pwait2_time64", NULL,
		       no_epoll_pwait2)(ep, ev, n, t, m);
}

static int resolve_epoll_ctl(int ep, int op, int fd, struct epoll_event *ev)
{
	return RESOLVE(epoll_ctl, pl_epoll_ctl_fn, "epoll_ctl", NULL, no_epoll_ctl)(ep, op, fd,
										   ev);
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
	.poll = resolve_poll,
	.ppoll = resolve_ppoll,
	.ppoll64 = resolve_ppoll64,
	.poll_chk = resolve_poll_chk,
	.ppoll_chk = resolve_ppoll_chk,
	.select = resolve_select,
	.select64 = resolve_select64,
	.pselect = resolve_pselect,
	.pselect64 = resolve_pselect64,
	.epoll_wait = resolve_epoll_wait,
	.epoll_pwait = resolve_epoll_pwait,
	.epoll_pwait2 = resolve_epoll_pwait2,
	.epoll_pwait2_time64 = resolve_epoll_pwait2_time64,
	.epoll_ctl = resolve_epoll_ctl,
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
	(void)RESOLVE(poll, pl_poll_fn, "poll", NULL, no_poll);
	(void)RESOLVE(ppoll, pl_ppoll_fn, "ppoll", NULL, no_ppoll);
	(void)RESOLVE(select, pl_select_fn, "select", NULL, no_select);
	(void)RESOLVE(pselect, pl_pselect_fn, "pselect", NULL, no_pselect);
	(void)RESOLVE(epoll_wait, pl_epoll_wait_fn, "epoll_wait", NULL, no_epoll_wait);
	(void)RESOLVE(epoll_pwait, pl_epoll_pwait_fn, "epoll_pwait", NULL, no_epoll_pwait);
	(void)RESOLVE(epoll_ctl, pl_epoll_ctl_fn, "epoll_ctl", NULL, no_epoll_ctl);
#ifdef __GLIBC__
	(void)RESOLVE(poll_chk, pl_poll_chk_fn, "__poll_chk", NULL, no_poll_chk);
	(void)RESOLVE(ppoll_chk, pl_ppoll_chk_fn, "__ppoll_chk", NULL, no_ppoll_chk);
#endif
#ifdef PL_HAVE_EPOLL_PWAIT2
	(void)RESOLVE(epoll_pwait2, pl_epoll_pwait2_fn, "epoll_pwait2", NULL, no_epoll_pwait2);
#endif
#if defined(__GLIBC__) && defined(__TIMESIZE) && __TIMESIZE == 32
	(void)RESOLVE(ppoll64, pl_ppoll64_fn, "__ppoll64", NULL, no_ppoll64);
	(void)RESOLVE(select64, pl_select64_fn, "__select64", NULL, no_select64);
	(void)RESOLVE(pselect64, pl_pselect64_fn, "__pselect64", NULL, no_pselect64);
	(void)RESOLVE(epoll_pwait2_time64, pl_epoll_pwait2_fn, "__epoll_pwait2_time64", NULL,
		      no_epoll_pwait2);
#endif
}
