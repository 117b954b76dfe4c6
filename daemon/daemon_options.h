/* perflinkd's settings: one option table serves the config file and the
 * command line. The tracer's and the resource sampler's own options are
 * offered too, prefixed "trace-" and "resources-", from the same tables that
 * `perflink trace` and `perflink resources` use, so the two never drift.
 *
 * Precedence: built-in defaults, then the config file, then the flags. */
#ifndef PL_DAEMON_DAEMON_OPTIONS_H
#define PL_DAEMON_DAEMON_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

#include "options.h"
#include "pl_config.h"
#include "link_options.h"
#include "resources.h"
#include "tracer.h"

#define PL_DAEMON_CONFIG_DEFAULT PL_SYSCONFDIR "/perflink/perflinkd.conf"
/* Where the modules' files go unless configured: the standalone tools
 * write next to the user, a daemon started from / must not. The systemd
 * unit creates it (LogsDirectory=), the init script too. */
#define PL_DAEMON_LOGDIR "/var/log/perflink"

struct pl_daemon_config {
	/* flags only */
	char *config_path;  /* NULL: PL_DAEMON_CONFIG_DEFAULT, which may be missing */
	bool print_version;
	bool print_config;
	/* flags and config keys */
	bool foreground;    /* log to stderr instead of syslog; never forks either way */
	bool verbose;
	char *control_socket;
	char *control_group;
	char *producer_socket; /* "" or NULL: no collector */
	char *pidfile;
	char *user;         /* "" or NULL: keep the identity perflinkd was started with */
	char *record_dir;   /* "" or NULL: no recording on the device */
	bool trace;
	bool resources;
	bool link;
	struct pl_tracer_config tracer;
	struct pl_resources_config res;
	struct pl_link_settings link_cfg;

	/* the tables, bound to the fields above */
	struct pl_option *flags;       /* everything */
	const struct pl_option *keys;  /* the config file's: flags minus the flag-only ones */
	/* the same in three parts, for --help */
	struct pl_option *core_keys, *trace_keys, *res_keys, *link_keys;
};

/* Defaults and tables. 0, or -errno with err filled. */
int pl__daemon_config_init(struct pl_daemon_config *cfg, char *err, size_t errlen);
void pl__daemon_config_free(struct pl_daemon_config *cfg);

/* Flags, then the config file (the default one may be missing, one named
 * with --config may not), then the flags again so that they win.
 * Returns 0 to go on; 1 when --help or --print-config has been answered on
 * stdout (exit 0); -EINVAL or another -errno with err filled (a file error
 * starts with "FILE:LINE: "). */
int pl__daemon_config_parse(struct pl_daemon_config *cfg, int argc, char **argv, char *err,
			    size_t errlen);

void pl__daemon_print_help(const struct pl_daemon_config *cfg, FILE *out);

#endif
