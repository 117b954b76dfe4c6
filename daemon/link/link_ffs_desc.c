/* See link_ffs_desc.h. The tables are static const packed structures, built
 * with designated initialisers so each field is named; sizes are pinned with
 * _Static_assert because the kernel parses them byte by byte. Fields are
 * little-endian on the wire: PL_LE16/PL_LE32 are constant expressions (unlike
 * htole32) so they work in static initialisers on big-endian MIPS too. */
#include "link_ffs_desc.h"
#include "usb_identity.h"

#include <linux/usb/ch9.h>
#include <linux/usb/functionfs.h>
#include <stdint.h>

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PL_LE16(x) ((uint16_t)(x))
#define PL_LE32(x) ((uint32_t)(x))
#else
#define PL_LE16(x) __builtin_bswap16((uint16_t)(x))
#define PL_LE32(x) __builtin_bswap32((uint32_t)(x))
#endif

#define EP_IN_ADDR (1 | USB_DIR_IN)
#define EP_OUT_ADDR 2

struct interface_and_endpoints {
	struct usb_interface_descriptor intf;
	struct usb_endpoint_descriptor_no_audio in;
	struct usb_endpoint_descriptor_no_audio out;
} __attribute__((packed));

struct ss_interface_and_endpoints {
	struct usb_interface_descriptor intf;
	struct usb_endpoint_descriptor_no_audio in;
	struct usb_ss_ep_comp_descriptor in_comp;
	struct usb_endpoint_descriptor_no_audio out;
	struct usb_ss_ep_comp_descriptor out_comp;
} __attribute__((packed));

static const struct {
	struct usb_functionfs_descs_head_v2 header;
	uint32_t fs_count, hs_count, ss_count;
	struct interface_and_endpoints fs, hs;
	struct ss_interface_and_endpoints ss;
} __attribute__((packed)) descriptors = {
	.header = {
		.magic = PL_LE32(FUNCTIONFS_DESCRIPTORS_MAGIC_V2),
		.length = PL_LE32(sizeof(descriptors)),
		.flags = PL_LE32(FUNCTIONFS_HAS_FS_DESC | FUNCTIONFS_HAS_HS_DESC |
				 FUNCTIONFS_HAS_SS_DESC),
	},
	.fs_count = PL_LE32(3),
	.hs_count = PL_LE32(3),
	.ss_count = PL_LE32(5),
#define INTERFACE                                                   \
	{                                                           \
		.bLength = USB_DT_INTERFACE_SIZE,                   \
		.bDescriptorType = USB_DT_INTERFACE,                \
		.bInterfaceNumber = 0,                              \
		.bNumEndpoints = 2,                                 \
		.bInterfaceClass = PL_USB_CLASS,                    \
		.bInterfaceSubClass = PL_USB_SUBCLASS,              \
		.bInterfaceProtocol = PL_USB_PROTOCOL,              \
		.iInterface = 1,                                    \
	}
#define ENDPOINT(addr, packet)                                      \
	{                                                           \
		.bLength = USB_DT_ENDPOINT_SIZE,                    \
		.bDescriptorType = USB_DT_ENDPOINT,                 \
		.bEndpointAddress = (addr),                         \
		.bmAttributes = USB_ENDPOINT_XFER_BULK,             \
		.wMaxPacketSize = PL_LE16(packet),                  \
	}
	.fs = {
		.intf = INTERFACE,
		.in = ENDPOINT(EP_IN_ADDR, 64),
		.out = ENDPOINT(EP_OUT_ADDR, 64),
	},
	.hs = {
		.intf = INTERFACE,
		.in = ENDPOINT(EP_IN_ADDR, 512),
		.out = ENDPOINT(EP_OUT_ADDR, 512),
	},
	.ss = {
		.intf = INTERFACE,
		.in = ENDPOINT(EP_IN_ADDR, 1024),
		/* bMaxBurst 15: up to 16 packets per burst, what SuperSpeed
		 * bulk throughput needs */
		.in_comp = {
			.bLength = USB_DT_SS_EP_COMP_SIZE,
			.bDescriptorType = USB_DT_SS_ENDPOINT_COMP,
			.bMaxBurst = 15,
		},
		.out = ENDPOINT(EP_OUT_ADDR, 1024),
		.out_comp = {
			.bLength = USB_DT_SS_EP_COMP_SIZE,
			.bDescriptorType = USB_DT_SS_ENDPOINT_COMP,
			.bMaxBurst = 15,
		},
	},
#undef INTERFACE
#undef ENDPOINT
};

_Static_assert(sizeof(struct usb_functionfs_descs_head_v2) == 12, "V2 header is 12 bytes");
_Static_assert(sizeof(struct usb_endpoint_descriptor_no_audio) == 7, "endpoint is 7 bytes");
_Static_assert(sizeof(struct usb_interface_descriptor) == 9, "interface is 9 bytes");
_Static_assert(sizeof(struct usb_ss_ep_comp_descriptor) == 6, "SS companion is 6 bytes");
_Static_assert(sizeof(descriptors) == 12 + 12 + 2 * (9 + 7 + 7) + (9 + 7 + 6 + 7 + 6),
	       "descriptor blob layout");

static const struct {
	struct usb_functionfs_strings_head header;
	struct {
		uint16_t code;
		char str1[sizeof(PL_USB_INTERFACE_NAME)];
	} __attribute__((packed)) lang0;
} __attribute__((packed)) strings = {
	.header = {
		.magic = PL_LE32(FUNCTIONFS_STRINGS_MAGIC),
		.length = PL_LE32(sizeof(strings)),
		.str_count = PL_LE32(1),
		.lang_count = PL_LE32(1),
	},
	.lang0 = {
		.code = PL_LE16(0x0409), /* en-US */
		.str1 = PL_USB_INTERFACE_NAME,
	},
};

_Static_assert(sizeof(struct usb_functionfs_strings_head) == 16, "strings header is 16 bytes");

const void *pl__ffs_descriptors(size_t *len)
{
	*len = sizeof(descriptors);
	return &descriptors;
}

const void *pl__ffs_strings(size_t *len)
{
	*len = sizeof(strings);
	return &strings;
}
