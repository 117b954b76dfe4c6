/* See event_loop.h. */
#include "event_loop.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

enum watch_kind { WATCH_FD, WATCH_TIMER, WATCH_SIGNAL };

struct pl_loop_watch {
	struct pl_loop *loop;
	enum watch_kind kind;
	int fd;
	bool dead;
	union {
		pl__loop_fd_cb fd;
		pl__loop_timer_cb timer;
	} cb;
	void *ctx;
	struct pl_loop_watch *prev, *next; /* live list, or the dead list */
};

struct signal_handler {
	pl__loop_signal_cb cb;
	void *ctx;
};

struct pl_loop {
	int epfd;
	bool stop;
	struct pl_loop_watch *live;
	/* Removed during a batch: an epoll_event of this batch may still point
	 * at them, so they are freed only when the batch is done. */
	struct pl_loop_watch *dead;
	struct pl_loop_watch *sigwatch;
	sigset_t sigmask, saved_mask;
	bool mask_saved;
	struct signal_handler sig[NSIG];
};

int pl__loop_new(struct pl_loop **out)
{
	struct pl_loop *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		int e = errno;

		free(l);
		return -e;
	}
	sigemptyset(&l->sigmask);
	*out = l;
	return 0;
}

static int watch_new(struct pl_loop *l, enum watch_kind kind, int fd, uint32_t events,
		     void *ctx, struct pl_loop_watch **out)
{
	struct pl_loop_watch *w = calloc(1, sizeof(*w));
	struct epoll_event ev;

	if (!w)
		return -ENOMEM;
	w->loop = l;
	w->kind = kind;
	w->fd = fd;
	w->ctx = ctx;
	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.ptr = w;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int e = errno;

		free(w);
		return -e;
	}
	w->next = l->live;
	if (l->live)
		l->live->prev = w;
	l->live = w;
	*out = w;
	return 0;
}

int pl__loop_add_fd(struct pl_loop *l, int fd, uint32_t events, pl__loop_fd_cb cb, void *ctx,
		    struct pl_loop_watch **out)
{
	struct pl_loop_watch *w;
	int ret = watch_new(l, WATCH_FD, fd, events, ctx, &w);

	if (ret < 0)
		return ret;
	w->cb.fd = cb;
	if (out)
		*out = w;
	return 0;
}

int pl__loop_mod_fd(struct pl_loop_watch *w, uint32_t events)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.ptr = w;
	if (epoll_ctl(w->loop->epfd, EPOLL_CTL_MOD, w->fd, &ev) < 0)
		return -errno;
	return 0;
}

static void ns_to_timespec(uint64_t ns, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ns / 1000000000u);
	ts->tv_nsec = (long)(ns % 1000000000u);
}

int pl__loop_timer_set(struct pl_loop_watch *w, uint64_t first_ns, uint64_t interval_ns)
{
	struct itimerspec its;

	if (w->kind != WATCH_TIMER)
		return -EINVAL;
	ns_to_timespec(first_ns, &its.it_value);
	ns_to_timespec(first_ns ? interval_ns : 0, &its.it_interval);
	if (timerfd_settime(w->fd, 0, &its, NULL) < 0)
		return -errno;
	return 0;
}

int pl__loop_add_timer(struct pl_loop *l, uint64_t first_ns, uint64_t interval_ns,
		       pl__loop_timer_cb cb, void *ctx, struct pl_loop_watch **out)
{
	struct pl_loop_watch *w;
	int fd, ret;

	fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = watch_new(l, WATCH_TIMER, fd, EPOLLIN, ctx, &w);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	w->cb.timer = cb;
	ret = pl__loop_timer_set(w, first_ns, interval_ns);
	if (ret < 0) {
		pl__loop_remove(w);
		return ret;
	}
	if (out)
		*out = w;
	return 0;
}

