/* Real blocking and CPU-bound ioctls for the preload tests. */
#include "real_ioctls.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

/* The one system call the filter hands to the listener. */
#define EVENT_SYSCALL SYS_getppid

static int install_filter(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, EVENT_SYSCALL, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };
	int fd;

	/* per thread: the filter and no_new_privs bind only the producer */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			  &prog);
	return fd < 0 ? -errno : fd;
}

static void send_byte(int fd, char c)
{
	while (write(fd, &c, 1) < 0 && errno == EINTR)
		;
}

/* Raise events: each after a period, or when told to; stop when told to. */
static void *producer_main(void *arg)
{
	struct rt_events *e = arg;
	struct timespec period = { e->period_us / 1000000, (long)(e->period_us % 1000000) * 1000 };
	struct pollfd pfd = { e->control_pipe[0], POLLIN, 0 };
	unsigned i;
	int fd = install_filter();

	if (fd < 0)
		e->setup_error = fd;
	else
		e->listener = fd;
	send_byte(e->ready_pipe[1], 1);
	if (fd < 0)
		return NULL;
	for (i = 0; i < e->events; i++) {
		int n = ppoll(&pfd, 1, e->period_us ? &period : NULL, NULL);

		if (n < 0 && errno == EINTR) {
			i--;
			continue;
		}
		if (n > 0) {
			char c = 0;

			if (read(e->control_pipe[0], &c, 1) != 1 || c == 'q')
				break;
		}
		/* blocks until the waiter answers; fails once the listener is closed */
		if (syscall(EVENT_SYSCALL) < 0 && errno == ENOSYS)
			break;
	}
	return NULL;
}

int rt_events_start(struct rt_events *e, unsigned events, unsigned period_us)
{
	char one;
	int r;

	memset(e, 0, sizeof(*e));
	e->listener = -1;
	e->events = events;
	e->period_us = period_us;
	if (pipe2(e->ready_pipe, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(e->control_pipe, O_CLOEXEC) < 0) {
		r = -errno;
		close(e->ready_pipe[0]);
		close(e->ready_pipe[1]);
		return r;
	}
	r = pthread_create(&e->producer, NULL, producer_main, e);
	if (r != 0) {
		rt_events_stop(e);
		return -r;
	}
	e->running = 1;
	while (read(e->ready_pipe[0], &one, 1) < 0 && errno == EINTR)
		;
	if (e->setup_error) {
		r = e->setup_error;
		rt_events_stop(e);
		return r;
	}
	return 0;
}

void rt_events_release(struct rt_events *e)
{
	send_byte(e->control_pipe[1], 'e');
}

int rt_events_wait(struct rt_events *e)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	memset(&req, 0, sizeof(req)); /* the kernel insists */
	if (ioctl(e->listener, RT_REQ(SECCOMP_IOCTL_NOTIF_RECV), &req) < 0)
		return -errno;
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	if (ioctl(e->listener, RT_REQ(SECCOMP_IOCTL_NOTIF_SEND), &resp) < 0)
		return -errno;
	return 0;
}

void rt_events_stop(struct rt_events *e)
{
	if (e->running) {
		send_byte(e->control_pipe[1], 'q');
		/* a producer blocked in its event is released by the close */
		if (e->listener >= 0)
			close(e->listener);
		e->listener = -1;
		pthread_join(e->producer, NULL);
		e->running = 0;
	}
	if (e->listener >= 0)
		close(e->listener);
	e->listener = -1;
	close(e->ready_pipe[0]);
	close(e->ready_pipe[1]);
	close(e->control_pipe[0]);
	close(e->control_pipe[1]);
	e->ready_pipe[0] = e->ready_pipe[1] = e->control_pipe[0] = e->control_pipe[1] = -1;
}

int rt_copy_open(struct rt_copy *c, size_t len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	int e;

	memset(c, 0, sizeof(*c));
	c->len = len;
	c->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	if (c->uffd < 0 && errno == EINVAL) /* kernels before 5.11 */
		c->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (c->uffd < 0)
		return -errno;
	if (ioctl(c->uffd, RT_REQ(UFFDIO_API), &api) < 0)
		goto fail;
	c->dst = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c->src = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->dst == MAP_FAILED || c->src == MAP_FAILED)
		goto fail;
	memset(c->src, 0x5a, len);
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)c->dst;
	reg.range.len = len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(c->uffd, RT_REQ(UFFDIO_REGISTER), &reg) < 0)
		goto fail;
	return 0;
fail:
	e = errno;
	rt_copy_close(c);
	return -e;
}

void rt_copy_reset(struct rt_copy *c)
{
	madvise(c->dst, c->len, MADV_DONTNEED);
}

void rt_copy_arg(struct rt_copy *c, struct uffdio_copy *arg)
{
	memset(arg, 0, sizeof(*arg));
	arg->dst = (uintptr_t)c->dst;
	arg->src = (uintptr_t)c->src;
	arg->len = c->len;
}

void rt_copy_arg_partial(struct rt_copy *c, struct uffdio_copy *arg)
{
	long page = sysconf(_SC_PAGESIZE);
	struct uffdio_zeropage zero;

	/* ZEROPAGE, not COPY, fills the second page: the stage under test
	 * counts only the copy that is meant to fail */
	rt_copy_reset(c);
	memset(&zero, 0, sizeof(zero));
	zero.range.start = (uintptr_t)c->dst + (uintptr_t)page;
	zero.range.len = (uint64_t)page;
	ioctl(c->uffd, RT_REQ(UFFDIO_ZEROPAGE), &zero);
	memset(arg, 0, sizeof(*arg));
	arg->dst = (uintptr_t)c->dst;
	arg->src = (uintptr_t)c->src;
	arg->len = 2 * (uint64_t)page;
}

void rt_copy_close(struct rt_copy *c)
{
	if (c->dst && c->dst != MAP_FAILED)
		munmap(c->dst, c->len);
	if (c->src && c->src != MAP_FAILED)
		munmap(c->src, c->len);
	if (c->uffd >= 0)
		close(c->uffd);
	memset(c, 0, sizeof(*c));
	c->uffd = -1;
}
