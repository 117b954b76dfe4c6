/* The link's settings as perflinkd offers them (config keys "link-*", flags
 * "--link-*"), and how they become a pl_link_config. */
#ifndef PL_DAEMON_LINK_OPTIONS_H
#define PL_DAEMON_LINK_OPTIONS_H

#include <stdbool.h>

#include "options.h"

struct pl_link_config;

struct pl_link_settings {
	char *tcp_listen;
	char *tcp_key_file;
	char *tcp_tls_cert, *tcp_tls_key;
	char *ffs_dir;
	bool setup_gadget;
	long vendor_id, product_id;
	char *serial, *udc;
	long write_chunk;
	long budget_kib;
	double deadline_s;
	long queue_kib;
	bool sync;
	long sync_bytes;
	double diag_interval_s;
	/* not a setting: what perflinkd mounts functionfs with when it makes
	 * the gadget and then runs as its own user ("uid=U,gid=G"), or NULL */
	const char *ffs_mount_options;
	struct pl_option table[17];
};

void pl__link_settings_init(struct pl_link_settings *s);
void pl__link_settings_free(struct pl_link_settings *s);
/* The table, bound to s, ending in PL_OPT_END. */
const struct pl_option *pl__link_settings_options(struct pl_link_settings *s);
/* Fill cfg (after pl__link_config_default) from s; strings are borrowed. */
void pl__link_settings_apply(const struct pl_link_settings *s, struct pl_link_config *cfg);

#endif
