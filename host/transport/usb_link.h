/* The host end of the USB link: finds the perflink device by its interface
 * (class, subclass: common/wire/usb_identity.h; VID:PID and serial when
 * asked for), claims that interface, keeps depth bulk IN transfers in
 * flight (several, or the bus schedule has gaps: libusb #1077) and sends
 * messages on bulk OUT. It survives unplug and replug: when the device goes
 * away it looks for it again until it is back.
 *
 * Single-threaded: everything happens inside pl__usb_link_poll. */
#ifndef PL_HOST_USB_LINK_H
#define PL_HOST_USB_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pl_usb_link;

struct pl_usb_link_config {
	uint16_t vendor_id, product_id; /* 0: any */
	const char *serial;      /* NULL: any */
	unsigned depth;          /* IN transfers in flight, at least 8 */
	size_t transfer_bytes;   /* each, a multiple of 1024 */
};

struct pl_usb_link_handlers {
	void (*connected)(void *ctx, unsigned packet_size);
	void (*disconnected)(void *ctx);
	void (*data)(void *ctx, const uint8_t *data, size_t len);
};

struct pl_usb_link_stats {
	uint64_t connects, disconnects, transfers, bytes, failed_transfers;
	uint64_t sent_messages, failed_sends;
};

int pl__usb_link_open(struct pl_usb_link **out, const struct pl_usb_link_config *cfg,
		     const struct pl_usb_link_handlers *h, void *ctx);
/* Handle USB events for up to timeout_ms (and look for the device when it
 * is not connected). 0, or a negative errno when libusb itself failed
 * (logged). */
int pl__usb_link_poll(struct pl_usb_link *l, int timeout_ms);
bool pl__usb_link_connected(const struct pl_usb_link *l);
unsigned pl__usb_link_packet_size(const struct pl_usb_link *l);
/* Queue bytes (a whole padded message) on bulk OUT; copied. 0 or -errno. */
int pl__usb_link_send(struct pl_usb_link *l, const void *data, size_t len);
void pl__usb_link_get_stats(const struct pl_usb_link *l, struct pl_usb_link_stats *out);
void pl__usb_link_close(struct pl_usb_link *l);

#endif
