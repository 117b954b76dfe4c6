/* How a host knows a perflink device on USB (docs/wire.md, "USB"): the
 * gadget's interface says class, subclass and protocol below, and the
 * device answers to the vendor and product ids below unless it is set up
 * with others (link-vendor-id, link-product-id; a host is told the same
 * with --vid/--pid). The one place both sides take these from. */
#ifndef PL_COMMON_WIRE_USB_IDENTITY_H
#define PL_COMMON_WIRE_USB_IDENTITY_H

/* The interface: vendor-specific class, 'P' for perflink, version 1. A
 * host matches class and subclass; the ids alone could be any gadget. */
#define PL_USB_CLASS 0xff
#define PL_USB_SUBCLASS 0x50 /* 'P' */
#define PL_USB_PROTOCOL 0x01
#define PL_USB_INTERFACE_NAME "perflink"

/* The default ids: the Linux Foundation's vendor id and its multifunction
 * composite gadget's product id, as the kernel's own gadgets use. */
#define PL_USB_VENDOR_ID 0x1d6b
#define PL_USB_PRODUCT_ID 0x0104

#endif
