/* Real ioctls with known kernel behaviour, for the preload tests and the
 * capture demo. No driver has to be loaded; both need Linux 5.0+ (the
 * seccomp listener) and userfaultfd (unprivileged since 5.11 with
 * UFFD_USER_MODE_ONLY, otherwise root or vm.unprivileged_userfaultfd=1).
 *
 * Blocking: SECCOMP_IOCTL_NOTIF_RECV sleeps on a wait queue until another
 *   thread makes a system call that a seccomp filter hands to user space:
 *   like a driver's WAIT_IRQ, its wall time is waiting and it uses almost
 *   no CPU. A "producer" thread raises one such event per period.
 * CPU-bound: UFFDIO_COPY allocates pages and copies bytes into them inside
 *   the kernel, with no sleep in between: like a cache flush over a large
 *   buffer, its wall time is nearly all CPU, in proportion to the bytes.
 *   Its argument carries the byte count (struct uffdio_copy.len), which a
 *   stage file can extract. A range whose second page is already present
 *   copies only the first and fails with EAGAIN (a real retry). */
#ifndef PL_TEST_REAL_IOCTLS_H
#define PL_TEST_REAL_IOCTLS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>

/* musl declares ioctl(int, int, ...): a request above INT_MAX is passed as
 * the int it becomes there, as a program built against musl passes it. */
#ifdef __GLIBC__
#define RT_REQ(r) (r)
#else
#define RT_REQ(r) ((int)(r))
#endif

struct rt_events {
	int listener;        /* the seccomp notification fd: ioctl it to wait */
	pthread_t producer;
	unsigned events;     /* how many events the producer raises */
	unsigned period_us;  /* one every period; 0: one per rt_events_release */
	int setup_error;     /* set by the producer before it publishes */
	int ready_pipe[2];
	int control_pipe[2]; /* 'e': raise an event now, 'q': quit */
	int running;
};

/* Start a producer of events events; 0 or -errno (-ENOSYS etc. when the
 * kernel lacks seccomp listeners). */
int rt_events_start(struct rt_events *e, unsigned events, unsigned period_us);
/* With period 0: raise the next event now. */
void rt_events_release(struct rt_events *e);
/* The wait: NOTIF_RECV (blocks until an event) then NOTIF_SEND to release
 * the producer. 0 or -errno (-EINTR when a signal interrupted it). */
int rt_events_wait(struct rt_events *e);
/* Stops the producer (whatever it is doing), closes the listener, joins. */
void rt_events_stop(struct rt_events *e);

struct rt_copy {
	int uffd;
	char *dst, *src;
	size_t len;
};

/* A userfaultfd over len bytes (a multiple of the page size). 0 or -errno. */
int rt_copy_open(struct rt_copy *c, size_t len);
/* Make the destination absent again, so that a copy has work to do. */
void rt_copy_reset(struct rt_copy *c);
/* An argument for UFFDIO_COPY over the whole range. */
void rt_copy_arg(struct rt_copy *c, struct uffdio_copy *arg);
/* Populate the second page so that a copy over the first two fails with
 * EAGAIN after copying one; fills arg for that copy. */
void rt_copy_arg_partial(struct rt_copy *c, struct uffdio_copy *arg);
void rt_copy_close(struct rt_copy *c);

#endif
