/* `perflink record-proc`: record /proc as snapshots for replay through
 * `perflink trace --proc-root DIR` (see proc_recorder.h). Record to a
 * tmpfs: writing the recording to the disk under test would stall it too. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "options.h"
#include "proc_recorder.h"

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

int pl__cmd_record_proc(int argc, char **argv)
{
	char *out = NULL, *root = NULL;
	double hz = 10, seconds = 10;
	const struct pl_option opts[] = {
		{ "out", PL_OPT_STRING, &out, 0, 0, "DIR",
		  "where the snapshots go (DIR/0000, DIR/0001, ...); best on a tmpfs" },
		{ "hz", PL_OPT_DOUBLE, &hz, 0.1, 1000, "HZ", "snapshots per second" },
		{ "seconds", PL_OPT_DOUBLE, &seconds, 0, 1000, "S",
		  "how long to record (0: until SIGINT or SIGTERM; at most 10000 snapshots)" },
		{ "proc-root", PL_OPT_STRING, &root, 0, 0, "DIR", "the /proc to record" },
		PL_OPT_END,
	};
	struct pl_recorder_config cfg;
	struct pl_recorder_stats st;
	struct sigaction sa;
	char err[PL_ERRBUF];
	int next, rc;

	rc = pl__options_parse_argv(opts, argc, argv, &next, err, sizeof(err));
	if (rc == 1) {
		printf("usage: perflink %s --out DIR [OPTIONS]\n\n"
		       "Records what `perflink trace` reads from /proc, %s snapshots a second, so\n"
		       "that `perflink trace --proc-root DIR` replays it tick by tick.\n\noptions:\n",
		       argv[0], "--hz");
		pl__options_print_help(opts, stdout);
		pl__options_free(opts);
		return 0;
	}
	if (rc < 0 || next < argc || !out) {
		fprintf(stderr, "perflink %s: %s\n", argv[0],
			rc < 0 ? err : !out ? "--out DIR is required" : "unexpected argument");
		pl__options_free(opts);
		return 2;
	}
	pl__log_init("perflink record-proc", true, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	cfg.out_dir = out;
	cfg.proc_root = root ? root : "/proc";
	cfg.hz = hz;
	cfg.seconds = seconds;
	rc = pl__proc_record(&cfg, &stop_requested, &st);
	fprintf(stderr, "perflink %s: %zu snapshots, %zu files, %zu skipped, in %s\n", argv[0],
		st.snapshots, st.files, st.skipped, out);
	pl__options_free(opts);
	return rc < 0 ? 1 : 0;
}
