/* See usb_link.h. */
#include "usb_link.h"
#include "clock.h"
#include "log.h"
#include "usb_identity.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <libusb.h>
#include <stdlib.h>
#include <string.h>

/* A message to the device that it has not taken in this long is given up
 * (counted in failed_sends): a device that does not read bulk OUT (one
 * without native AIO) must not make the host keep every reply and ping. */
#define OUT_TIMEOUT_MS 10000
/* How long the transfers cancelled at a disconnect may take to come back
 * before the host stops waiting for them. */
#define CANCEL_WAIT_NS (2000ull * 1000 * 1000)

/* One message on its way to the device: the transfer, its bytes, and its
 * place in the list a disconnect cancels. */
struct out_send {
	struct pl_usb_link *l;
	struct libusb_transfer *t;
	struct out_send *next, **link; /* link: the pointer that points here */
	uint8_t data[];
};

struct pl_usb_link {
	struct pl_usb_link_config cfg;
	struct pl_usb_link_handlers h;
	void *ctx;
	libusb_context *usb;
	libusb_device_handle *dev;
	int interface;
	uint8_t ep_in, ep_out;
	unsigned packet_size;
	struct libusb_transfer **in;
	unsigned in_flight;
	unsigned out_flight;
	struct out_send *out; /* the OUT transfers in flight */
	bool lost; /* a transfer said the device is gone */
	/* inside disconnect: what comes back is not sent again, and nothing
	 * new goes out, so that the cancelled transfers can all come back */
	bool closing;
	int wrapped_fd; /* usbfs fd handed to libusb_wrap_sys_device, or -1 */
	struct pl_usb_link_stats stats;
};

static void LIBUSB_CALL in_done(struct libusb_transfer *t);

static bool serial_matches(libusb_device_handle *h, const struct libusb_device_descriptor *d,
			   const char *want)
{
	unsigned char buf[128];
	int n;

	if (!want)
		return true;
	if (!d->iSerialNumber)
		return false;
	n = libusb_get_string_descriptor_ascii(h, d->iSerialNumber, buf, sizeof(buf));
	return n > 0 && strcmp((char *)buf, want) == 0;
}

/* Find our interface and its two bulk endpoints in the active config. */
static int find_interface(struct pl_usb_link *l, libusb_device *dev)
{
	struct libusb_config_descriptor *cfg;
	int i, a, e, found = -1;

	if (libusb_get_active_config_descriptor(dev, &cfg) != 0)
		return -1;
	for (i = 0; i < cfg->bNumInterfaces && found < 0; i++) {
		for (a = 0; a < cfg->interface[i].num_altsetting && found < 0; a++) {
			const struct libusb_interface_descriptor *id = &cfg->interface[i].altsetting[a];

			if (id->bInterfaceClass != PL_USB_CLASS ||
			    id->bInterfaceSubClass != PL_USB_SUBCLASS)
				continue;
			l->ep_in = l->ep_out = 0;
			for (e = 0; e < id->bNumEndpoints; e++) {
				const struct libusb_endpoint_descriptor *ed = &id->endpoint[e];

				if ((ed->bmAttributes & 3) != LIBUSB_TRANSFER_TYPE_BULK)
					continue;
				if (ed->bEndpointAddress & LIBUSB_ENDPOINT_IN) {
					l->ep_in = ed->bEndpointAddress;
					l->packet_size = ed->wMaxPacketSize;
				} else {
					l->ep_out = ed->bEndpointAddress;
				}
			}
			if (l->ep_in && l->ep_out)
				found = id->bInterfaceNumber;
		}
	}
	libusb_free_config_descriptor(cfg);
	return found;
}

static void submit_in(struct pl_usb_link *l, struct libusb_transfer *t)
{
	if (!l->dev || l->lost || l->closing)
		return;
	if (libusb_submit_transfer(t) == 0)
		l->in_flight++;
	else
		l->lost = true;
}

/* The ids asked for, or any (0). */
static bool ids_match(const struct pl_usb_link *l, unsigned vendor, unsigned product)
{
	return (!l->cfg.vendor_id || vendor == l->cfg.vendor_id) &&
	       (!l->cfg.product_id || product == l->cfg.product_id);
}

