/* udc_reoffer.c: finding the configfs gadget's UDC file of a functionfs
 * mount from a mountinfo file and a configfs tree made in a scratch
 * directory (the seam: both paths are arguments), and reading and writing
 * the UDC file through one descriptor. */
#include "tap.h"
#include "udc_reoffer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256];

static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void dir(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdir(path, 0755);
}

/* The UDC file found for the mount, and the controller read through it. */
static int find(const char *ffs_rel, char *udc, size_t len, char *file, size_t flen)
{
	char mountinfo[512], configfs[512], ffs[512];
	int err, fd;

	snprintf(mountinfo, sizeof(mountinfo), "%s/mountinfo", root);
	snprintf(configfs, sizeof(configfs), "%s/config", root);
	snprintf(ffs, sizeof(ffs), "%s/%s", root, ffs_rel);
	udc[0] = file[0] = '\0';
	if ((err = pl__udc_file_of_ffs(mountinfo, configfs, ffs, file, flen)) < 0)
		return err;
	if ((fd = open(file, O_RDWR)) < 0)
		return -errno;
	err = pl__udc_read(fd, udc, len);
	close(fd);
	return err;
}

int main(void)
{
	char udc[64], file[512], line[1024], want[512], text[64];
	int err, fd;
	ssize_t n;

	snprintf(root, sizeof(root), "/tmp/pl-udc-XXXXXX");
	if (!mkdtemp(root))
		return 1;
	dir("ffs one");
	dir("plain");
	dir("config");
	dir("config/usb_gadget");
	dir("config/usb_gadget/adb");
	dir("config/usb_gadget/adb/functions");
	dir("config/usb_gadget/adb/functions/ffs.adb");
	put("config/usb_gadget/adb/UDC", "other_udc.0\n");
	dir("config/usb_gadget/cam");
	dir("config/usb_gadget/cam/functions");
	dir("config/usb_gadget/cam/functions/ffs.perflink");
	put("config/usb_gadget/cam/UDC", "dummy_udc.0\n");
	/* the mount point has a space: mountinfo writes it \040 */
	snprintf(line, sizeof(line),
		 "22 1 0:5 / /proc rw,nosuid - proc proc rw\n"
		 "40 22 0:40 / %s/ffs\\040one rw,relatime shared:7 - functionfs perflink rw\n"
		 "41 22 0:41 / %s/plain rw - tmpfs tmpfs rw\n",
		 root, root);
	put("mountinfo", line);

	err = find("ffs one", udc, sizeof(udc), file, sizeof(file));
	snprintf(want, sizeof(want), "%s/config/usb_gadget/cam/UDC", root);
	TAP_EQ_U64(-err, 0, "the mount's source names the instance, and its gadget is found");
	TAP_EQ_STR(udc, "dummy_udc.0", "the UDC it is bound to, without the newline");
	TAP_EQ_STR(file, want, "and the gadget's UDC file (not the other gadget's)");

	TAP_EQ_U64(-find("plain", udc, sizeof(udc), file, sizeof(file)), ENOENT,
		   "a mount that is not functionfs: -ENOENT");
	TAP_EQ_U64(-find("nowhere", udc, sizeof(udc), file, sizeof(file)), ENOENT,
		   "a directory that does not exist: -ENOENT");

	put("config/usb_gadget/cam/UDC", "\n");
	TAP_EQ_U64(-find("ffs one", udc, sizeof(udc), file, sizeof(file)), 0,
		   "a gadget bound to no UDC yet: its file is found all the same (opened at start, "
		   "before the owner binds)");
	TAP_EQ_STR(udc, "", "and reads empty");

	/* a later mount over the same directory is what counts */
	put("config/usb_gadget/cam/UDC", "dummy_udc.0\n");
	snprintf(line, sizeof(line),
		 "40 22 0:40 / %s/ffs\\040one rw - functionfs perflink rw\n"
		 "42 40 0:42 / %s/ffs\\040one rw - tmpfs tmpfs rw\n",
		 root, root);
	put("mountinfo", line);
	TAP_EQ_U64(-find("ffs one", udc, sizeof(udc), file, sizeof(file)), ENOENT,
		   "functionfs mounted over by something else: -ENOENT");

	/* writing the UDC file: empty to unbind, the name to bind */
	snprintf(want, sizeof(want), "%s/config/usb_gadget/cam/UDC", root);
	fd = open(want, O_WRONLY | O_TRUNC); /* a regular file here, not configfs */
	TAP_EQ_U64(-pl__udc_write(fd, NULL), 0, "unbind writes");
	fd = open(want, O_RDONLY), n = read(fd, text, sizeof(text) - 1), close(fd);
	text[n > 0 ? n : 0] = '\0';
	TAP_EQ_STR(text, "\n", "an empty line");
	fd = open(want, O_WRONLY | O_TRUNC); /* a regular file here, not configfs */
	TAP_EQ_U64(-pl__udc_write(fd, "dummy_udc.0"), 0, "bind writes");
	close(fd);
	fd = open(want, O_RDONLY), n = read(fd, text, sizeof(text) - 1), close(fd);
	text[n > 0 ? n : 0] = '\0';
	TAP_EQ_STR(text, "dummy_udc.0\n", "the controller's name");
	TAP_EQ_U64(-pl__udc_write(-1, "x"), EBADF, "a bad fd: -EBADF");

	snprintf(line, sizeof(line), "rm -rf '%s'", root);
	if (system(line) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return tap_done();
}
