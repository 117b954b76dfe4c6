/* See daemon_options.h. */
#include "daemon_options.h"
#include "control.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The entries before this index are flags only: naming another config file
 * inside a config file, or asking it to print itself, means nothing. */
#define FLAG_ONLY 3

int pl__daemon_config_init(struct pl_daemon_config *cfg, char *err, size_t errlen)
{
	const struct pl_option core[] = {
		{ "config", PL_OPT_STRING, &cfg->config_path, 0, 0, "FILE",
		  "config file (default: " PL_DAEMON_CONFIG_DEFAULT ", may be missing; "
		  "a file named here must exist)" },
		{ "version", PL_OPT_BOOL, &cfg->print_version, 0, 0, NULL,
		  "print the version and exit" },
		{ "print-config", PL_OPT_BOOL, &cfg->print_config, 0, 0, NULL,
		  "print the settings that result from the file and the flags, as a config "
		  "file, and exit" },
		{ "foreground", PL_OPT_BOOL, &cfg->foreground, 0, 0, NULL,
		  "log to stderr instead of syslog (perflinkd never forks either way)" },
		{ "verbose", PL_OPT_BOOL, &cfg->verbose, 0, 0, NULL, "log debug messages too" },
		{ "control-socket", PL_OPT_STRING, &cfg->control_socket, 0, 0, "PATH",
		  "unix socket where `perflink status` asks" },
		{ "control-group", PL_OPT_STRING, &cfg->control_group, 0, 0, "GROUP",
		  "group (name or number) allowed on the control socket, besides root and "
		  "perflinkd's user" },
		{ "producer-socket", PL_OPT_STRING, &cfg->producer_socket, 0, 0, "PATH",
		  "unix socket where producers (libperflink, the preload library) connect; "
		  "their frames and telemetry go over the link (default: \"producers\" next "
		  "to the control socket; \"\" for none)" },
		{ "record-dir", PL_OPT_STRING, &cfg->record_dir, 0, 0, "DIR",
		  "also keep every telemetry line (stalls, resource samples, producers' "
		  "reports, stage events, render windows) in DIR/telemetry/TYPE.jsonl, the "
		  "layout perflink-host --out writes: `perflink-host export` makes a "
		  "timeline of it where no host is attached (made mode 0750 if missing; "
		  "refused if another user's, a link, or writable by others)" },
		{ "pidfile", PL_OPT_STRING, &cfg->pidfile, 0, 0, "PATH",
		  "write the pid here, locked while running (for init scripts without "
		  "start-stop-daemon)" },
		{ "user", PL_OPT_STRING, &cfg->user, 0, 0, "USER",
		  "started as root: once the sockets, pid file and modules are open, run as "
		  "this user (a name, or uid[:gid]) with only the capabilities the modules "
		  "still need; empty (the default): keep the identity perflinkd was started "
		  "with. A gadget bound outside perflinkd needs its functionfs mounted "
		  "uid=/gid= for the user; with link-setup-gadget (and for "
		  "trace-enable-delayacct) a small process stays root to remove the gadget "
		  "(turn delayacct off) once perflinkd has exited" },
		{ "trace", PL_OPT_BOOL, &cfg->trace, 0, 0, NULL,
		  "run the /proc I/O stall tracer (its settings: trace-*)" },
		{ "resources", PL_OPT_BOOL, &cfg->resources, 0, 0, NULL,
		  "run the process resource sampler (its settings: resources-*)" },
		{ "link", PL_OPT_BOOL, &cfg->link, 0, 0, NULL,
		  "run the link to perflink-host (USB: FunctionFS + AIO, or TCP with link-tcp; "
		  "its settings: link-*); "
		  "the tracer's events and the sampler's lines go over it as telemetry" },
		PL_OPT_END,
	};
	const struct pl_option *tables[4];
	const char *const prefixes[4] = { NULL, "trace-", "resources-", "link-" };
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	pl__tracer_config_init(&cfg->tracer);
	pl__resources_config_init(&cfg->res);
	pl__link_settings_init(&cfg->link_cfg);
	cfg->control_socket = strdup(PL_CONTROL_SOCKET_DEFAULT);
	if (!cfg->control_socket) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto fail;
	}
	/* The daemon's own defaults for the modules' output files. */
	free(cfg->tracer.out_path);
	free(cfg->res.out_path);
	cfg->tracer.out_path = strdup(PL_DAEMON_LOGDIR "/io_trace.csv");
	cfg->res.out_path = strdup(PL_DAEMON_LOGDIR "/resources.jsonl");
	if (!cfg->tracer.out_path || !cfg->res.out_path) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto fail;
	}
	tables[0] = core;
	tables[1] = pl__tracer_options(&cfg->tracer);
	tables[2] = pl__resources_options(&cfg->res);
	tables[3] = pl__link_settings_options(&cfg->link_cfg);
	ret = pl__options_merge(&cfg->flags, tables, prefixes, 4, err, errlen);
	if (ret == 0)
		ret = pl__options_merge(&cfg->core_keys, tables, prefixes, 1, err, errlen);
	if (ret == 0)
		ret = pl__options_merge(&cfg->trace_keys, tables + 1, prefixes + 1, 1, err, errlen);
	if (ret == 0)
		ret = pl__options_merge(&cfg->res_keys, tables + 2, prefixes + 2, 1, err, errlen);
	if (ret == 0)
		ret = pl__options_merge(&cfg->link_keys, tables + 3, prefixes + 3, 1, err, errlen);
	if (ret < 0)
		goto fail;
	cfg->keys = cfg->flags + FLAG_ONLY;
	return 0;

