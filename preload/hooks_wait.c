/* The exported poll, select and epoll hooks (profiler/waits.h): a wait on
 * a staged device is timed as that stage's NAME.wait; any other wait, and
 * every wait while the shim is dormant, is the flag test and the call.
 * epoll_ctl tells the fd table which epoll sets hold staged devices.
 *
 * Like hooks.c, each function defines exactly the symbol it is named after:
 * the large-file, time64 and fortify redirections of libc's headers must
 * not rename them. The time64 forms of 32-bit glibc (__ppoll64, __select64,
 * __pselect64, __epoll_pwait2_time64) pass their 64-bit times through as
 * they came. */
#undef _FILE_OFFSET_BITS
#undef _TIME_BITS
#undef _FORTIFY_SOURCE

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "fdtab.h"
#include "profile.h"
#include "real.h"
#include "waits.h"

/* glibc declares poll's and ppoll's array write-only (access attribute),
 * though the kernel reads its fd and events fields: reading them here is
 * what any poll does, not a read of uninitialised memory. */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define PL_EXPORT __attribute__((visibility("default")))
#define ACTIVE() __builtin_expect(pl__profile_on, 0)

/* The real call, timed as wait stage w. */
#define TIMED_WAIT(w, call)                              \
	__extension__({                                  \
		struct pl_wait_clock clock_;             \
		int ret_, err_;                          \
		pl__wait_begin(&clock_);                 \
		ret_ = (call);                           \
		err_ = errno;                            \
		pl__wait_end((w), &clock_, ret_, err_);  \
		ret_;                                    \
	})

/* Each hook is the flag test and a tail call while dormant; the active
 * path, a function of its own (ACTIVE_PATH), looks at the set and times
 * the call when it waits on a staged device. */
#define ACTIVE_PATH static __attribute__((noinline)) int

/* --- poll ---------------------------------------------------------------- */

ACTIVE_PATH poll_active(struct pollfd *fds, nfds_t n, int timeout)
{
	unsigned w = pl__waits_in_pollfds(fds, n);

	if (!w)
		return pl__real.poll(fds, n, timeout);
	return TIMED_WAIT(w, pl__real.poll(fds, n, timeout));
}

PL_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	if (ACTIVE())
		return poll_active(fds, n, timeout);
	return pl__real.poll(fds, n, timeout);
}

ACTIVE_PATH ppoll_active(struct pollfd *fds, nfds_t n, const struct timespec *t, const sigset_t *m)
{
	unsigned w = pl__waits_in_pollfds(fds, n);

	if (!w)
		return pl__real.ppoll(fds, n, t, m);
	return TIMED_WAIT(w, pl__real.ppoll(fds, n, t, m));
}

PL_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *t, const sigset_t *m)
{
	if (ACTIVE())
		return ppoll_active(fds, n, t, m);
	return pl__real.ppoll(fds, n, t, m);
}

#ifdef __GLIBC__
/* What a fortified program's poll and ppoll call when the array's size is
 * known but nfds is not a constant. */
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *t, const sigset_t *m,
		size_t fdslen);

ACTIVE_PATH poll_chk_active(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	/* an nfds past the array is the check's to refuse: look at none */
	unsigned w = n <= fdslen / sizeof(*fds) ? pl__waits_in_pollfds(fds, n) : 0;

	if (!w)
		return pl__real.poll_chk(fds, n, timeout, fdslen);
	return TIMED_WAIT(w, pl__real.poll_chk(fds, n, timeout, fdslen));
}

PL_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	if (ACTIVE())
		return poll_chk_active(fds, n, timeout, fdslen);
	return pl__real.poll_chk(fds, n, timeout, fdslen);
}

