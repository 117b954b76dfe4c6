/* A stand-in for a vendor encoder's character device, made with CUSE:
 * /dev/plenc with the ioctls of plenc.h.
 *
 *   SUBMIT       starts a frame's "encode" and returns at once;
 *   WAIT_IRQ     blocks until that encode is done: ENCODE_MS after the
 *                SUBMIT, as hardware would interrupt (CLOCK_MONOTONIC);
 *   CACHE_FLUSH  takes a byte count and returns at once.
 *
 * The caller's thread sleeps in the kernel while this server works, as it
 * would in a real driver, so the profiler sees WAIT_IRQ as wall time with
 * almost no CPU. On SIGTERM it prints what it served
 * ("plenc: submits=N waits=N flushes=N flushed_bytes=B"), the device's own
 * account for the scenario to set against the profiler's.
 *
 *   cuse_encoder ENCODE_MS        (runs in the foreground, single-threaded)
 */
#define FUSE_USE_VERSION 31

#include <cuse_lowlevel.h>
#include <fuse_lowlevel.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plenc.h"

struct encoder {
	long encode_ms;
	int busy;			/* a SUBMIT without its WAIT_IRQ yet */
	uint32_t frame;
	struct timespec irq_at;		/* when the busy frame's encode ends */
	uint64_t submits, waits, flushes, flushed_bytes;
};

static struct encoder enc;

static void plenc_open(fuse_req_t req, struct fuse_file_info *fi)
{
	fuse_reply_open(req, fi);
}

static void sleep_until(const struct timespec *t)
{
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR)
		;
}

static void do_submit(fuse_req_t req, const void *in, size_t in_bytes)
{
	struct plenc_submit s;

	if (in_bytes != sizeof(s) || enc.busy) {
		fuse_reply_err(req, enc.busy ? EBUSY : EINVAL);
		return;
	}
	memcpy(&s, in, sizeof(s));
	clock_gettime(CLOCK_MONOTONIC, &enc.irq_at);
	enc.irq_at.tv_nsec += (enc.encode_ms % 1000) * 1000000;
	enc.irq_at.tv_sec += enc.encode_ms / 1000 + enc.irq_at.tv_nsec / 1000000000;
	enc.irq_at.tv_nsec %= 1000000000;
	enc.frame = s.frame;
	enc.busy = 1;
	enc.submits++;
	fuse_reply_ioctl(req, 0, NULL, 0);
}

static void do_wait_irq(fuse_req_t req, size_t out_bytes)
{
	struct plenc_irq irq = { 0 };

	if (out_bytes != sizeof(irq) || !enc.busy) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* Blocking this single-threaded server is the point: the device has
	 * one encoder, and the caller waits for it. */
	sleep_until(&enc.irq_at);
	irq.frame = enc.frame;
	irq.status = 0;
	enc.busy = 0;
	enc.waits++;
	fuse_reply_ioctl(req, 0, &irq, sizeof(irq));
}

static void do_cache_flush(fuse_req_t req, const void *in, size_t in_bytes)
{
	struct plenc_flush f;

	if (in_bytes != sizeof(f)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memcpy(&f, in, sizeof(f));
	if (f.bytes == 0 || f.dir != PLENC_FLUSH_CLEAN) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	enc.flushes++;
	enc.flushed_bytes += f.bytes;
	fuse_reply_ioctl(req, 0, NULL, 0);
}

static void plenc_ioctl(fuse_req_t req, int cmd, void *arg, struct fuse_file_info *fi,
			unsigned flags, const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	(void)arg;
	(void)fi;
	if (flags & FUSE_IOCTL_COMPAT) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	switch ((unsigned)cmd) {
	case PLENC_SUBMIT:
		do_submit(req, in_buf, in_bufsz);
		break;
	case PLENC_WAIT_IRQ:
		do_wait_irq(req, out_bufsz);
		break;
	case PLENC_CACHE_FLUSH:
		do_cache_flush(req, in_buf, in_bufsz);
		break;
	default:
		fuse_reply_err(req, ENOTTY);
	}
}

static void plenc_destroy(void *userdata)
{
	(void)userdata;
	printf("plenc: submits=%" PRIu64 " waits=%" PRIu64 " flushes=%" PRIu64
	       " flushed_bytes=%" PRIu64 "\n",
	       enc.submits, enc.waits, enc.flushes, enc.flushed_bytes);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const char *dev_info[] = { "DEVNAME=plenc" };
	char *fuse_argv[] = { argv[0], "-f", "-s", NULL };
	struct cuse_info ci = {
		.dev_info_argc = 1,
		.dev_info_argv = dev_info,
	};
	struct cuse_lowlevel_ops ops = {
		.open = plenc_open,
		.ioctl = plenc_ioctl,
		.destroy = plenc_destroy,
	};
	char *end;

	if (argc != 2) {
		fprintf(stderr, "usage: cuse_encoder ENCODE_MS\n");
		return 2;
	}
	errno = 0;
	enc.encode_ms = strtol(argv[1], &end, 10);
	if (errno || *end || enc.encode_ms < 0 || enc.encode_ms > 10000) {
		fprintf(stderr, "cuse_encoder: ENCODE_MS must be 0..10000\n");
		return 2;
	}
	return cuse_lowlevel_main(3, fuse_argv, &ci, &ops, NULL);
}
