/* See link_ffs.h. */
#include "link_ffs.h"
#include "link_ffs_desc.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <endian.h>
#include <limits.h>
#include <linux/usb/ch9.h>
#include <linux/usb/functionfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct pl_ffs {
	char dir[PATH_MAX];
	int ep0, ep_in, ep_out;
	bool enabled;
	struct pl_ffs_events ev;
	void *ctx;
	struct pl_ffs_counters counters;
};

static int write_all(int fd, const void *buf, size_t len)
{
	ssize_t n;

	do
		n = write(fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static int open_at(const char *dir, const char *name, int flags)
{
	char path[PATH_MAX];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	do
		fd = open(path, flags | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

int pl__ffs_open(struct pl_ffs **out, const char *mount_dir,
		 const struct pl_ffs_events *ev, void *ctx)
{
	struct pl_ffs *f = calloc(1, sizeof(*f));
	const void *blob;
	size_t len;
	int err;

	if (!f)
		return -ENOMEM;
	f->ep0 = f->ep_in = f->ep_out = -1;
	f->ev = *ev;
	f->ctx = ctx;
	if (strlen(mount_dir) >= sizeof(f->dir)) {
		err = -ENAMETOOLONG;
		goto fail;
	}
	strcpy(f->dir, mount_dir);
	f->ep0 = open_at(mount_dir, "ep0", O_RDWR);
	if (f->ep0 < 0) {
		err = f->ep0;
		pl__log_warnc(err, "functionfs: cannot open %s/ep0", mount_dir);
		goto fail;
	}
	blob = pl__ffs_descriptors(&len);
	if ((err = write_all(f->ep0, blob, len)) < 0) {
		pl__log_warnc(err, "functionfs: writing descriptors to %s/ep0", mount_dir);
		goto fail;
	}
	blob = pl__ffs_strings(&len);
	if ((err = write_all(f->ep0, blob, len)) < 0) {
		pl__log_warnc(err, "functionfs: writing strings to %s/ep0", mount_dir);
		goto fail;
	}
	/* ep0 events are read from the event loop: never block it */
	if (fcntl(f->ep0, F_SETFL, fcntl(f->ep0, F_GETFL) | O_NONBLOCK) < 0) {
		err = -errno;
		goto fail;
	}
	*out = f;
	return 0;
fail:
	if (f->ep0 >= 0)
		close(f->ep0);
	free(f);
	return err;
}

int pl__ffs_ep0_fd(const struct pl_ffs *f)
{
	return f->ep0;
}

bool pl__ffs_enabled(const struct pl_ffs *f)
{
	return f->enabled;
}

void pl__ffs_get_counters(const struct pl_ffs *f, struct pl_ffs_counters *out)
{
	*out = f->counters;
}

static void close_endpoints(struct pl_ffs *f, const char *why)
{
	if (f->enabled && f->ev.disable)
		f->ev.disable(f->ctx, why);
	f->enabled = false;
	if (f->ep_in >= 0)
		close(f->ep_in);
	if (f->ep_out >= 0)
		close(f->ep_out);
	f->ep_in = f->ep_out = -1;
}

static void enable(struct pl_ffs *f)
{
	struct usb_endpoint_descriptor desc;
	unsigned packet = 512;

	if (f->enabled)
		close_endpoints(f, "enabled again");
	/* The endpoint files are named in descriptor order: ep1 is bulk IN,
	 * ep2 bulk OUT (link_ffs_desc.c). O_NONBLOCK: I/O submitted to an
	 * endpoint that is not enabled (between an unbind and the DISABLE
	 * event that tells of it) fails with EAGAIN instead of waiting in the
	 * kernel for the next enable, which would stop the event loop that
	 * must read that event (f_fs.c ffs_epfile_wait_ep). I/O on an enabled
	 * endpoint is not changed by it: AIO stays asynchronous, and a
	 * synchronous write still waits for its completion. */
	f->ep_in = open_at(f->dir, "ep1", O_RDWR | O_NONBLOCK);
	f->ep_out = open_at(f->dir, "ep2", O_RDWR | O_NONBLOCK);
	if (f->ep_in < 0 || f->ep_out < 0) {
		pl__log_warnc(f->ep_in < 0 ? f->ep_in : f->ep_out,
			      "functionfs: cannot open endpoints in %s", f->dir);
		close_endpoints(f, "endpoint open failed");
		return;
	}
	/* The active descriptor tells the speed the host chose. */
	memset(&desc, 0, sizeof(desc));
	/* (int): musl's ioctl takes an int request and this one is past
	 * INT_MAX; the kernel reads 32 bits of it with either C library. */
	if (ioctl(f->ep_in, (int)FUNCTIONFS_ENDPOINT_DESC, &desc) == 0 && desc.wMaxPacketSize)
		packet = le16toh(desc.wMaxPacketSize);
	f->enabled = true;
	if (f->ev.enable)
		f->ev.enable(f->ctx, f->ep_in, f->ep_out, packet);
}

/* perflink defines no control requests of its own: stall every SETUP
 * addressed to it. FunctionFS stalls ep0 when the data stage is done in the
 * wrong direction, which is how a gadget says "not supported". */
static void stall_setup(struct pl_ffs *f, const struct usb_ctrlrequest *setup)
{
	char byte;
	ssize_t n;

	if (setup->bRequestType & USB_DIR_IN)
		n = read(f->ep0, &byte, 0);
	else
		n = write(f->ep0, &byte, 0);
	(void)n; /* -EL2HLT is the expected answer: the stall happened */
	f->counters.stalled_setups++;
}

int pl__ffs_handle_ep0(struct pl_ffs *f)
{
	struct usb_functionfs_event events[8];

	for (;;) {
		ssize_t n = read(f->ep0, events, sizeof(events));
		size_t i;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return -errno;
		}
		if (n == 0 || n % sizeof(events[0]) != 0)
			return -EIO;
		for (i = 0; i < (size_t)n / sizeof(events[0]); i++) {
			switch (events[i].type) {
			case FUNCTIONFS_BIND:
				f->counters.binds++;
				break;
			case FUNCTIONFS_UNBIND:
				f->counters.unbinds++;
				close_endpoints(f, "unbind");
				break;
			case FUNCTIONFS_ENABLE:
				f->counters.enables++;
				enable(f);
				break;
			case FUNCTIONFS_DISABLE:
				f->counters.disables++;
				close_endpoints(f, "disable");
				break;
			case FUNCTIONFS_SETUP:
				f->counters.setups++;
				stall_setup(f, &events[i].u.setup);
				break;
			case FUNCTIONFS_SUSPEND:
				f->counters.suspends++;
				break;
			case FUNCTIONFS_RESUME:
				f->counters.resumes++;
				break;
			default:
				f->counters.unknown_events++;
				break;
			}
		}
	}
}

void pl__ffs_drop_endpoints(struct pl_ffs *f, const char *why)
{
	close_endpoints(f, why);
}

void pl__ffs_close(struct pl_ffs *f)
{
	if (!f)
		return;
	close_endpoints(f, "closing");
	if (f->ep0 >= 0)
		close(f->ep0);
	free(f);
}