/* Claim our interface on an open handle. 0, or -1 (handle closed). */
static int claim(struct pl_usb_link *l, libusb_device_handle *h)
{
	libusb_device *dev = libusb_get_device(h);
	struct libusb_device_descriptor d;
	int intf;

	if (libusb_get_device_descriptor(dev, &d) != 0 || !ids_match(l, d.idVendor, d.idProduct))
		goto no;
	intf = find_interface(l, dev);
	if (intf < 0 || !serial_matches(h, &d, l->cfg.serial))
		goto no;
	libusb_set_auto_detach_kernel_driver(h, 1);
	if (libusb_claim_interface(h, intf) != 0) {
		pl__log_warnx("host: device found but its interface is busy (another host?)");
		goto no;
	}
	l->dev = h;
	l->interface = intf;
	l->lost = false;
	return 0;
no:
	libusb_close(h);
	return -1;
}

static int connect_listed(struct pl_usb_link *l)
{
	libusb_device **list;
	ssize_t n = libusb_get_device_list(l->usb, &list);
	ssize_t i;
	int ret = -ENODEV;

	if (n < 0)
		return (int)n;
	for (i = 0; i < n && ret != 0; i++) {
		struct libusb_device_descriptor d;
		libusb_device_handle *h;

		/* find_interface reads what libusb cached: nothing is opened
		 * to know whether the device has a perflink interface */
		if (libusb_get_device_descriptor(list[i], &d) != 0 ||
		    !ids_match(l, d.idVendor, d.idProduct) || find_interface(l, list[i]) < 0)
			continue;
		if (libusb_open(list[i], &h) == 0 && claim(l, h) == 0)
			ret = 0;
	}
	libusb_free_device_list(list, 1);
	return ret;
}

static unsigned read_sysfs_hex(const char *dir, const char *name, int base)
{
	char path[512], buf[32];
	FILE *f;
	unsigned long v = 0;

	snprintf(path, sizeof(path), "/sys/bus/usb/devices/%s/%s", dir, name);
	if (strlen(path) >= sizeof(path) - 1)
		return 0;
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f))
		v = strtoul(buf, NULL, base);
	fclose(f);
	return (unsigned)v;
}

/* A perflink interface among the device's interfaces in sysfs (their
 * directories, NAME:CONFIG.INTERFACE, are in the device's). */
static bool sysfs_has_perflink_interface(const char *dev)
{
	char path[512];
	struct dirent *e;
	bool found = false;
	size_t len = strlen(dev);
	DIR *d;

	snprintf(path, sizeof(path), "/sys/bus/usb/devices/%s", dev);
	if (!(d = opendir(path)))
		return false;
	while (!found && (e = readdir(d))) {
		char sub[512];

		if (strncmp(e->d_name, dev, len) != 0 || e->d_name[len] != ':')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dev, e->d_name);
		found = read_sysfs_hex(sub, "bInterfaceClass", 16) == PL_USB_CLASS &&
			read_sysfs_hex(sub, "bInterfaceSubClass", 16) == PL_USB_SUBCLASS;
	}
	closedir(d);
	return found;
}

/* Debian's libusb learns of new devices from udev; where no udevd runs (an
 * initramfs, a minimal host) its device list never changes after
 * libusb_init. So when the list has no match, look in sysfs ourselves and
 * hand libusb the usbfs node to wrap: no context is ever recreated. */
