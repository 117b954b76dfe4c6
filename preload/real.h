/* The functions the hooks forward to: the next definition after the shim in
 * the lookup order (dlsym(RTLD_NEXT)), normally libc's.
 *
 * Each pointer starts out pointing at a resolver that looks the symbol up,
 * stores it over itself and makes the call (musl's self-replacing pointer),
 * so that a hook called before the constructor forwards correctly and a
 * resolved hook costs one indirect call, no check. dlsym may itself call
 * open or malloc (which may call open...): a per-thread flag notices the
 * recursion and the nested call goes straight to the kernel instead.
 *
 * The pointer types are variadic where libc's functions are, so that calls
 * through them pass arguments the way the callee reads them on every ABI. */
#ifndef PL_PRELOAD_REAL_H
#define PL_PRELOAD_REAL_H

#include <poll.h>
#include <signal.h>
#include <sys/select.h>
#include <sys/types.h>
#include <time.h>

struct epoll_event;

/* glibc declares ioctl(int, unsigned long, ...), musl ioctl(int, int, ...):
 * the hook must match the libc it is built against. */
#ifdef __GLIBC__
typedef unsigned long pl_ioctl_req;
#else
typedef int pl_ioctl_req;
#endif

typedef int (*pl_ioctl_fn)(int, pl_ioctl_req, ...);
typedef int (*pl_open_fn)(const char *, int, ...);
typedef int (*pl_openat_fn)(int, const char *, int, ...);
typedef int (*pl_open2_fn)(const char *, int);
typedef int (*pl_openat2_fn)(int, const char *, int);
typedef int (*pl_creat_fn)(const char *, mode_t);
typedef int (*pl_close_fn)(int);
typedef int (*pl_close_range_fn)(unsigned int, unsigned int, int);
typedef void (*pl_closefrom_fn)(int);
typedef int (*pl_dup_fn)(int);
typedef int (*pl_dup2_fn)(int, int);
typedef int (*pl_dup3_fn)(int, int, int);
typedef int (*pl_cacheflush_fn)(void *, int, int);
/* the waits (hooks_wait.c); the time64 forms of 32-bit glibc take the
 * same arguments with 64-bit times, passed through untouched */
typedef int (*pl_poll_fn)(struct pollfd *, nfds_t, int);
typedef int (*pl_ppoll_fn)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
typedef int (*pl_ppoll64_fn)(struct pollfd *, nfds_t, const void *, const sigset_t *);
typedef int (*pl_poll_chk_fn)(struct pollfd *, nfds_t, int, size_t);
typedef int (*pl_ppoll_chk_fn)(struct pollfd *, nfds_t, const struct timespec *,
			       const sigset_t *, size_t);
typedef int (*pl_select_fn)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
typedef int (*pl_select64_fn)(int, fd_set *, fd_set *, fd_set *, void *);
typedef int (*pl_pselect_fn)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
			     const sigset_t *);
typedef int (*pl_pselect64_fn)(int, fd_set *, fd_set *, fd_set *, const void *,
			       const sigset_t *);
typedef int (*pl_epoll_wait_fn)(int, struct epoll_event *, int, int);
typedef int (*pl_epoll_pwait_fn)(int, struct epoll_event *, int, int, const sigset_t *);
typedef int (*pl_epoll_pwait2_fn)(int, struct epoll_event *, int, const void *,
				  const sigset_t *);
typedef int (*pl_epoll_ctl_fn)(int, int, int, struct epoll_event *);

struct pl_real {
	pl_ioctl_fn ioctl;
	pl_ioctl_fn ioctl_time64; /* __ioctl_time64, 32-bit glibc only */
	/* lfs_*: open64 and the others, which musl #defines to the plain
	 * names (so they cannot be member names) */
	pl_open_fn open, lfs_open;
	pl_openat_fn openat, lfs_openat;
	pl_open2_fn open_2, open64_2;
	pl_openat2_fn openat_2, openat64_2;
	pl_creat_fn creat, lfs_creat;
	pl_close_fn close;
	pl_close_range_fn close_range;
	pl_closefrom_fn closefrom;
	pl_dup_fn dup;
	pl_dup2_fn dup2;
	pl_dup3_fn dup3;
	pl_cacheflush_fn cacheflush; /* MIPS only */
	pl_poll_fn poll;
	pl_ppoll_fn ppoll;
	pl_ppoll64_fn ppoll64;         /* __ppoll64, 32-bit glibc only */
	pl_poll_chk_fn poll_chk;       /* __poll_chk, glibc only */
	pl_ppoll_chk_fn ppoll_chk;     /* __ppoll_chk, glibc only */
	pl_select_fn select;
	pl_select64_fn select64;       /* __select64, 32-bit glibc only */
	pl_pselect_fn pselect;
	pl_pselect64_fn pselect64;     /* __pselect64, 32-bit glibc only */
	pl_epoll_wait_fn epoll_wait;
	pl_epoll_pwait_fn epoll_pwait;
	pl_epoll_pwait2_fn epoll_pwait2; /* where the C library has it */
	pl_epoll_pwait2_fn epoll_pwait2_time64; /* __epoll_pwait2_time64, 32-bit glibc */
	pl_epoll_ctl_fn epoll_ctl;
};

extern struct pl_real pl__real;

/* Resolve every pointer now (the constructor calls this, so that no hook
 * on the hot path ever enters dlsym). */
void pl__real_resolve_all(void);

#endif
