/* See link_options.h. */
#include "link_options.h"
#include "link.h"
#include "usb_identity.h"

#include <stdlib.h>
#include <string.h>

void pl__link_settings_init(struct pl_link_settings *s)
{
	const struct pl_option table[] = {
		{ "tcp", PL_OPT_STRING, &s->tcp_listen, 0, 0, "HOST:PORT",
		  "use the TCP transport instead of USB: listen on HOST:PORT ([V6]:PORT, "
		  ":PORT for every address) for perflink-host --tcp; without tcp-key-file "
		  "only loopback addresses" },
		{ "tcp-key-file", PL_OPT_STRING, &s->tcp_key_file, 0, 0, "FILE",
		  "pre-shared key (16 to 1024 bytes, mode 0600) every TCP host must prove it "
		  "holds before it gets the stream (docs/wire.md)" },
		{ "tcp-tls-cert", PL_OPT_STRING, &s->tcp_tls_cert, 0, 0, "FILE",
		  "TLS 1.3 on the TCP link with this PEM certificate (and its chain); needs "
		  "tcp-tls-key and tcp-key-file, which still proves the host" },
		{ "tcp-tls-key", PL_OPT_STRING, &s->tcp_tls_key, 0, 0, "FILE",
		  "the certificate's PEM private key (unencrypted, mode 0600)" },
		{ "ffs-dir", PL_OPT_STRING, &s->ffs_dir, 0, 0, "DIR",
		  "the mounted functionfs instance (made there with setup-gadget)" },
		{ "setup-gadget", PL_OPT_BOOL, &s->setup_gadget, 0, 0, NULL,
		  "make the gadget through configfs and bind it to the UDC (otherwise only "
		  "ffs-dir is used, and something else binds the gadget)" },
		{ "vid", PL_OPT_HEX, &s->vendor_id, 0, 0xffff, "ID", "USB vendor id (setup-gadget)" },
		{ "pid", PL_OPT_HEX, &s->product_id, 0, 0xffff, "ID",
		  "USB product id (setup-gadget)" },
		{ "serial", PL_OPT_STRING, &s->serial, 0, 0, "S", "USB serial number (setup-gadget)" },
		{ "udc", PL_OPT_STRING, &s->udc, 0, 0, "NAME",
		  "USB device controller (setup-gadget; default: the first in /sys/class/udc)" },
		{ "write-chunk", PL_OPT_INT, &s->write_chunk, 8192, 16384, "B",
		  "AIO request size: 8192 (no request waits on compaction) or 16384" },
		{ "budget-kib", PL_OPT_INT, &s->budget_kib, 64, 65536, "KIB",
		  "at most this much submitted and not yet completed" },
		{ "deadline", PL_OPT_DOUBLE, &s->deadline_s, 0.1, 3600, "S",
		  "drop and re-arm the gadget when the host takes nothing for this long" },
		{ "queue-kib", PL_OPT_INT, &s->queue_kib, 16, 65536, "KIB",
		  "telemetry waiting for room beyond this is dropped and counted" },
		{ "sync", PL_OPT_BOOL, &s->sync, 0, 0, NULL,
		  "benchmark baseline only: blocking write()s of sync-bytes instead of AIO" },
		{ "sync-bytes", PL_OPT_INT, &s->sync_bytes, 512, 1 << 20, "B",
		  "size of each synchronous write" },
		PL_OPT_END,
	};

	memset(s, 0, sizeof(*s));
	s->ffs_dir = strdup("/dev/ffs-perflink");
	s->vendor_id = PL_USB_VENDOR_ID;
	s->product_id = PL_USB_PRODUCT_ID;
	s->write_chunk = 8192;
	s->budget_kib = 1024;
	s->deadline_s = 2;
	s->queue_kib = 1024;
	s->sync_bytes = 32768;
	s->diag_interval_s = 1;
	_Static_assert(sizeof(table) == sizeof(s->table), "the table fits its array");
	memcpy(s->table, table, sizeof(table));
}

void pl__link_settings_free(struct pl_link_settings *s)
{
	pl__options_free(s->table);
}

const struct pl_option *pl__link_settings_options(struct pl_link_settings *s)
{
	return s->table;
}

void pl__link_settings_apply(const struct pl_link_settings *s, struct pl_link_config *cfg)
{
	cfg->tcp_listen = s->tcp_listen;
	cfg->tcp_key_file = s->tcp_key_file;
	cfg->tcp_tls_cert = s->tcp_tls_cert;
	cfg->tcp_tls_key = s->tcp_tls_key;
	cfg->ffs_dir = s->ffs_dir;
	cfg->setup_gadget = s->setup_gadget;
	cfg->gadget.mount_dir = s->ffs_dir;
	cfg->gadget.mount_options = s->ffs_mount_options;
	cfg->gadget.vendor_id = (unsigned)s->vendor_id;
	cfg->gadget.product_id = (unsigned)s->product_id;
	if (s->serial)
		cfg->gadget.serial = s->serial;
	cfg->gadget.udc = s->udc;
	cfg->chunk_bytes = (size_t)s->write_chunk;
	cfg->budget_bytes = (size_t)s->budget_kib * 1024;
	cfg->deadline_ns = (uint64_t)(s->deadline_s * 1e9);
	cfg->queue_bytes = (size_t)s->queue_kib * 1024;
	cfg->sync_write_bytes = s->sync ? (size_t)s->sync_bytes : 0;
}
