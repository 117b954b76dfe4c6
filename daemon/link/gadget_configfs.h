/* Setting the USB gadget up through configfs, for devices where nothing else
 * does (on many devices init or a vendor script already made the gadget and
 * mounted functionfs; perflinkd then only needs the mount directory).
 *
 * The steps are those of the kernel's gadget documentation: a gadget
 * directory with ids and strings, one configuration, one FunctionFS function
 * linked into it, the functionfs mount. Binding to a UDC happens separately
 * and only after the function wrote its descriptors: binding earlier fails. */
#ifndef PL_DAEMON_GADGET_CONFIGFS_H
#define PL_DAEMON_GADGET_CONFIGFS_H

#include <stdbool.h>
#include <stddef.h>

struct pl_gadget_config {
	const char *configfs;    /* default /sys/kernel/config */
	const char *name;        /* gadget and function instance name, default "perflink" */
	unsigned vendor_id, product_id;
	const char *manufacturer, *product, *serial;
	const char *mount_dir;   /* where functionfs gets mounted, default /dev/ffs-perflink */
	const char *mount_options; /* functionfs mount data ("uid=65534,gid=65534"), or NULL */
	const char *udc;         /* NULL or "": the first entry of /sys/class/udc */
	unsigned max_power_ma;
};

void pl__gadget_config_default(struct pl_gadget_config *cfg);
/* Create (or reuse) the gadget and mount functionfs. 0 or -errno, logged. */
int pl__gadget_setup(const struct pl_gadget_config *cfg);
/* Write the UDC name (bind) or an empty line (unbind: what the host sees as
 * a cable pull), by path: root's work. 0 or -errno. */
int pl__gadget_bind(const struct pl_gadget_config *cfg, bool bind);
/* The gadget's UDC file opened for writing, and the controller it is to be
 * bound to (cfg->udc, or the first in /sys/class/udc) in udc: for binding
 * and unbinding later through the descriptor (udc_reoffer.h's
 * pl__udc_write), which keeps working once perflinkd runs as its own user.
 * The fd, or -errno (logged). */
int pl__gadget_udc_open(const struct pl_gadget_config *cfg, char *udc, size_t len);
/* Unbind, unmount, remove what pl__gadget_setup made. Best effort. */
void pl__gadget_teardown(const struct pl_gadget_config *cfg);

#endif
