/* A capture-like client that waits for its "device" in poll, select or
 * epoll before each dequeue, as v4l2-ctl --stream-poll, GStreamer's
 * v4l2src and event loops do. The device is a pipe that a thread fills
 * with 4 bytes every PERIOD_MS; the dequeue is FIONREAD on it (the stage
 * file in test_waits.c names it), then a read of what it said.
 *
 *   wait_loop MODE FRAMES PERIOD_MS
 *
 * MODE: poll, ppoll, poll_chk, ppoll_chk (glibc's fortified entry points,
 * called as a fortified program calls them), select, pselect, epoll_wait,
 * epoll_pwait, epoll_pwait2; epoll_del (epoll_wait, with the device taken
 * out of the set after half the frames: the rest wait on an empty set for
 * PERIOD_MS, then read blocking); unstaged (poll on a second, silent pipe
 * for PERIOD_MS, then read blocking: no wait on the device at all).
 * poll and select sets also hold the silent pipe, first, so that the
 * device is not the only or the first descriptor looked at.
 * efault: after the first dequeue, poll and select are given pointers to
 * nothing: the kernel's EFAULT must come back, not a crash.
 * dup: poll on the device, dequeue on a dup of it, as GStreamer's v4l2src
 * (its buffer pool dequeues on a dup of the fd the element polls);
 * dup_reversed: dequeue on the device, poll on the dup.
 *
 * Prints "frames=N bytes=B" and exits 0; 1 on any failure. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static int device[2], silent[2];
/* what the loop waits on and dequeues from: device[0], or a dup of it */
static int wait_fd, dequeue_fd;
static unsigned frames, period_ms;

static void *fill(void *unused)
{
	struct timespec gap = { (time_t)(period_ms / 1000), (long)(period_ms % 1000) * 1000000L };
	unsigned i;

	(void)unused;
	for (i = 0; i < frames; i++) {
		nanosleep(&gap, NULL);
		if (write(device[1], "fram", 4) != 4)
			return NULL;
	}
	return NULL;
}

static int fail(const char *what)
{
	fprintf(stderr, "wait_loop: %s: %s\n", what, strerror(errno));
	exit(1);
}

#ifdef __GLIBC__
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *t, const sigset_t *m,
		size_t fdslen);
#endif

/* One wait for the device by mode; 0 when it is readable. */
static int wait_for_device(const char *mode, int ep)
{
	struct pollfd p[2] = { { silent[0], POLLIN, 0 }, { wait_fd, POLLIN, 0 } };
	struct timespec forever_ts = { 60, 0 };
	struct epoll_event ev;
	sigset_t none;
	fd_set set;
	int r;

	sigemptyset(&none);
	if (strcmp(mode, "poll") == 0 || strncmp(mode, "dup", 3) == 0)
		r = poll(p, 2, 60000);
	else if (strcmp(mode, "ppoll") == 0)
		r = ppoll(p, 2, &forever_ts, &none);
#ifdef __GLIBC__
	else if (strcmp(mode, "poll_chk") == 0)
		r = __poll_chk(p, 2, 60000, sizeof(p));
	else if (strcmp(mode, "ppoll_chk") == 0)
		r = __ppoll_chk(p, 2, &forever_ts, &none, sizeof(p));
#endif
	else if (strcmp(mode, "select") == 0 || strcmp(mode, "pselect") == 0) {
		struct timeval forever_tv = { 60, 0 };
		int top = (wait_fd > silent[0] ? wait_fd : silent[0]) + 1;

		FD_ZERO(&set);
		FD_SET(silent[0], &set);
		FD_SET(wait_fd, &set);
		if (mode[0] == 's')
			r = select(top, &set, NULL, NULL, &forever_tv);
		else
			r = pselect(top, &set, NULL, NULL, &forever_ts, &none);
		return r == 1 && FD_ISSET(wait_fd, &set) ? 0 : -1;
	} else if (strcmp(mode, "epoll_wait") == 0 || strcmp(mode, "epoll_del") == 0)
		r = epoll_wait(ep, &ev, 1, 60000);
	else if (strcmp(mode, "epoll_pwait") == 0)
		r = epoll_pwait(ep, &ev, 1, 60000, &none);
#ifdef PL_HAVE_EPOLL_PWAIT2
	else if (strcmp(mode, "epoll_pwait2") == 0)
		r = epoll_pwait2(ep, &ev, 1, &forever_ts, &none);
#endif
	else {
		errno = EINVAL;
		return -1;
	}
	if (strncmp(mode, "epoll", 5) == 0)
		return r == 1 && ev.data.fd == wait_fd ? 0 : -1;
	return r == 1 && (p[1].revents & POLLIN) ? 0 : -1;
}

