/* Offering a gadget that someone else bound to the host afresh: its
 * configfs UDC file is written empty (unbind) and, a moment later, with the
 * same controller's name again (bind). The host sees the device leave and
 * come back and enumerates it anew, as after a cable pull; perflinkd keeps
 * ep0 open throughout, so the function stays ready for the bind.
 *
 * Why not close ep0 and open it again, as perflinkd does for a gadget it
 * set up itself: when ep0 of a FunctionFS instance in a configfs gadget is
 * closed, the kernel unregisters the gadget from its UDC (f_fs.c
 * ffs_closed), and nothing binds it again. Why not the UDC's soft_connect
 * switch, which leaves the binding alone: on the rig's dummy_hcd (Debian's
 * 6.1) a "disconnect" then "connect" left the device unable to enumerate
 * (descriptor reads failed with EPROTO until the hub gave up).
 *
 * The gadget is the configfs gadget holding this FunctionFS instance: the
 * instance's name is the source of the functionfs mount
 * (/proc/self/mountinfo), its function directory usb_gadget/G/functions/
 * ffs.NAME. */
#ifndef PL_DAEMON_UDC_REOFFER_H
#define PL_DAEMON_UDC_REOFFER_H

#include <stdbool.h>
#include <stddef.h>

/* The UDC file of the configfs gadget holding the functionfs instance
 * mounted at ffs_dir, bound or not, into udc_file. 0, -ENOENT (not a
 * functionfs mount, or no gadget holds the instance) or -errno; nothing
 * logged. perflinkd opens it at start, while it may, and keeps it: writing
 * it needs root, and perflinkd may run as its own user by the time it
 * re-arms (docs/perflinkd.md "Running as its own user"). */
int pl__udc_file_of_ffs(const char *mountinfo, const char *configfs, const char *ffs_dir,
			char *udc_file, size_t len);

/* The controller the gadget is bound to, read through its UDC file's fd
 * into udc ("" when unbound). 0 or -errno. */
int pl__udc_read(int fd, char *udc, size_t len);
/* Bind the gadget whose UDC file is open as fd to udc, or with udc NULL
 * unbind it. 0 or -errno. */
int pl__udc_write(int fd, const char *udc);

#endif
