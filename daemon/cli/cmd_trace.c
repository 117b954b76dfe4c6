/* `perflink trace`: the I/O stall tracer on its own, a drop-in for
 * io_stall_tracer.py (same flags, same CSV) with stall events on the side.
 * Ticks on absolute deadlines, so that a slow tick does not shift the ones
 * after it; SIGINT and SIGTERM end the run after the tick in progress, with
 * the output flushed and a summary on stderr. */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "tracer.h"

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: the sleep must return early with EINTR. */
	if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0)
		return -errno;
	return 0;
}

static void sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = { (time_t)(deadline_ns / 1000000000u),
			       (long)(deadline_ns % 1000000000u) };

	/* EINTR: a stop signal; the caller looks at the flag. */
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static void usage(const char *argv0, const struct pl_option *opts, FILE *out)
{
	fprintf(out,
		"usage: perflink %s [OPTIONS]\n\n"
		"Samples /proc at --hz: per watched process (and any process in D state) the\n"
		"write volume, block-I/O delay and state; disk and memory-mechanism counters.\n"
		"Writes io_stall_tracer.py's CSV to --out and stall events (victim, bully,\n"
		"mechanism) as JSON lines to --events. Runs until SIGINT or SIGTERM.\n\n"
		"options:\n",
		argv0);
	pl__options_print_help(opts, out);
}

static void summary(const struct pl_tracer *t)
{
	struct pl_tracer_stats st;

	pl__tracer_get_stats(t, &st);
	fprintf(stderr,
		"perflink trace: %llu ticks, %llu rows, %llu stall events, %llu processes; "
		"sampler_ms p50 %.3f p99 %.3f max %.3f (tick wall p99 %.3f max %.3f); "
		"io unreadable %llu, read errors %llu, exits %llu, pid reuses %llu; reads: "
		"schedstat %llu stat %llu io %llu wchan %llu, directory scans %llu, "
		"pid probes %llu, full sweeps %llu (for the dirty balance %llu), "
		"kept fds %llu\n",
		(unsigned long long)st.ticks, (unsigned long long)st.rows,
		(unsigned long long)st.stall_events, (unsigned long long)st.processes,
		st.sampler_ms_p50, st.sampler_ms_p99, st.sampler_ms_max, st.tick_wall_ms_p99,
		st.tick_wall_ms_max, (unsigned long long)st.io_denied,
		(unsigned long long)st.read_errors, (unsigned long long)st.exits,
		(unsigned long long)st.pid_reuses, (unsigned long long)st.schedstat_reads,
		(unsigned long long)st.stat_reads, (unsigned long long)st.io_reads,
		(unsigned long long)st.wchan_reads,
		(unsigned long long)st.dir_scans, (unsigned long long)st.probes,
		(unsigned long long)st.full_sweeps,
		(unsigned long long)st.dirty_sweeps,
		(unsigned long long)st.kept_fds);
}

/* --cost-split: where a tick's time went, per tick on average; the bench
 * (bench/tracer_cost.sh) reads these lines. */
static void cost_split(const struct pl_tracer_stats *st)
{
	double ticks = st->cost_ticks ? (double)st->cost_ticks : 1;

	if (!st->cost_split)
		return;
	fprintf(stderr, "perflink trace: cost split, us per tick over %llu ticks: tick CPU %.1f\n",
		(unsigned long long)st->cost_ticks, (double)st->tick_cpu_ns / 1e3 / ticks);
	for (int i = 0; i < PL_TPHASE_N; i++) {
		const struct pl_tracer_phase_cost *c = &st->phase[i];

		fprintf(stderr, "perflink trace: cost %-9s %8.1f us/tick, items %7.2f/tick\n",
			pl__tracer_phase_name(i), (double)c->ns / 1e3 / ticks,
			(double)c->items / ticks);
	}
}

int pl__cmd_trace(int argc, char **argv)
{
	struct pl_tracer_config cfg;
	struct pl_option opts[32];
	const struct pl_option *topts;
	struct pl_tracer *t = NULL;
	char err[PL_ERRBUF];
	double seconds = 0;
	uint64_t deadline, end_ns = 0, interval;
	size_t n = 0;
	int next, rc, status = 0;

	pl__tracer_config_init(&cfg);
	for (topts = pl__tracer_options(&cfg); topts->name && n < 30; topts++)
		opts[n++] = *topts;
	opts[n++] = (struct pl_option){ "seconds", PL_OPT_DOUBLE, &seconds, 0, 1e9, "S",
					"stop after S seconds (0: run until SIGINT or SIGTERM)" };
	opts[n] = (struct pl_option)PL_OPT_END;

	rc = pl__options_parse_argv(opts, argc, argv, &next, err, sizeof(err));
	if (rc == 1) {
		usage(argv[0], opts, stdout);
		pl__tracer_config_free(&cfg);
		return 0;
	}
	if (rc < 0 || next < argc) {
		if (rc < 0)
			fprintf(stderr, "perflink %s: %s\n", argv[0], err);
		else
			fprintf(stderr, "perflink %s: unexpected argument '%s' (see --help)\n",
				argv[0], argv[next]);
		pl__tracer_config_free(&cfg);
		return 2;
	}
	pl__log_init("perflink trace", true, 0);
	pl__tracer_apply_priority(&cfg);
	if (catch_stop_signals() < 0)
		pl__log_warn("cannot catch SIGINT and SIGTERM");
	if (pl__tracer_open(&t, &cfg) < 0) {
		pl__tracer_config_free(&cfg);
		return 1;
	}
	interval = pl__tracer_interval_ns(t);
	deadline = pl__mono_ns();
	if (seconds > 0)
		end_ns = deadline + (uint64_t)(seconds * 1e9);
	while (!stop_requested) {
		uint64_t now;

		rc = pl__tracer_tick(t);
		if (rc == -ENODATA)
			break; /* the recording is over */
		if (rc < 0) {
			status = 1;
			break;
		}
		if (pl__tracer_replaying(t))
			continue;
		deadline += interval;
		now = pl__mono_ns();
		if (end_ns && deadline >= end_ns)
			break;
		/* Late by a whole tick (a stopped process, a suspend): start
		 * again from now rather than run the missed ticks back to back. */
		if (now > deadline + interval)
			deadline = now + interval;
		sleep_until(deadline);
	}
	summary(t);
	{
		struct pl_tracer_stats st;

		pl__tracer_get_stats(t, &st);
		cost_split(&st);
	}
	pl__tracer_close(t);
	pl__tracer_config_free(&cfg);
	return status;
}
