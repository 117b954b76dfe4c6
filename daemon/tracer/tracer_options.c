/* The tracer's settings: defaults (the Python tool's where it has them), the
 * option table shared by `perflink trace` and perflinkd's config, and the
 * process priority and CPU affinity the tracer asks for. */
#include "tracer.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

#define DEFAULT_NAMES \
	"controlsd,car.c,selfd,ui,loggerd,encoderd,modeld,camerad,locationd,paramsd,navd,mapd"

void pl__tracer_config_init(struct pl_tracer_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	/* strdup failures leave NULL, which pl__tracer_open reports. */
	cfg->out_path = strdup("/data/media/0/io_trace.csv");
	cfg->hz = 10.0;
	cfg->disks = strdup("sda");
	cfg->names = strdup(DEFAULT_NAMES);
	cfg->events_path = NULL;
	cfg->proc_root = strdup("/proc");
	cfg->blkio_stall_ms = 50;
	cfg->dstate_stall_ms = 100;
	cfg->nice = 10;
	cfg->cpus = strdup("0");
	cfg->enable_delayacct = false;
	cfg->track_writers = true;
	cfg->stat_every_tick = false;
}

void pl__tracer_config_free(struct pl_tracer_config *cfg)
{
	free(cfg->out_path);
	free(cfg->disks);
	free(cfg->names);
	free(cfg->events_path);
	free(cfg->proc_root);
	free(cfg->cpus);
	cfg->out_path = cfg->disks = cfg->names = cfg->events_path = NULL;
	cfg->proc_root = cfg->cpus = NULL;
}

/* One table, rebound to the cfg of the latest call. */
static struct pl_option table[16];

const struct pl_option *pl__tracer_options(struct pl_tracer_config *cfg)
{
	const struct pl_option t[] = {
		{ "out", PL_OPT_STRING, &cfg->out_path, 0, 0, "PATH",
		  "CSV output, in io_stall_tracer.py's layout" },
		{ "hz", PL_OPT_DOUBLE, &cfg->hz, 0.1, 1000, "HZ", "samples per second" },
		{ "disk", PL_OPT_STRING, &cfg->disks, 0, 0, "DEV[,DEV]",
		  "disk devices (names in /proc/diskstats) whose writes and busy time are summed" },
		{ "names", PL_OPT_STRING, &cfg->names, 0, 0, "NAME[,NAME]",
		  "processes to record: substrings of their comm (processes in D state are "
		  "recorded whatever their name)" },
		{ "events", PL_OPT_STRING, &cfg->events_path, 0, 0, "PATH",
		  "stall events, one JSON object a line, after a first \"config\" line "
		  "(default: --out with .csv replaced by .events.jsonl)" },
		{ "proc-root", PL_OPT_STRING, &cfg->proc_root, 0, 0, "DIR",
		  "the /proc to read: a live one, a recorded tree read like /proc each tick, or "
		  "a recording with snapshots 0000/, 0001/, ... replayed one per tick "
		  "(perflink record-proc)" },
		{ "stall-blkio-ms", PL_OPT_DOUBLE, &cfg->blkio_stall_ms, 0, 1e7, "MS",
		  "a watched process stalls when its block-I/O delay in one tick exceeds this" },
		{ "stall-dstate-ms", PL_OPT_DOUBLE, &cfg->dstate_stall_ms, 0, 1e7, "MS",
		  "a watched process stalls when its D-state samples span at least this" },
		{ "nice", PL_OPT_INT, &cfg->nice, -40, 40, "N",
		  "lower the tracer's priority by N, like nice(1); failure is a warning" },
		{ "cpus", PL_OPT_STRING, &cfg->cpus, 0, 0, "LIST",
		  "run the tracer on these CPUs (e.g. 0 or 0-1,3), away from control cores; "
		  "empty leaves the affinity alone; failure is a warning" },
		{ "enable-delayacct", PL_OPT_BOOL, &cfg->enable_delayacct, 0, 0, NULL,
		  "write 1 to kernel.task_delayacct (needs root) and restore it on exit; only "
		  "processes started after that get block-I/O delays" },
		{ "track-writers", PL_OPT_BOOL, &cfg->track_writers, 0, 0, NULL,
		  "read /proc/PID/io of every process that may have written, to name the bully "
		  "in stall events (--track-writers=no reads io only for watched and D-state "
		  "processes)" },
		{ "stat-every-tick", PL_OPT_BOOL, &cfg->stat_every_tick, 0, 0, NULL,
		  "read every /proc/PID/stat each tick as the Python tool does, instead of only "
		  "for processes whose schedstat shows they ran (costs ~5 us a process)" },
		{ "cost-split", PL_OPT_BOOL, &cfg->cost_split, 0, 0, NULL,
		  "time each phase of a tick (system files, processes, output, events) and "
		  "print the split at the end" },
		PL_OPT_END,
	};

	_Static_assert(sizeof(t) <= sizeof(table), "option table too small");
	memcpy(table, t, sizeof(t));
	return table;
}

/* "0", "0-3", "0,2-3": 0 or -EINVAL. */
static int parse_cpus(const char *list, cpu_set_t *set)
{
	const char *p = list;

	CPU_ZERO(set);
	while (*p) {
		char *end;
		unsigned long a, b;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		a = strtoul(p, &end, 10);
		b = a;
		p = end;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				return -EINVAL;
			b = strtoul(p, &end, 10);
			p = end;
		}
		if (b < a || b >= CPU_SETSIZE)
			return -EINVAL;
		for (; a <= b; a++)
			CPU_SET(a, set);
		if (*p == ',')
			p++;
		else if (*p)
			return -EINVAL;
	}
	return CPU_COUNT(set) ? 0 : -EINVAL;
}

int pl__tracer_apply_priority(const struct pl_tracer_config *cfg)
{
	int failed = 0;

	if (cfg->nice) {
		errno = 0;
		if (nice((int)cfg->nice) == -1 && errno) {
			pl__log_warn("cannot change niceness by %ld", cfg->nice);
			failed++;
		}
	}
	if (cfg->cpus && cfg->cpus[0]) {
		cpu_set_t set;

		if (parse_cpus(cfg->cpus, &set) < 0) {
			pl__log_warnx("--cpus: '%s' is not a CPU list such as 0 or 0-1,3; "
				      "affinity left alone",
				      cfg->cpus);
			failed++;
		} else if (sched_setaffinity(0, sizeof(set), &set) != 0) {
			pl__log_warn("cannot run on CPUs %s", cfg->cpus);
			failed++;
		}
	}
	return failed;
}