int pl__loop_add_signal(struct pl_loop *l, int signo, pl__loop_signal_cb cb, void *ctx)
{
	sigset_t mask = l->sigmask;
	int fd;

	if (signo <= 0 || signo >= NSIG)
		return -EINVAL;
	if (sigaddset(&mask, signo) < 0)
		return -EINVAL;
	if (!l->mask_saved) {
		if (sigprocmask(SIG_BLOCK, NULL, &l->saved_mask) < 0)
			return -errno;
		l->mask_saved = true;
	}
	/* Block first: a signal arriving between signalfd() and the block
	 * would otherwise take its default action. */
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	fd = signalfd(l->sigwatch ? l->sigwatch->fd : -1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!l->sigwatch) {
		int ret = watch_new(l, WATCH_SIGNAL, fd, EPOLLIN, NULL, &l->sigwatch);

		if (ret < 0) {
			close(fd);
			return ret;
		}
	}
	l->sigmask = mask;
	l->sig[signo].cb = cb;
	l->sig[signo].ctx = ctx;
	return 0;
}

void pl__loop_remove(struct pl_loop_watch *w)
{
	struct pl_loop *l;

	if (!w || w->dead)
		return;
	l = w->loop;
	/* A closed fd leaves epoll by itself; a caller's fd may stay open. */
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	if (w->kind != WATCH_FD)
		close(w->fd);
	w->fd = -1;
	w->dead = true;
	if (w->prev)
		w->prev->next = w->next;
	else
		l->live = w->next;
	if (w->next)
		w->next->prev = w->prev;
	w->prev = NULL;
	w->next = l->dead;
	l->dead = w;
}

static void free_dead(struct pl_loop *l)
{
	while (l->dead) {
		struct pl_loop_watch *w = l->dead;

		l->dead = w->next;
		free(w);
	}
}

static void dispatch_signals(struct pl_loop *l)
{
	struct signalfd_siginfo si;
	ssize_t n;

	for (;;) {
		n = read(l->sigwatch->fd, &si, sizeof(si));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(si))
			return;
		if (si.ssi_signo < NSIG && l->sig[si.ssi_signo].cb)
			l->sig[si.ssi_signo].cb(l->sig[si.ssi_signo].ctx, (int)si.ssi_signo);
	}
}

static void dispatch(struct pl_loop_watch *w, uint32_t events)
{
	uint64_t expirations;
	ssize_t n;

	switch (w->kind) {
	case WATCH_FD:
		w->cb.fd(w->ctx, w->fd, events);
		return;
	case WATCH_TIMER:
		do
			n = read(w->fd, &expirations, sizeof(expirations));
		while (n < 0 && errno == EINTR);
		/* EAGAIN: re-armed or disarmed after the event was queued. */
		if (n == (ssize_t)sizeof(expirations) && expirations > 0)
			w->cb.timer(w->ctx, expirations);
		return;
	case WATCH_SIGNAL:
		dispatch_signals(w->loop);
		return;
	}
}

int pl__loop_run_once(struct pl_loop *l, int timeout_ms)
{
	struct epoll_event ev[32];
	int n, i, done = 0;

	n = epoll_wait(l->epfd, ev, 32, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < n; i++) {
		struct pl_loop_watch *w = ev[i].data.ptr;

		if (w->dead)
			continue;
		dispatch(w, ev[i].events);
		done++;
	}
	free_dead(l);
	return done;
}

int pl__loop_run(struct pl_loop *l)
{
	l->stop = false;
	while (!l->stop) {
		int ret = pl__loop_run_once(l, -1);

		if (ret < 0)
			return ret;
	}
	return 0;
}

void pl__loop_stop(struct pl_loop *l)
{
	l->stop = true;
}

void pl__loop_free(struct pl_loop *l)
{
	if (!l)
		return;
	while (l->live)
		pl__loop_remove(l->live);
	free_dead(l);
	if (l->mask_saved) {
		struct timespec zero = { 0, 0 };

		/* Consume what is pending so that unblocking does not run
		 * the default action (death, for SIGTERM) afterwards. */
		while (sigtimedwait(&l->sigmask, NULL, &zero) > 0)
			;
		sigprocmask(SIG_SETMASK, &l->saved_mask, NULL);
	}
	close(l->epfd);
	free(l);
}