ACTIVE_PATH ppoll_chk_active(struct pollfd *fds, nfds_t n, const struct timespec *t,
			     const sigset_t *m, size_t fdslen)
{
	unsigned w = n <= fdslen / sizeof(*fds) ? pl__waits_in_pollfds(fds, n) : 0;

	if (!w)
		return pl__real.ppoll_chk(fds, n, t, m, fdslen);
	return TIMED_WAIT(w, pl__real.ppoll_chk(fds, n, t, m, fdslen));
}

PL_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *t,
			  const sigset_t *m, size_t fdslen)
{
	if (ACTIVE())
		return ppoll_chk_active(fds, n, t, m, fdslen);
	return pl__real.ppoll_chk(fds, n, t, m, fdslen);
}
#endif

/* --- select -------------------------------------------------------------- */

ACTIVE_PATH select_active(int n, fd_set *r, fd_set *wr, fd_set *e, struct timeval *t)
{
	unsigned w = pl__waits_in_fdsets(n, r, wr, e);

	if (!w)
		return pl__real.select(n, r, wr, e, t);
	return TIMED_WAIT(w, pl__real.select(n, r, wr, e, t));
}

PL_EXPORT int select(int n, fd_set *r, fd_set *wr, fd_set *e, struct timeval *t)
{
	if (ACTIVE())
		return select_active(n, r, wr, e, t);
	return pl__real.select(n, r, wr, e, t);
}

ACTIVE_PATH pselect_active(int n, fd_set *r, fd_set *wr, fd_set *e, const struct timespec *t,
			   const sigset_t *m)
{
	unsigned w = pl__waits_in_fdsets(n, r, wr, e);

	if (!w)
		return pl__real.pselect(n, r, wr, e, t, m);
	return TIMED_WAIT(w, pl__real.pselect(n, r, wr, e, t, m));
}

PL_EXPORT int pselect(int n, fd_set *r, fd_set *wr, fd_set *e, const struct timespec *t,
		      const sigset_t *m)
{
	if (ACTIVE())
		return pselect_active(n, r, wr, e, t, m);
	return pl__real.pselect(n, r, wr, e, t, m);
}

/* --- epoll --------------------------------------------------------------- */

PL_EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	int r = pl__real.epoll_ctl(epfd, op, fd, ev);

	if (ACTIVE() && r == 0) {
		if (op == EPOLL_CTL_ADD)
			pl__fd_epoll_added(epfd, fd);
		else if (op == EPOLL_CTL_DEL)
			pl__fd_epoll_removed(epfd, fd);
	}
	return r;
}

ACTIVE_PATH epoll_wait_active(int epfd, struct epoll_event *ev, int max, int timeout)
{
	unsigned w = pl__fd_wait_stage(epfd);

	if (!w)
		return pl__real.epoll_wait(epfd, ev, max, timeout);
	return TIMED_WAIT(w, pl__real.epoll_wait(epfd, ev, max, timeout));
}

PL_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	if (ACTIVE())
		return epoll_wait_active(epfd, ev, max, timeout);
	return pl__real.epoll_wait(epfd, ev, max, timeout);
}

ACTIVE_PATH epoll_pwait_active(int epfd, struct epoll_event *ev, int max, int timeout,
			       const sigset_t *m)
{
	unsigned w = pl__fd_wait_stage(epfd);

	if (!w)
		return pl__real.epoll_pwait(epfd, ev, max, timeout, m);
	return TIMED_WAIT(w, pl__real.epoll_pwait(epfd, ev, max, timeout, m));
}

PL_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
			  const sigset_t *m)
{
	if (ACTIVE())
		return epoll_pwait_active(epfd, ev, max, timeout, m);
	return pl__real.epoll_pwait(epfd, ev, max, timeout, m);
}

#ifdef PL_HAVE_EPOLL_PWAIT2
ACTIVE_PATH epoll_pwait2_active(int epfd, struct epoll_event *ev, int max, const struct timespec *t,
				const sigset_t *m)
{
	unsigned w = pl__fd_wait_stage(epfd);

	if (!w)
		return pl__real.epoll_pwait2(epfd, ev, max, t, m);
	return TIMED_WAIT(w, pl__real.epoll_pwait2(epfd, ev, max, t, m));
}

