/* See gadget_configfs.h. */
#include "gadget_configfs.h"
#include "log.h"
#include "usb_identity.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

void pl__gadget_config_default(struct pl_gadget_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->configfs = "/sys/kernel/config";
	cfg->name = "perflink";
	/* a product sets its own */
	cfg->vendor_id = PL_USB_VENDOR_ID;
	cfg->product_id = PL_USB_PRODUCT_ID;
	cfg->manufacturer = "perflink";
	cfg->product = "perflink device";
	cfg->serial = "0001";
	cfg->mount_dir = "/dev/ffs-perflink";
	cfg->max_power_ma = 100;
}

static int gadget_path(char *out, size_t len, const struct pl_gadget_config *cfg,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int gadget_path(char *out, size_t len, const struct pl_gadget_config *cfg,
		       const char *fmt, ...)
{
	int n = snprintf(out, len, "%s/usb_gadget/%s/", cfg->configfs, cfg->name);
	va_list ap;

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	n += vsnprintf(out + n, len - (size_t)n, fmt, ap);
	va_end(ap);
	return (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int write_file(const char *path, const char *value)
{
	size_t len = strlen(value);
	ssize_t n;
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	do
		n = write(fd, value, len);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static int make_dir(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

#define STEP(expr, what)                                                    \
	do {                                                                \
		int step_err_ = (expr);                                     \
		if (step_err_ < 0) {                                        \
			pl__log_warnc(step_err_, "gadget: %s", what);       \
			return step_err_;                                   \
		}                                                           \
	} while (0)

int pl__gadget_setup(const struct pl_gadget_config *cfg)
{
	char path[PATH_MAX], target[PATH_MAX], value[32];
	struct stat st;

	STEP(gadget_path(path, sizeof(path), cfg, "%s", ""), "path too long");
	STEP(make_dir(path), path);
	STEP(gadget_path(path, sizeof(path), cfg, "idVendor"), "path");
	snprintf(value, sizeof(value), "0x%04x\n", cfg->vendor_id);
	STEP(write_file(path, value), "writing idVendor");
	STEP(gadget_path(path, sizeof(path), cfg, "idProduct"), "path");
	snprintf(value, sizeof(value), "0x%04x\n", cfg->product_id);
	STEP(write_file(path, value), "writing idProduct");
	STEP(gadget_path(path, sizeof(path), cfg, "bcdUSB"), "path");
	STEP(write_file(path, "0x0300\n"), "writing bcdUSB");

	STEP(gadget_path(path, sizeof(path), cfg, "strings/0x409"), "path");
	STEP(make_dir(path), "making strings/0x409");
	STEP(gadget_path(path, sizeof(path), cfg, "strings/0x409/manufacturer"), "path");
	STEP(write_file(path, cfg->manufacturer), "writing manufacturer");
	STEP(gadget_path(path, sizeof(path), cfg, "strings/0x409/product"), "path");
	STEP(write_file(path, cfg->product), "writing product");
	STEP(gadget_path(path, sizeof(path), cfg, "strings/0x409/serialnumber"), "path");
	STEP(write_file(path, cfg->serial), "writing serialnumber");

	STEP(gadget_path(path, sizeof(path), cfg, "configs/c.1"), "path");
	STEP(make_dir(path), "making configs/c.1");
	STEP(gadget_path(path, sizeof(path), cfg, "configs/c.1/MaxPower"), "path");
	snprintf(value, sizeof(value), "%u\n", cfg->max_power_ma);
	STEP(write_file(path, value), "writing MaxPower");

	STEP(gadget_path(path, sizeof(path), cfg, "functions/ffs.%s", cfg->name), "path");
	STEP(make_dir(path), "making the FunctionFS function (is usb_f_fs loaded?)");
	STEP(gadget_path(target, sizeof(target), cfg, "functions/ffs.%s", cfg->name), "path");
	STEP(gadget_path(path, sizeof(path), cfg, "configs/c.1/ffs.%s", cfg->name), "path");
	if (lstat(path, &st) < 0 && symlink(target, path) < 0)
		STEP(-errno, "linking the function into configs/c.1");

	STEP(make_dir(cfg->mount_dir), cfg->mount_dir);
	/* EBUSY: mounted already (by an earlier run). With other options its
	 * files may not be the user's: perflinkd checks them before the drop. */
	if (mount(cfg->name, cfg->mount_dir, "functionfs", 0, cfg->mount_options) < 0 &&
	    errno != EBUSY)
		STEP(-errno, "mounting functionfs");
	return 0;
}

/* The first UDC in /sys/class/udc, for devices with one controller. */
static int first_udc(char *out, size_t len)
{
	DIR *d = opendir("/sys/class/udc");
	struct dirent *e;
	int err = -ENODEV;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(out, len, "%s", e->d_name) < len)
			err = 0;
		break;
	}
	closedir(d);
	return err;
}

/* The controller to bind to: the configured one, or the first there is. */
static int udc_name(const struct pl_gadget_config *cfg, char *udc, size_t len)
{
	int err;

	if (cfg->udc && *cfg->udc) {
		if ((size_t)snprintf(udc, len, "%s", cfg->udc) >= len)
			return -ENAMETOOLONG;
		return 0;
	}
	if ((err = first_udc(udc, len)) < 0)
		pl__log_warnc(err, "gadget: no USB device controller in /sys/class/udc");
	return err;
}

int pl__gadget_udc_open(const struct pl_gadget_config *cfg, char *udc, size_t len)
{
	char path[PATH_MAX];
	int err, fd;

	if ((err = gadget_path(path, sizeof(path), cfg, "UDC")) < 0 ||
	    (err = udc_name(cfg, udc, len)) < 0)
		return err;
	if ((fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		err = -errno;
		pl__log_warnc(err, "gadget: opening %s", path);
		return err;
	}
	return fd;
}

int pl__gadget_bind(const struct pl_gadget_config *cfg, bool bind)
{
	char path[PATH_MAX], udc[128];
	int err;

	if ((err = gadget_path(path, sizeof(path), cfg, "UDC")) < 0)
		return err;
	if (!bind)
		return write_file(path, "\n");
	if ((err = udc_name(cfg, udc, sizeof(udc) - 1)) < 0)
		return err;
	strncat(udc, "\n", sizeof(udc) - strlen(udc) - 1);
	if ((err = write_file(path, udc)) < 0)
		pl__log_warnc(err, "gadget: binding to %s", udc);
	return err;
}

void pl__gadget_teardown(const struct pl_gadget_config *cfg)
{
	char path[PATH_MAX];

	pl__gadget_bind(cfg, false);
	umount2(cfg->mount_dir, MNT_DETACH);
	if (gadget_path(path, sizeof(path), cfg, "configs/c.1/ffs.%s", cfg->name) == 0)
		unlink(path);
	if (gadget_path(path, sizeof(path), cfg, "functions/ffs.%s", cfg->name) == 0)
		rmdir(path);
	if (gadget_path(path, sizeof(path), cfg, "configs/c.1/strings/0x409") == 0)
		rmdir(path);
	if (gadget_path(path, sizeof(path), cfg, "configs/c.1") == 0)
		rmdir(path);
	if (gadget_path(path, sizeof(path), cfg, "strings/0x409") == 0)
		rmdir(path);
	if (gadget_path(path, sizeof(path), cfg, "%s", "") == 0)
		rmdir(path);
}