/* Once the pipe is a device for waits, the shim looks into every set it is
 * given: a pointer to unmapped memory must still get the kernel's answer. */
static int bad_pointers(void)
{
	/* the first page is never mapped; volatile: the compiler must not see it */
	void *volatile nowhere = (void *)(uintptr_t)8;
	struct timeval zero = { 0, 0 };
	int n = 0, r_poll, e_poll, r_select, e_select;

	if (write(device[1], "fram", 4) != 4 || ioctl(device[0], FIONREAD, &n) < 0)
		fail("the first dequeue");
	errno = 0;
	r_poll = poll(nowhere, 1, 0);
	e_poll = errno;
	errno = 0;
	r_select = select(device[0] + 1, nowhere, NULL, NULL, &zero);
	e_select = errno;
	printf("poll: %d %s, select: %d %s\n", r_poll, e_poll == EFAULT ? "EFAULT" : strerror(e_poll),
	       r_select, e_select == EFAULT ? "EFAULT" : strerror(e_select));
	return r_poll == -1 && e_poll == EFAULT && r_select == -1 && e_select == EFAULT ? 0 : 1;
}

int main(int argc, char **argv)
{
	unsigned long long total = 0;
	const char *mode;
	pthread_t filler;
	unsigned i;
	int ep = -1;

	if (argc != 4) {
		fprintf(stderr, "usage: wait_loop MODE FRAMES PERIOD_MS\n");
		return 2;
	}
	mode = argv[1];
	frames = (unsigned)strtoul(argv[2], NULL, 10);
	period_ms = (unsigned)strtoul(argv[3], NULL, 10);
	if (pipe(device) < 0 || pipe(silent) < 0)
		fail("pipe");
	wait_fd = dequeue_fd = device[0];
	if (strcmp(mode, "dup") == 0 && (dequeue_fd = dup(device[0])) < 0)
		fail("dup");
	if (strcmp(mode, "dup_reversed") == 0 && (wait_fd = dup(device[0])) < 0)
		fail("dup");
	if (strncmp(mode, "epoll", 5) == 0) {
		struct epoll_event ev = { .events = EPOLLIN };

		ev.data.fd = device[0];
		/* added before the first dequeue, as an event loop does */
		ep = epoll_create1(EPOLL_CLOEXEC);
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, device[0], &ev) < 0)
			fail("epoll");
	}
	if (strcmp(mode, "efault") == 0)
		return bad_pointers();
	if (pthread_create(&filler, NULL, fill, NULL) != 0)
		fail("pthread_create");
	for (i = 0; i < frames; i++) {
		char buf[4];
		int n = 0;

		if (strcmp(mode, "unstaged") == 0) {
			struct pollfd q = { silent[0], POLLIN, 0 };

			if (poll(&q, 1, (int)period_ms) != 0)
				fail("poll on the silent pipe");
		} else if (strcmp(mode, "epoll_del") == 0 && i >= frames / 2) {
			struct epoll_event ev;

			if (i == frames / 2 && epoll_ctl(ep, EPOLL_CTL_DEL, device[0], NULL) < 0)
				fail("epoll_ctl DEL");
			if (epoll_wait(ep, &ev, 1, (int)period_ms) != 0)
				fail("epoll_wait on the empty set");
		} else if (wait_for_device(mode, ep) < 0) {
			fail(mode);
		}
		/* the dequeue: how much is there, then take one frame's 4 bytes
		 * (blocking if not there yet; a late reader finds 8 and leaves 4
		 * for the next frame, so that the last wait has its write) */
		if (ioctl(dequeue_fd, FIONREAD, &n) < 0)
			fail("FIONREAD");
		n = (int)read(dequeue_fd, buf, 4);
		if (n != 4)
			fail("read");
		total += (unsigned)n;
	}
	pthread_join(filler, NULL);
	printf("frames=%u bytes=%llu\n", frames, total);
	return 0;
}