PL_EXPORT int epoll_pwait2(int epfd, struct epoll_event *ev, int max, const struct timespec *t,
			   const sigset_t *m)
{
	if (ACTIVE())
		return epoll_pwait2_active(epfd, ev, max, t, m);
	return pl__real.epoll_pwait2(epfd, ev, max, t, m);
}
#endif

/* --- the time64 forms of 32-bit glibc 2.34 and later ----------------------- */

#if defined(__GLIBC__) && defined(__TIMESIZE) && __TIMESIZE == 32
int __ppoll64(struct pollfd *fds, nfds_t n, const void *t, const sigset_t *m);
int __select64(int n, fd_set *r, fd_set *wr, fd_set *e, void *t);
int __pselect64(int n, fd_set *r, fd_set *wr, fd_set *e, const void *t, const sigset_t *m);
int __epoll_pwait2_time64(int epfd, struct epoll_event *ev, int max, const void *t,
			  const sigset_t *m);

ACTIVE_PATH ppoll64_active(struct pollfd *fds, nfds_t n, const void *t, const sigset_t *m)
{
	unsigned w = pl__waits_in_pollfds(fds, n);

	if (!w)
		return pl__real.ppoll64(fds, n, t, m);
	return TIMED_WAIT(w, pl__real.ppoll64(fds, n, t, m));
}

PL_EXPORT int __ppoll64(struct pollfd *fds, nfds_t n, const void *t, const sigset_t *m)
{
	if (ACTIVE())
		return ppoll64_active(fds, n, t, m);
	return pl__real.ppoll64(fds, n, t, m);
}

ACTIVE_PATH select64_active(int n, fd_set *r, fd_set *wr, fd_set *e, void *t)
{
	unsigned w = pl__waits_in_fdsets(n, r, wr, e);

	if (!w)
		return pl__real.select64(n, r, wr, e, t);
	return TIMED_WAIT(w, pl__real.select64(n, r, wr, e, t));
}

PL_EXPORT int __select64(int n, fd_set *r, fd_set *wr, fd_set *e, void *t)
{
	if (ACTIVE())
		return select64_active(n, r, wr, e, t);
	return pl__real.select64(n, r, wr, e, t);
}

ACTIVE_PATH pselect64_active(int n, fd_set *r, fd_set *wr, fd_set *e, const void *t,
			     const sigset_t *m)
{
	unsigned w = pl__waits_in_fdsets(n, r, wr, e);

	if (!w)
		return pl__real.pselect64(n, r, wr, e, t, m);
	return TIMED_WAIT(w, pl__real.pselect64(n, r, wr, e, t, m));
}

PL_EXPORT int __pselect64(int n, fd_set *r, fd_set *wr, fd_set *e, const void *t,
			  const sigset_t *m)
{
	if (ACTIVE())
		return pselect64_active(n, r, wr, e, t, m);
	return pl__real.pselect64(n, r, wr, e, t, m);
}

ACTIVE_PATH epoll_pwait2_time64_active(int epfd, struct epoll_event *ev, int max, const void *t,
				       const sigset_t *m)
{
	unsigned w = pl__fd_wait_stage(epfd);

	if (!w)
		return pl__real.epoll_pwait2_time64(epfd, ev, max, t, m);
	return TIMED_WAIT(w, pl__real.epoll_pwait2_time64(epfd, ev, max, t, m));
}

PL_EXPORT int __epoll_pwait2_time64(int epfd, struct epoll_event *ev, int max, const void *t,
				    const sigset_t *m)
{
	if (ACTIVE())
		return epoll_pwait2_time64_active(epfd, ev, max, t, m);
	return pl__real.epoll_pwait2_time64(epfd, ev, max, t, m);
}
#endif
