/* The /proc I/O stall tracer: io_stall_tracer.py in C, made cheap.
 *
 * One pl_tracer samples /proc (or a recorded tree) once per tick and writes
 * the Python tool's CSV rows, stall events as JSON lines, and per-tick cost.
 * It is driven from outside: `perflink trace` runs its own timer loop,
 * perflinkd calls pl__tracer_tick from its event loop's timerfd.
 *
 * Not thread-safe: one thread owns a tracer. */
#ifndef PL_DAEMON_TRACER_H
#define PL_DAEMON_TRACER_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"

struct pl_tracer;

/* Settings; pl__tracer_config_init fills the defaults. Strings are owned
 * (malloc-ed) so that the option table can replace them. */
struct pl_tracer_config {
	char *out_path;     /* --out: the CSV */
	double hz;          /* --hz, default 10 */
	char *disks;        /* --disk: comma-separated */
	char *names;        /* --names: comm substrings to watch */
	char *events_path;  /* --events: stall events, one JSON object a line */
	char *proc_root;    /* --proc-root: a live or recorded /proc tree */
	/* further fields are the tracer's own (thresholds, priority, ...) */
	double blkio_stall_ms;  /* --stall-blkio-ms: block-I/O delay in one tick */
	double dstate_stall_ms; /* --stall-dstate-ms: continuous D state */
	long nice;              /* --nice: niceness increment, like os.nice() */
	char *cpus;             /* --cpus: CPU list such as "0" or "0-1,3" */
	bool enable_delayacct;  /* --enable-delayacct: write 1, restore at close */
	/* --track-writers: read /proc/PID/io of every process whose io may have
	 * changed, so that stall events can name the bully. */
	bool track_writers;
	/* --stat-every-tick: read every /proc/PID/stat each tick, as the Python
	 * tool does, instead of only those whose schedstat says they ran. */
	bool stat_every_tick;
	/* /proc descriptors kept open at most; 0: all the process may keep
	 * (common/fd_budget.h). perflinkd gives a share when the resource
	 * sampler keeps some too. */
	long fd_budget;
	/* --cost-split: time each phase of the tick (pl_tracer_stats.phase),
	 * a clock read between phases. */
	bool cost_split;
	/* Called with each stall event's JSON line (ending in '\n'), for
	 * perflinkd to forward; may be NULL. */
	void (*on_event)(void *ctx, const char *json_line);
	void *on_event_ctx;
};

/* The phases of a tick that --cost-split times. */
enum pl_tracer_phase {
	PL_TPHASE_SYSTEM,    /* the system files; items: ticks */
	PL_TPHASE_PROCESSES, /* the process table; items: processes read */
	PL_TPHASE_OUTPUT,    /* CSV rows and the flush; items: ticks */
	PL_TPHASE_EVENTS,    /* stall detection and its events; items: ticks */
	PL_TPHASE_N
};
/* Summed over the run: wall-clock (monotonic) ns, so a preempted tick
 * counts the time it waited. */
struct pl_tracer_phase_cost {
	uint64_t ns, items;
};

struct pl_tracer_stats {
	uint64_t ticks;
	uint64_t rows;          /* CSV rows written, SYS rows included */
	uint64_t stall_events;
	uint64_t processes;     /* processes seen in the last tick */
	/* sampler_ms: the tick's own CPU time (its cost); tick_wall_ms: its
	 * wall-clock length, which also counts preemption. */
	double sampler_ms_last, sampler_ms_p50, sampler_ms_p99, sampler_ms_max;
	double tick_wall_ms_p50, tick_wall_ms_p99, tick_wall_ms_max;
	uint64_t read_errors;   /* files that vanished or failed mid-read */
	uint64_t io_denied;     /* /proc/PID/io reads refused (EACCES, EPERM) */
	uint64_t pid_reuses;    /* a pid seen again with another starttime */
	uint64_t exits;         /* processes that went away */
	uint64_t stat_reads, io_reads, schedstat_reads, dir_scans;
	uint64_t wchan_reads;   /* victims' wchans read */
	uint64_t full_sweeps;   /* ticks that read the sleeping processes too */
	uint64_t dirty_sweeps;  /* of them, those the dirty balance called for */
	uint64_t probes;        /* ticks that looked new pids up instead of a scan */
	uint64_t kept_fds;      /* fds kept open now */
	uint64_t fd_budget;     /* kept at most */
	/* --cost-split, over the ticks after the first (which reads every
	 * process): each phase, and the ticks' CPU time. */
	bool cost_split;
	struct pl_tracer_phase_cost phase[PL_TPHASE_N];
	uint64_t cost_ticks, tick_cpu_ns;
};

void pl__tracer_config_init(struct pl_tracer_config *cfg);
void pl__tracer_config_free(struct pl_tracer_config *cfg);
/* The options `perflink trace` takes, bound to cfg, ending in PL_OPT_END.
 * perflinkd offers the same ones as config keys prefixed with "trace-". */
const struct pl_option *pl__tracer_options(struct pl_tracer_config *cfg);

/* Lower this process's priority by cfg->nice and pin it to cfg->cpus.
 * Failures are warnings: returns the number of settings that could not be
 * applied. Separate from pl__tracer_open because in perflinkd it would move
 * the whole daemon. */
int pl__tracer_apply_priority(const struct pl_tracer_config *cfg);

/* 0 or -errno; on failure a message has been logged. */
int pl__tracer_open(struct pl_tracer **out, const struct pl_tracer_config *cfg);
/* Take one sample. 0, or -errno for a failure that should stop the tracer
 * (an unwritable output); a vanished process is not a failure. In replay mode
 * (a recorded sequence under --proc-root), -ENODATA after the last tick. */
int pl__tracer_tick(struct pl_tracer *t);
uint64_t pl__tracer_interval_ns(const struct pl_tracer *t);
/* True when replaying a recorded sequence: ticks need not wait for time. */
bool pl__tracer_replaying(const struct pl_tracer *t);
/* "system", "processes", ...: a phase's name in the cost split. */
const char *pl__tracer_phase_name(enum pl_tracer_phase ph);
void pl__tracer_get_stats(const struct pl_tracer *t, struct pl_tracer_stats *out);
void pl__tracer_close(struct pl_tracer *t);
/* When the tracer turned kernel.task_delayacct on (enable-delayacct), which
 * only root may turn back off: that sysctl opened for writing, for whoever
 * will do it instead (perflinkd's root cleanup process, when it runs as its
 * own user), and the tracer no longer tries at close. -1 when there is
 * nothing to turn off, or -errno. */
int pl__tracer_hand_over_delayacct(struct pl_tracer *t);
/* Whether the tracer turned kernel.task_delayacct on and will try to turn
 * it off at close (not handed over). */
bool pl__tracer_turned_delayacct_on(const struct pl_tracer *t);

#endif
