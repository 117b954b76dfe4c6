/* `perflink`: the device-side command-line tool. One subcommand per file
 * (cmd_*.c); this file only dispatches, so adding a subcommand touches the
 * table and nothing else. */
#include "cli.h"
#include "pl_config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static const struct pl_cli_command commands[] = {
	{ "trace", "the /proc I/O stall tracer, standalone (drop-in for io_stall_tracer.py)",
	  pl__cmd_trace },
	{ "resources", "the 1 Hz process resource sampler, standalone (resources.jsonl)",
	  pl__cmd_resources },
	{ "compare", "the A/B table of two stage-profiler reports (libperflink-preload.so)",
	  pl__cmd_compare },
	{ "status", "ask a running perflinkd what it is doing", pl__cmd_status },
#ifdef PL_HAVE_LINK
	{ "stream", "send frames over the USB link and measure each reply's round trip",
	  pl__cmd_stream },
	{ "integrity", "the byte-integrity diagnostic over the USB link, under SIGUSR2 storms",
	  pl__cmd_integrity },
#endif
	{ "record-proc", "record /proc snapshots that `perflink trace --proc-root` replays",
	  pl__cmd_record_proc },
	{ NULL, NULL, NULL },
};

static void usage(FILE *out)
{
	const struct pl_cli_command *c;

	fprintf(out, "usage: perflink COMMAND [OPTIONS]\n\n"
		     "perflink %s: see where each frame's time goes on an embedded Linux device.\n\n"
		     "commands:\n", PL_VERSION);
	for (c = commands; c->name; c++)
		fprintf(out, "  %-12s %s\n", c->name, c->summary);
	fprintf(out, "\n'perflink COMMAND --help' describes each command's options.\n");
}

int main(int argc, char **argv)
{
	const struct pl_cli_command *c;

	/* an output past a file size limit fails with EFBIG, ending at its
	 * last whole record, instead of killing the command mid-line */
	signal(SIGXFSZ, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("perflink %s\n", PL_VERSION);
		return 0;
	}
	for (c = commands; c->name; c++) {
		if (strcmp(argv[1], c->name) == 0)
			return c->run(argc - 1, argv + 1);
	}
	fprintf(stderr, "perflink: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