fail:
	pl__daemon_config_free(cfg);
	return ret;
}

void pl__daemon_config_free(struct pl_daemon_config *cfg)
{
	/* The tracer's and sampler's strings are theirs to free. */
	free(cfg->config_path);
	free(cfg->control_socket);
	free(cfg->producer_socket);
	free(cfg->control_group);
	free(cfg->pidfile);
	free(cfg->user);
	free(cfg->record_dir);
	cfg->config_path = cfg->control_socket = cfg->producer_socket = cfg->control_group = NULL;
	cfg->pidfile = cfg->user = NULL;
	pl__tracer_config_free(&cfg->tracer);
	pl__resources_config_free(&cfg->res);
	pl__link_settings_free(&cfg->link_cfg);
	pl__options_table_free(cfg->flags);
	pl__options_table_free(cfg->core_keys);
	pl__options_table_free(cfg->trace_keys);
	pl__options_table_free(cfg->res_keys);
	pl__options_table_free(cfg->link_keys);
	cfg->flags = cfg->core_keys = cfg->trace_keys = cfg->res_keys = cfg->link_keys = NULL;
	cfg->keys = NULL;
}

static int parse_flags(struct pl_daemon_config *cfg, int argc, char **argv, char *err,
		       size_t errlen)
{
	int next, ret;

	ret = pl__options_parse_argv(cfg->flags, argc, argv, &next, err, errlen);
	if (ret != 0)
		return ret;
	if (next < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (perflinkd takes only options; "
			 "see --help)", argv[next]);
		return -EINVAL;
	}
	return 0;
}

int pl__daemon_config_parse(struct pl_daemon_config *cfg, int argc, char **argv, char *err,
			    size_t errlen)
{
	char *path;
	int ret;

	/* First pass: learn --config (and refuse a bad flag before reading
	 * anything). The values it sets are set again by the last pass. */
	ret = parse_flags(cfg, argc, argv, err, errlen);
	if (ret == 1) {
		pl__daemon_print_help(cfg, stdout);
		return 1;
	}
	if (ret < 0)
		return ret;
	if (cfg->print_version) {
		printf("perflinkd %s\n", PL_VERSION);
		return 1;
	}
	/* A copy: the last pass replaces cfg->config_path. */
	path = strdup(cfg->config_path ? cfg->config_path : PL_DAEMON_CONFIG_DEFAULT);
	if (!path) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = pl__config_load(cfg->keys, path, err, errlen);
	if (ret == -ENOENT && !cfg->config_path)
		ret = 0;
	if (ret == 0)
		ret = parse_flags(cfg, argc, argv, err, errlen);
	if (ret == 0 && cfg->print_config) {
		printf("# perflinkd %s: settings from %s and the command line\n", PL_VERSION,
		       path);
		ret = pl__options_write_config(cfg->keys, stdout) < 0 ? -EIO : 1;
		if (ret < 0)
			snprintf(err, errlen, "--print-config: cannot write to stdout");
	}
	free(path);
	return ret;
}

void pl__daemon_print_help(const struct pl_daemon_config *cfg, FILE *out)
{
	fprintf(out,
		"usage: perflinkd [OPTIONS]\n"
		"\n"
		"perflinkd %s: the perflink device daemon. It runs the /proc I/O stall tracer,\n"
		"the process resource sampler and the USB link to perflink-host when configured,\n"
		"and answers `perflink status` on its control socket.\n"
		"\n"
		"perflinkd never forks: systemd starts it as Type=notify (READY=1 is sent to\n"
		"$NOTIFY_SOCKET once it is up), an init script puts it in the background\n"
		"(start-stop-daemon --background --make-pidfile, or --pidfile). --foreground only\n"
		"chooses stderr over syslog for its messages.\n"
		"\n"
		"Signals: SIGTERM and SIGINT stop it cleanly (modules closed and their files\n"
		"flushed, control socket removed, exit 0). SIGHUP is logged and ignored: nothing\n"
		"is reloaded, restart perflinkd to apply a changed config file.\n"
		"\n"
		"Every option below but --config, --version and --print-config is also a config\n"
		"file key: `name = value`, without the dashes. The flags override the file;\n"
		"--print-config shows the result. A yes/no option is --name or --name=no.\n"
		"\n"
		"daemon:\n",
		PL_VERSION);
	pl__options_print_help(cfg->core_keys, out);
	fprintf(out, "\nthe I/O stall tracer, with trace = yes (see `perflink trace --help`;\n"
		     "trace-nice and trace-cpus apply to the tracer's thread alone):\n");
	pl__options_print_help(cfg->trace_keys, out);
	fprintf(out, "\nthe resource sampler, with resources = yes (see `perflink resources "
		     "--help`):\n");
	pl__options_print_help(cfg->res_keys, out);
	fprintf(out, "\nthe USB link, with link = yes (docs/wire.md; the host runs perflink-host):\n");
	pl__options_print_help(cfg->link_keys, out);
}