static int connect_sysfs(struct pl_usb_link *l)
{
	DIR *d = opendir("/sys/bus/usb/devices");
	struct dirent *e;
	int ret = -ENODEV;

	if (!d)
		return -errno;
	while (ret != 0 && (e = readdir(d))) {
		char node[64];
		libusb_device_handle *h;
		int fd;

		if (e->d_name[0] == '.' || strchr(e->d_name, ':'))
			continue;
		if (!ids_match(l, read_sysfs_hex(e->d_name, "idVendor", 16),
			       read_sysfs_hex(e->d_name, "idProduct", 16)) ||
		    !sysfs_has_perflink_interface(e->d_name))
			continue;
		snprintf(node, sizeof(node), "/dev/bus/usb/%03u/%03u",
			 read_sysfs_hex(e->d_name, "busnum", 10),
			 read_sysfs_hex(e->d_name, "devnum", 10));
		fd = open(node, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (libusb_wrap_sys_device(l->usb, (intptr_t)fd, &h) != 0) {
			close(fd);
			continue;
		}
		if (claim(l, h) == 0) {
			l->wrapped_fd = fd;
			ret = 0;
		} else {
			close(fd);
		}
	}
	closedir(d);
	return ret;
}

static int try_connect(struct pl_usb_link *l)
{
	int ret = connect_listed(l);

	if (ret != 0)
		ret = connect_sysfs(l);
	if (ret == 0) {
		unsigned k;

		l->stats.connects++;
		for (k = 0; k < l->cfg.depth; k++) {
			libusb_fill_bulk_transfer(l->in[k], l->dev, l->ep_in, l->in[k]->buffer,
						  (int)l->cfg.transfer_bytes, in_done, l, 0);
			submit_in(l, l->in[k]);
		}
		if (l->h.connected)
			l->h.connected(l->ctx, l->packet_size);
	}
	return ret;
}

static void LIBUSB_CALL in_done(struct libusb_transfer *t)
{
	struct pl_usb_link *l = t->user_data;

	l->in_flight--;
	switch (t->status) {
	case LIBUSB_TRANSFER_COMPLETED:
		l->stats.transfers++;
		l->stats.bytes += (uint64_t)t->actual_length;
		if (t->actual_length > 0 && l->h.data)
			l->h.data(l->ctx, t->buffer, (size_t)t->actual_length);
		submit_in(l, t);
		break;
	case LIBUSB_TRANSFER_CANCELLED:
		break;
	case LIBUSB_TRANSFER_TIMED_OUT:
		submit_in(l, t);
		break;
	default: /* NO_DEVICE, ERROR, STALL, OVERFLOW */
		l->stats.failed_transfers++;
		l->lost = true;
		break;
	}
}

static void LIBUSB_CALL out_done(struct libusb_transfer *t)
{
	struct out_send *os = t->user_data;
	struct pl_usb_link *l = os->l;

	l->out_flight--;
	if (t->status != LIBUSB_TRANSFER_COMPLETED) {
		l->stats.failed_sends++;
		if (t->status == LIBUSB_TRANSFER_NO_DEVICE)
			l->lost = true;
	}
	*os->link = os->next; /* out of the list */
	if (os->next)
		os->next->link = os->link;
	libusb_free_transfer(t);
	free(os);
}

static void disconnect(struct pl_usb_link *l)
{
	uint64_t deadline_ns = pl__mono_ns() + CANCEL_WAIT_NS;
	unsigned k;

	if (!l->dev)
		return;
	l->closing = true;
	/* both directions: a device that does not read bulk OUT would
	 * otherwise keep the host waiting for ever */
	for (k = 0; k < l->cfg.depth; k++)
		libusb_cancel_transfer(l->in[k]);
	for (struct out_send *os = l->out; os; os = os->next)
		libusb_cancel_transfer(os->t);
	/* let the cancelled transfers come back before the handle goes */
	while ((l->in_flight > 0 || l->out_flight > 0) && pl__mono_ns() < deadline_ns) {
		struct timeval tv = { 0, 100000 };

		if (libusb_handle_events_timeout_completed(l->usb, &tv, NULL) < 0)
			break;
	}
	if (l->in_flight > 0 || l->out_flight > 0) {
		/* libusb must not close a handle with transfers on it: the
		 * handle is let go unclosed (a leak, not a crash) */
		pl__log_warnx("host: %u transfers did not come back within 2 s of cancelling "
			      "them; the device's handle is left open",
			      l->in_flight + l->out_flight);
	} else {
		libusb_release_interface(l->dev, l->interface);
		libusb_close(l->dev);
	}
	l->dev = NULL;
	l->closing = false;
	if (l->wrapped_fd >= 0) {
		close(l->wrapped_fd); /* libusb does not close a wrapped fd */
		l->wrapped_fd = -1;
	}
	/* libusb reads a transfer's handle even to log its freeing: a handle
	 * closed under it would be read after it was freed */
	for (k = 0; k < l->cfg.depth; k++)
		l->in[k]->dev_handle = NULL;
	l->stats.disconnects++;
	if (l->h.disconnected)
		l->h.disconnected(l->ctx);
}

int pl__usb_link_open(struct pl_usb_link **out, const struct pl_usb_link_config *cfg,
		     const struct pl_usb_link_handlers *h, void *ctx)
{
	struct pl_usb_link *l = calloc(1, sizeof(*l));
	unsigned k;
	int err;

	if (!l)
		return -ENOMEM;
	l->cfg = *cfg;
	l->wrapped_fd = -1;
	if (l->cfg.depth < 8)
		l->cfg.depth = 8;
	if (l->cfg.transfer_bytes == 0 || l->cfg.transfer_bytes % 1024)
		l->cfg.transfer_bytes = 64 * 1024;
	l->h = *h;
	l->ctx = ctx;
	if ((err = libusb_init(&l->usb)) != 0) {
		pl__log_warnx("host: libusb_init: %s", libusb_error_name(err));
		free(l);
		return -EIO;
	}
	l->in = calloc(l->cfg.depth, sizeof(*l->in));
	if (!l->in)
		goto nomem;
	for (k = 0; k < l->cfg.depth; k++) {
		l->in[k] = libusb_alloc_transfer(0);
		if (!l->in[k])
			goto nomem;
		l->in[k]->buffer = malloc(l->cfg.transfer_bytes);
		if (!l->in[k]->buffer)
			goto nomem;
	}
	*out = l;
	return 0;
nomem:
	pl__usb_link_close(l);
	return -ENOMEM;
}

/* libusb's error codes as the errno they stand for: inside perflink every
 * failure is a negative errno. */
static int errno_of(int libusb_error)
{
	switch (libusb_error) {
	case LIBUSB_ERROR_INVALID_PARAM: return -EINVAL;
	case LIBUSB_ERROR_ACCESS: return -EACCES;
	case LIBUSB_ERROR_NO_DEVICE: return -ENODEV;
	case LIBUSB_ERROR_NOT_FOUND: return -ENOENT;
	case LIBUSB_ERROR_BUSY: return -EBUSY;
	case LIBUSB_ERROR_TIMEOUT: return -ETIMEDOUT;
	case LIBUSB_ERROR_OVERFLOW: return -EOVERFLOW;
	case LIBUSB_ERROR_PIPE: return -EPIPE;
	case LIBUSB_ERROR_INTERRUPTED: return -EINTR;
	case LIBUSB_ERROR_NO_MEM: return -ENOMEM;
	case LIBUSB_ERROR_NOT_SUPPORTED: return -EOPNOTSUPP;
	default: return -EIO;
	}
}

int pl__usb_link_poll(struct pl_usb_link *l, int timeout_ms)
{
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	int err;

	if (!l->dev) {
		if (try_connect(l) != 0) {
			struct timeval nap = tv;

			libusb_handle_events_timeout_completed(l->usb, &nap, NULL);
			return 0;
		}
	}
	err = libusb_handle_events_timeout_completed(l->usb, &tv, NULL);
	if (err < 0 && err != LIBUSB_ERROR_INTERRUPTED) {
		pl__log_warnx("host: libusb: %s", libusb_error_name(err));
		return errno_of(err);
	}
	if (l->lost || (l->dev && l->in_flight == 0))
		disconnect(l);
	return 0;
}

bool pl__usb_link_connected(const struct pl_usb_link *l)
{
	return l->dev != NULL;
}

unsigned pl__usb_link_packet_size(const struct pl_usb_link *l)
{
	return l->packet_size;
}

int pl__usb_link_send(struct pl_usb_link *l, const void *data, size_t len)
{
	struct libusb_transfer *t;
	struct out_send *os;

	if (!l->dev || l->closing)
		return -ENOTCONN;
	t = libusb_alloc_transfer(0);
	os = malloc(sizeof(*os) + len);
	if (!t || !os) {
		libusb_free_transfer(t);
		free(os);
		return -ENOMEM;
	}
	memcpy(os->data, data, len);
	os->l = l;
	os->t = t;
	libusb_fill_bulk_transfer(t, l->dev, l->ep_out, os->data, (int)len, out_done, os,
				  OUT_TIMEOUT_MS);
	/* end the device's read with this message even when it fills its
	 * last packet exactly */
	t->flags |= LIBUSB_TRANSFER_ADD_ZERO_PACKET;
	if (libusb_submit_transfer(t) != 0) {
		libusb_free_transfer(t);
		free(os);
		l->stats.failed_sends++;
		return -EIO;
	}
	os->next = l->out; /* into the list, at its head */
	os->link = &l->out;
	if (l->out)
		l->out->link = &os->next;
	l->out = os;
	l->out_flight++;
	l->stats.sent_messages++;
	return 0;
}

void pl__usb_link_get_stats(const struct pl_usb_link *l, struct pl_usb_link_stats *out)
{
	*out = l->stats;
}

void pl__usb_link_close(struct pl_usb_link *l)
{
	unsigned k;

	if (!l)
		return;
	disconnect(l);
	/* transfers libusb still holds must not be freed under it: at exit a
	 * leak is the safe side */
	if (l->in && l->in_flight == 0) {
		for (k = 0; k < l->cfg.depth; k++) {
			if (l->in[k]) {
				free(l->in[k]->buffer);
				l->in[k]->buffer = NULL;
				libusb_free_transfer(l->in[k]);
			}
		}
		free(l->in);
	}
	libusb_exit(l->usb);
	free(l);
}
