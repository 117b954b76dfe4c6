/* perflinkd: the device-side daemon. main() is the whole lifecycle: settings,
 * then what needs privilege (pid file, control socket, the modules' /proc
 * handles and output files), then, with `user` set, the drop to that user
 * with only the capabilities still needed, then one event loop until SIGTERM
 * or SIGINT, then a clean shutdown. It never forks (see --help).
 *
 * The modules (the I/O stall tracer, the resource sampler) read other
 * processes' /proc, which can block on a target's locks: each runs on a
 * thread of its own (worker.h) at its own interval, and hands its lines to
 * the loop, which only moves frames, replies and messages. A module whose
 * tick fails is closed and reported in `perflink status`; the daemon keeps
 * running. With link = yes their lines also go to the host over the link,
 * as telemetry. */
#include "collector.h"
#include "control.h"
#include "daemon_link.h"
#include "daemon_options.h"
#include "event_loop.h"
#include "fd_budget.h"
#include "notify.h"
#include "pidfile.h"
#include "privilege_drop.h"
#include "recorder.h"
#include "root_cleanup.h"
#include "worker.h"

#include "clock.h"
#include "json_writer.h"
#include "log.h"
#include "payload_hash.h"
#include "proc_parse.h"
#include "procfile.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* What status reports about one module, kept after the module stops. */
struct module {
	const char *name;
	bool enabled;
	bool running;
	const char *state; /* "off", "running", "stopped" (failed), "finished" */
	int error;         /* the -errno that stopped it */
	uint64_t interval_ns;
	uint64_t forwarded;  /* stall events or resource lines handed on */
	struct pl_worker *worker;
	struct pl_worker_stats last; /* the worker's when it stopped */
};

struct daemon {
	struct pl_daemon_config cfg;
	struct pl_loop *loop;
	struct pl_control *control;
	struct pl_pidfile pidfile;
	struct pl_tracer *tracer;
	struct pl_resources *res;
	/* the modules' stats as of their last tick, under stats_lock: the
	 * workers write them, the status reads them */
	pthread_mutex_t stats_lock;
	struct pl_tracer_stats tracer_last;
	struct pl_resources_stats res_last;
	struct module trace_m, res_m;
	struct pl_daemon_link *link;
	struct pl_collector *collector;
	uint64_t producer_lines, producer_frames_without_link, replies_unrouted;
	/* replies_unrouted by reason: the frame's producer is not there, its
	 * reply ring was full, or the reply can never fit that ring */
	uint64_t replies_no_producer, replies_ring_full, replies_too_big;
	struct pl_procfile statm; /* our own RSS */
	uint64_t start_ns;
	struct pl_privilege_user user; /* spec NULL: `user` unset */
	char ffs_mount_options[48];    /* uid= and gid= of the user, for a gadget we make */
	pid_t root_cleanup_pid;        /* 0: no root cleanup process */
	int root_cleanup_fd;           /* its pipe, held until perflinkd exits */
	struct pl_recorder recorder;   /* record-dir */
};

/* On a module's thread: its line is queued for the loop's. */
static void on_stall_event(void *ctx, const char *json_line)
{
	struct daemon *d = ctx;

	pl__worker_put(d->trace_m.worker, json_line, strlen(json_line));
}

static void on_resource_line(void *ctx, const char *json_line)
{
	struct daemon *d = ctx;

	pl__worker_put(d->res_m.worker, json_line, strlen(json_line));
}

/* On the loop's thread: to the recording, and to the host when the link
 * runs (pl__daemon_link_telemetry counts what it cannot send). */
static void forward_line(struct daemon *d, struct module *m, const char *line, size_t len)
{
	m->forwarded++;
	pl__recorder_line(&d->recorder, line, len);
	if (d->link)
		pl__daemon_link_telemetry(d->link, line);
}

static void on_tracer_line(void *ctx, const char *line, size_t len)
{
	struct daemon *d = ctx;

	forward_line(d, &d->trace_m, line, len);
}

static void on_resources_line(void *ctx, const char *line, size_t len)
{
	struct daemon *d = ctx;

	forward_line(d, &d->res_m, line, len);
}

/* What producers hand to the collector: frames and lines to the host. */
static int on_producer_frame(void *ctx, uint64_t frame_id, const void *data, size_t len,
			     const uint64_t *payload_xxh3)
{
	struct daemon *d = ctx;

	if (!d->link) {
		d->producer_frames_without_link++;
		return -ENOTCONN;
	}
	return pl__daemon_link_frame(d->link, frame_id, data, len, payload_xxh3);
}

/* Producers that keep every frame wait for room; without a link there is
 * nothing to wait for (their frames are counted as not sent). */
static bool on_producer_frame_fits(void *ctx, size_t len)
{
	struct daemon *d = ctx;

	return !d->link || pl__daemon_link_frame_fits(d->link, len);
}

static void on_link_room(void *ctx)
{
	struct daemon *d = ctx;

	if (d->collector)
		pl__collector_writable(d->collector);
}

static void on_producer_line(void *ctx, const char *line, size_t len)
{
	struct daemon *d = ctx;

	d->producer_lines++;
	pl__recorder_line(&d->recorder, line, len);
	if (d->link)
		pl__daemon_link_telemetry(d->link, line);
}

static void on_host_reply(void *ctx, uint64_t frame_id, const uint8_t *payload, size_t len)
{
	struct daemon *d = ctx;

	int ret = d->collector ? pl__collector_reply(d->collector, frame_id, payload, len) : -ENOENT;

	if (ret == 0)
		return;
	d->replies_unrouted++;
	if (ret == -ENOSPC)
		d->replies_ring_full++;
	else if (ret == -EMSGSIZE)
		d->replies_too_big++;
	else
		d->replies_no_producer++;
}

static void on_link_frames_lost(void *ctx, const uint64_t *frame_ids, size_t n)
{
	struct daemon *d = ctx;

	if (d->collector)
		pl__collector_frames_lost(d->collector, frame_ids, n);
}

static void module_stopped(struct module *m, int ret)
{
	pl__worker_get_stats(m->worker, &m->last);
	pl__worker_free(m->worker);
	m->worker = NULL;
	m->running = false;
	if (ret == -ENODATA) {
		m->state = "finished";
		pl__log_info("%s: the recorded /proc sequence is finished", m->name);
	} else {
		m->state = "stopped";
		m->error = ret;
		pl__log_warnc(ret, "%s: stopped, perflinkd keeps running without it", m->name);
	}
}

/* On the tracer's thread: trace-nice and trace-cpus move it alone. */
static void tracer_start(void *ctx)
{
	struct daemon *d = ctx;

	pl__tracer_apply_priority(&d->cfg.tracer);
}

static int tracer_tick(void *ctx)
{
	struct daemon *d = ctx;
	int ret = pl__tracer_tick(d->tracer);

	pthread_mutex_lock(&d->stats_lock);
	pl__tracer_get_stats(d->tracer, &d->tracer_last);
	pthread_mutex_unlock(&d->stats_lock);
	return ret;
}

static void tracer_done(void *ctx, int ret)
{
	struct daemon *d = ctx;

	pl__tracer_close(d->tracer);
	d->tracer = NULL;
	module_stopped(&d->trace_m, ret);
}

/* On the resource sampler's thread. */
static int resources_tick(void *ctx)
{
	struct daemon *d = ctx;
	int ret = pl__resources_tick(d->res);

	pthread_mutex_lock(&d->stats_lock);
	pl__resources_get_stats(d->res, &d->res_last);
	pthread_mutex_unlock(&d->stats_lock);
	return ret;
}

static void resources_done(void *ctx, int ret)
{
	struct daemon *d = ctx;

	pl__resources_close(d->res);
	d->res = NULL;
	module_stopped(&d->res_m, ret);
}

/* A module's lines wait here for the loop at most: stall events and
 * resource lines of a few seconds. */
#define MODULE_QUEUE_BYTES (1u << 20)

static int new_worker(struct daemon *d, struct module *m, uint64_t interval_ns,
		      const struct pl_worker_ops *ops)
{
	int ret = pl__worker_new(d->loop, m->name, interval_ns, MODULE_QUEUE_BYTES, ops, d,
				 &m->worker);

	if (ret < 0) {
		pl__log_warnc(ret, "%s: thread", m->name);
		return ret;
	}
	m->interval_ns = interval_ns ? interval_ns : 1000000000u;
	m->running = true;
	m->state = "running";
	return 0;
}

/* Once perflinkd runs as it will (its user, its capabilities): a thread
 * takes the credentials of the process as they are when it starts. */
static int start_workers(struct daemon *d)
{
	struct module *ms[] = { &d->trace_m, &d->res_m };

	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		int ret = ms[i]->worker ? pl__worker_start(ms[i]->worker) : 0;

		if (ret < 0) {
			pl__log_warnc(ret, "%s: cannot start its thread", ms[i]->name);
			return ret;
		}
	}
	return 0;
}

/* A module that cannot start is a configuration the user has to fix: refuse
 * to start rather than run without it unnoticed. */
static int start_modules(struct daemon *d)
{
	int ret;

	/* Both keep /proc descriptors: one budget for the daemon, split, so
	 * that together they leave the rest of it (producers, the control
	 * socket, the link) the descriptors it needs. */
	if (d->cfg.trace && d->cfg.resources) {
		long all = pl__fd_budget();

		d->cfg.tracer.fd_budget = all * 2 / 3 > 0 ? all * 2 / 3 : 1;
		d->cfg.res.fd_budget = all / 3 > 0 ? all / 3 : 1;
	}

	d->trace_m = (struct module){ .name = "tracer", .enabled = d->cfg.trace, .state = "off" };
	d->res_m = (struct module){ .name = "resources", .enabled = d->cfg.resources,
				    .state = "off" };
	if (d->cfg.trace) {
		d->cfg.tracer.on_event = on_stall_event;
		d->cfg.tracer.on_event_ctx = d;
		static const struct pl_worker_ops ops = { tracer_start, tracer_tick,
							  on_tracer_line, tracer_done };

		ret = pl__tracer_open(&d->tracer, &d->cfg.tracer);
		if (ret < 0)
			return ret;
		pl__tracer_get_stats(d->tracer, &d->tracer_last);
		ret = new_worker(d, &d->trace_m, pl__tracer_interval_ns(d->tracer), &ops);
		if (ret < 0)
			return ret;
	}
	if (d->cfg.resources) {
		d->cfg.res.on_line = on_resource_line;
		d->cfg.res.on_line_ctx = d;
		static const struct pl_worker_ops ops = { NULL, resources_tick,
							  on_resources_line, resources_done };

		ret = pl__resources_open(&d->res, &d->cfg.res);
		if (ret < 0)
			return ret;
		pl__resources_get_stats(d->res, &d->res_last);
		ret = new_worker(d, &d->res_m, pl__resources_interval_ns(d->res), &ops);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static void stop_modules(struct daemon *d)
{
	/* the threads first: they tick the modules */
	pl__worker_free(d->trace_m.worker);
	pl__worker_free(d->res_m.worker);
	d->trace_m.worker = d->res_m.worker = NULL;
	/* Closing flushes their output files. */
	if (d->tracer)
		pl__tracer_close(d->tracer);
	if (d->res)
		pl__resources_close(d->res);
	d->tracer = NULL;
	d->res = NULL;
}

static void json_module(struct pl_json *j, const struct module *m)
{
	pl__json_bool(j, "enabled", m->enabled);
	pl__json_bool(j, "running", m->running);
	pl__json_str(j, "state", m->state);
	if (m->error)
		pl__json_str(j, "error", strerror(-m->error));
	else
		pl__json_null(j, "error");
	struct pl_worker_stats w = m->last;

	if (m->worker)
		pl__worker_get_stats(m->worker, &w);
	pl__json_double(j, "interval_ms", (double)m->interval_ns / 1e6, 3);
	pl__json_u64(j, "late_ticks", w.late_ticks);
	pl__json_u64(j, "forwarded", m->forwarded);
	pl__json_u64(j, "lines_dropped", w.lines_dropped);
}

static void json_tracer(struct pl_json *j, struct daemon *d)
{
	struct pl_tracer_stats s;

	pthread_mutex_lock(&d->stats_lock);
	s = d->tracer_last;
	pthread_mutex_unlock(&d->stats_lock);
	pl__json_begin_object(j, "tracer");
	json_module(j, &d->trace_m);
	if (d->tracer || d->trace_m.state[0] != 'o') {
		pl__json_begin_object(j, "stats");
		pl__json_u64(j, "ticks", s.ticks);
		pl__json_u64(j, "rows", s.rows);
		pl__json_u64(j, "stall_events", s.stall_events);
		pl__json_u64(j, "processes", s.processes);
		pl__json_double(j, "sampler_ms_last", s.sampler_ms_last, 3);
		pl__json_double(j, "sampler_ms_p50", s.sampler_ms_p50, 3);
		pl__json_double(j, "sampler_ms_p99", s.sampler_ms_p99, 3);
		pl__json_double(j, "sampler_ms_max", s.sampler_ms_max, 3);
		pl__json_double(j, "tick_wall_ms_p50", s.tick_wall_ms_p50, 3);
		pl__json_double(j, "tick_wall_ms_p99", s.tick_wall_ms_p99, 3);
		pl__json_double(j, "tick_wall_ms_max", s.tick_wall_ms_max, 3);
		pl__json_u64(j, "read_errors", s.read_errors);
		pl__json_u64(j, "io_denied", s.io_denied);
		pl__json_u64(j, "exits", s.exits);
		pl__json_u64(j, "kept_fds", s.kept_fds);
		pl__json_u64(j, "fd_budget", s.fd_budget);
		if (s.cost_split && s.cost_ticks) {
			/* trace-cost-split: each phase's us a tick */
			pl__json_begin_object(j, "cost_us_per_tick");
			for (int i = 0; i < PL_TPHASE_N; i++)
				pl__json_double(j, pl__tracer_phase_name(i),
						(double)s.phase[i].ns / 1e3 / (double)s.cost_ticks, 1);
			pl__json_end_object(j);
		}
		pl__json_end_object(j);
	}
	pl__json_end_object(j);
}

static void json_resources(struct pl_json *j, struct daemon *d)
{
	struct pl_resources_stats s;

	pthread_mutex_lock(&d->stats_lock);
	s = d->res_last;
	pthread_mutex_unlock(&d->stats_lock);
	pl__json_begin_object(j, "resources");
	json_module(j, &d->res_m);
	if (d->res || d->res_m.state[0] != 'o') {
		pl__json_begin_object(j, "stats");
		pl__json_u64(j, "samples", s.samples);
		pl__json_u64(j, "processes", s.processes);
		pl__json_double(j, "sampler_ms_last", s.sampler_ms_last, 3);
		pl__json_double(j, "sampler_ms_max", s.sampler_ms_max, 3);
		pl__json_u64(j, "threads", s.threads);
		pl__json_u64(j, "exited", s.exited);
		pl__json_u64(j, "read_errors", s.read_errors);
		pl__json_u64(j, "kept_fds", s.kept_fds);
		pl__json_u64(j, "fd_budget", s.fd_budget);
		pl__json_end_object(j);
	}
	pl__json_end_object(j);
}

/* Resident pages are the second field of /proc/self/statm. */
static int own_rss_kib(struct daemon *d, uint64_t *out)
{
	const char *p;
	uint64_t size, resident;
	long page = sysconf(_SC_PAGESIZE);
	ssize_t n = pl__procfile_read(&d->statm);

	if (n < 0)
		return (int)n;
	p = d->statm.buf;
	if (pl__parse_u64(&p, &size) < 0 || *p++ != ' ' || pl__parse_u64(&p, &resident) < 0 ||
	    page <= 0)
		return -EINVAL;
	*out = resident * (uint64_t)page / 1024;
	return 0;
}

static void json_self(struct pl_json *j, struct daemon *d)
{
	struct rusage ru;
	uint64_t rss_kib = 0;
	double up_s = (double)(pl__mono_ns() - d->start_ns) / 1e9;

	pl__json_begin_object(j, "self");
	if (own_rss_kib(d, &rss_kib) == 0)
		pl__json_u64(j, "rss_kib", rss_kib);
	else
		pl__json_null(j, "rss_kib");
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		double user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
		double sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;

		pl__json_u64(j, "max_rss_kib", (uint64_t)ru.ru_maxrss);
		pl__json_double(j, "cpu_user_s", user_s, 3);
		pl__json_double(j, "cpu_sys_s", sys_s, 3);
		/* Average over the daemon's life, in percent of one CPU. */
		pl__json_double(j, "cpu_pct", up_s > 0 ? 100 * (user_s + sys_s) / up_s : 0, 3);
	}
	pl__json_end_object(j);
}

static int status_json(void *ctx, struct pl_json *j)
{
	struct daemon *d = ctx;
	struct pl_control_stats cs;
	uint64_t discarded;

	pl__json_begin_object(j, NULL);
	pl__json_str(j, "version", PL_VERSION);
	pl__json_i64(j, "pid", (int64_t)getpid());
	pl__json_double(j, "uptime_s", (double)(pl__mono_ns() - d->start_ns) / 1e9, 3);
	pl__json_begin_object(j, "modules");
	json_tracer(j, d);
	json_resources(j, d);
	if (d->link)
		pl__daemon_link_status(d->link, j);
	if (d->collector) {
		pl__collector_status(d->collector, j);
	}
	pl__json_end_object(j);
	pl__json_begin_object(j, "producers");
	pl__json_u64(j, "lines", d->producer_lines);
	pl__json_u64(j, "frames_without_link", d->producer_frames_without_link);
	/* a reply on a connection the link had dropped is read and discarded
	 * there: lost as surely as one with no producer to take it */
	discarded = d->link ? pl__daemon_link_replies_discarded(d->link) : 0;
	pl__json_u64(j, "replies_unrouted", d->replies_unrouted + discarded);
	pl__json_u64(j, "replies_no_producer", d->replies_no_producer);
	pl__json_u64(j, "replies_ring_full", d->replies_ring_full);
	pl__json_u64(j, "replies_too_big", d->replies_too_big);
	pl__json_u64(j, "replies_connection_dropped", discarded);
	pl__json_end_object(j);
	json_self(j, d);
	if (d->recorder.open) {
		pl__json_begin_object(j, "record");
		pl__json_str(j, "dir", d->cfg.record_dir);
		pl__json_u64(j, "lines", d->recorder.lines);
		pl__json_u64(j, "lines_not_json", d->recorder.bad_lines);
		pl__json_u64(j, "write_errors", d->recorder.files.write_errors);
		pl__json_end_object(j);
	}
	pl__control_get_stats(d->control, &cs);
	pl__json_begin_object(j, "control");
	pl__json_u64(j, "served", cs.served);
	pl__json_u64(j, "refused", cs.refused);
	pl__json_u64(j, "errors", cs.errors);
	pl__json_u64(j, "timeouts", cs.timeouts);
	pl__json_u64(j, "busy", cs.busy);
	pl__json_end_object(j);
	pl__json_end_object(j);
	return 0;
}

static void on_stop_signal(void *ctx, int signo)
{
	struct daemon *d = ctx;

	pl__log_info("%s: stopping", strsignal(signo));
	pl__loop_stop(d->loop);
}

static void on_sighup(void *ctx, int signo)
{
	(void)ctx;
	(void)signo;
	pl__log_info("SIGHUP ignored: nothing is reloaded; restart perflinkd to apply a "
		     "changed config");
}

/* record-dir: opened before the modules start, as the user perflinkd was
 * started as; with `user`, the two directories are handed to that user, who
 * writes the files of the types that come later. */
static int open_recorder(struct daemon *d)
{
	char sub[4096], err[PL_ERRBUF];
	int ret = pl__recorder_open(&d->recorder, d->cfg.record_dir, err, sizeof(err));

	if (ret < 0) {
		pl__log_warnx("record-dir: %s", err);
		return ret;
	}
	if (d->user.spec && geteuid() == 0) {
		snprintf(sub, sizeof(sub), "%s/telemetry", d->cfg.record_dir);
		if (chown(d->cfg.record_dir, d->user.uid, d->user.gid) < 0 ||
		    chown(sub, d->user.uid, d->user.gid) < 0) {
			ret = -errno;
			pl__log_warnc(ret, "record-dir: handing %s to %s", d->cfg.record_dir,
				      d->user.spec);
			return ret;
		}
	}
	pl__log_info("recording telemetry in %s/telemetry/TYPE.jsonl", d->cfg.record_dir);
	return 0;
}

/* Everything that needs privilege or can fail for reasons of the system,
 * before the loop. On failure a message has been logged. */
static int open_all(struct daemon *d)
{
	struct pl_control_config cc = {
		.path = d->cfg.control_socket,
		.group = d->cfg.control_group,
		.status = status_json,
		.status_ctx = d,
	};
	int ret;

	/* A peer that goes away must not kill us; writes say EPIPE instead. */
	signal(SIGPIPE, SIG_IGN);
	/* An output past a file size limit fails with EFBIG (its module stops,
	 * the file ends at its last whole record) instead of killing us. */
	signal(SIGXFSZ, SIG_IGN);
	ret = pl__loop_new(&d->loop);
	if (ret == 0)
		ret = pl__loop_add_signal(d->loop, SIGTERM, on_stop_signal, d);
	if (ret == 0)
		ret = pl__loop_add_signal(d->loop, SIGINT, on_stop_signal, d);
	if (ret == 0)
		ret = pl__loop_add_signal(d->loop, SIGHUP, on_sighup, d);
	if (ret < 0) {
		pl__log_warnc(ret, "event loop");
		return ret;
	}
	if (d->cfg.pidfile && *d->cfg.pidfile &&
	    (ret = pl__pidfile_open(&d->pidfile, d->cfg.pidfile)) < 0)
		return ret;
	ret = pl__procfile_open(&d->statm, AT_FDCWD, "/proc/self/statm");
	if (ret < 0)
		pl__log_warnc(ret, "/proc/self/statm: own RSS will be missing from status");
	ret = pl__control_open(&d->control, d->loop, &cc);
	if (ret < 0)
		return ret;
	/* The recorder and the link first, so that the modules' first lines
	 * (the resource sampler's header) are kept and can go out. */
	if (d->cfg.record_dir && *d->cfg.record_dir && (ret = open_recorder(d)) < 0)
		return ret;
	if (d->cfg.link && (ret = pl__daemon_link_start(&d->link, d->loop, &d->cfg.link_cfg,
							 on_host_reply, on_link_room, d)) < 0)
		return ret;
	if (d->link)
		pl__daemon_link_on_lost(d->link, on_link_frames_lost);
	if (!d->cfg.producer_socket || *d->cfg.producer_socket) {
		static const struct pl_collector_sink sink = {
			.frame = on_producer_frame,
			.telemetry = on_producer_line,
			.frame_fits = on_producer_frame_fits,
		};
		struct pl_collector_config col = {
			.path = d->cfg.producer_socket,
			.group = d->cfg.control_group,
			.max_frame_bytes = 4u << 20,
		};
		char path[256];

		/* Unset: next to the control socket, so that two daemons with
		 * their own control sockets never share it. */
		if (!col.path) {
			const char *slash = strrchr(d->cfg.control_socket, '/');
			int dir_len = slash ? (int)(slash - d->cfg.control_socket) : 1;

			snprintf(path, sizeof(path), "%.*s/producers", dir_len,
				 slash ? d->cfg.control_socket : ".");
			col.path = path;
		}
		ret = pl__collector_open(&d->collector, d->loop, &col, &sink, d);
		if (ret < 0)
			return ret;
	}
	return start_modules(d);
}

/* What perflinkd still does with privilege once it runs as `user`, found by
 * running each module as nobody with and without each capability
 * (docs/perflinkd.md, "Running as its own user"). Everything else was opened
 * before the drop: sockets, pid file, output files, /proc/self/statm. */
static uint64_t capabilities_needed(const struct pl_daemon_config *cfg)
{
	uint64_t keep = 0;

	/* The tracer opens /proc/PID/io of any process that may write, as it
	 * appears. The file is mode 0400 and owned by the process's user:
	 * opening another user's takes CAP_DAC_READ_SEARCH (the narrower of
	 * the two DAC overrides), and its read is a ptrace-read check, which
	 * takes CAP_SYS_PTRACE. Without both, that io is "unreadable" and stall
	 * events cannot name the writer. */
	if (cfg->trace)
		keep |= PL_CAP_BIT(CAP_DAC_READ_SEARCH) | PL_CAP_BIT(CAP_SYS_PTRACE);
	/* The sampler's PSS reads /proc/PID/smaps_rollup (mode 0444), whose
	 * open is a ptrace-read check: CAP_SYS_PTRACE. All else it reads is
	 * world-readable. */
	if (cfg->resources && cfg->res.pss_interval_s > 0)
		keep |= PL_CAP_BIT(CAP_SYS_PTRACE);
	/* The control, producer and TCP sockets are listening: accepting,
	 * reading and writing them needs nothing. */
	return keep;
}

/* Before anything is opened: a bad name, or a combination that would not
 * work after the drop, stops perflinkd before it creates a file. */
static int resolve_user(struct daemon *d)
{
	char err[PL_ERRBUF];
	const char *tcp = d->cfg.link_cfg.tcp_listen;
	int ret;

	if (!d->cfg.user || !*d->cfg.user)
		return 0;
	ret = pl__privilege_resolve(d->cfg.user, &d->user, err, sizeof(err));
	if (ret < 0) {
		pl__log_warnx("%s", err);
		return ret;
	}
	/* A gadget perflinkd makes: functionfs mounted for the user, whose
	 * files (ep0 at each re-arm, the endpoints at each enable) it opens
	 * after the drop. The UDC file is opened before it (link_port_usb.c);
	 * removing the gadget at exit is left to the root cleanup process. */
	if (d->cfg.link && !(tcp && *tcp) && d->cfg.link_cfg.setup_gadget) {
		snprintf(d->ffs_mount_options, sizeof(d->ffs_mount_options), "uid=%u,gid=%u",
			 (unsigned)d->user.uid, (unsigned)d->user.gid);
		d->cfg.link_cfg.ffs_mount_options = d->ffs_mount_options;
	}
	ret = pl__privilege_check(&d->user, err, sizeof(err));
	if (ret < 0)
		pl__log_warnx("user = %s: %s", d->user.spec, err);
	return ret;
}

/* The USB link reopens its endpoint files at each enable, and ep0 if it
 * fails: as the user, which must be able to (functionfs mounted with uid=
 * and gid=, or a mode that allows it). Checked before the drop, so that a
 * link that would go dead at its first re-enumeration stops perflinkd now. */
static int usb_link_usable_by_user(const struct daemon *d)
{
	static const char *const files[] = { "ep0", "ep1", "ep2" };
	const char *tcp = d->cfg.link_cfg.tcp_listen;

	if (!d->cfg.link || (tcp && *tcp))
		return 0;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[PATH_MAX];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", d->cfg.link_cfg.ffs_dir, files[i]);
		if (stat(path, &st) < 0 || !pl__privilege_may_read_write(&d->user, &st)) {
			pl__log_warnx("user = %s: %s is not readable and writable by uid %u gid %u: "
				      "mount functionfs with -o uid=%u,gid=%u",
				      d->user.spec, path, (unsigned)d->user.uid, (unsigned)d->user.gid,
				      (unsigned)d->user.uid, (unsigned)d->user.gid);
			return -EACCES;
		}
	}
	return 0;
}

/* What stays root's to undo once perflinkd, as its own user, has exited
 * (root_cleanup.h). The cleanup process reads its copy, made at the fork. */
struct root_tasks {
	const struct pl_link_settings *gadget; /* the gadget perflinkd made, or NULL */
	int delayacct_fd;                      /* task_delayacct to turn off, or -1 */
};

static void undo_as_root(void *ctx)
{
	const struct root_tasks *t = ctx;

	if (t->gadget) {
		pl__daemon_link_remove_gadget(t->gadget);
		pl__log_info("removed the gadget perflinkd made and its functionfs mount %s",
			     t->gadget->ffs_dir);
	}
	if (t->delayacct_fd >= 0) {
		if (pwrite(t->delayacct_fd, "0\n", 2, 0) == 2)
			pl__log_info("turned kernel.task_delayacct back off");
		else
			pl__log_warn("cannot turn kernel.task_delayacct back off");
	}
}

/* Started as root, just before the drop, when something only root may undo
 * is to be undone at exit. 0, or -errno: perflinkd does not start. */
static int start_root_cleanup(struct daemon *d)
{
	static struct root_tasks tasks;
	const char *tcp = d->cfg.link_cfg.tcp_listen;
	/* umount and the task_delayacct sysctl; the configfs directories are
	 * root's own, so uid 0 removes them without an override */
	const uint64_t caps = PL_CAP_BIT(CAP_SYS_ADMIN);
	struct pl_root_cleanup c = {
		.run = undo_as_root,
		.ctx = &tasks,
		.keep_fds = &tasks.delayacct_fd,
		.capabilities = caps,
		.name = "perflinkd-root",
	};
	int ret;

	tasks.gadget = d->link && !(tcp && *tcp) && d->cfg.link_cfg.setup_gadget ?
			       &d->cfg.link_cfg : NULL;
	tasks.delayacct_fd = -1;
	/* A unit without CAP_SYS_ADMIN could not have turned it on either;
	 * started by hand as root, the tracer did, and the cleanup turns it
	 * off. Without the capability, it stays on (said after the drop). */
	if (d->tracer && pl__privilege_permitted(caps) &&
	    (ret = pl__tracer_hand_over_delayacct(d->tracer)) != -1) {
		if (ret < 0)
			pl__log_warnc(ret, "kernel.task_delayacct will stay on at exit");
		tasks.delayacct_fd = ret < 0 ? -1 : ret;
	}
	if (!tasks.gadget && tasks.delayacct_fd < 0)
		return 0;
	c.n_keep_fds = tasks.delayacct_fd >= 0;
	ret = pl__root_cleanup_start(&c, &d->root_cleanup_pid, &d->root_cleanup_fd);
	if (tasks.delayacct_fd >= 0)
		close(tasks.delayacct_fd); /* the cleanup process has its own */
	if (ret == 0)
		pl__log_info("root cleanup process %d: at exit it will%s%s", (int)d->root_cleanup_pid,
			     tasks.gadget ? " remove the gadget" : "",
			     tasks.delayacct_fd >= 0 ? " turn kernel.task_delayacct off" : "");
	return ret;
}

static int become_user(struct daemon *d)
{
	uint64_t keep = capabilities_needed(&d->cfg);
	char err[PL_ERRBUF], caps[160] = "";
	size_t n = 0;
	int cap, ret;

	if (!d->user.spec)
		return 0;
	if ((ret = usb_link_usable_by_user(d)) < 0)
		return ret;
	if (geteuid() != 0) {
		pl__log_info("user = %s: started as that user, nothing to drop", d->user.spec);
		return 0;
	}
	if ((ret = start_root_cleanup(d)) < 0)
		return ret;
	ret = pl__privilege_drop(&d->user, keep, err, sizeof(err));
	if (ret < 0) {
		pl__log_warnx("user = %s: %s", d->user.spec, err);
		return ret;
	}
	for (cap = 0; cap < 64; cap++)
		if (keep & PL_CAP_BIT(cap) && n < sizeof(caps))
			n += (size_t)snprintf(caps + n, sizeof(caps) - n, " %s",
					      pl__privilege_cap_name(cap));
	pl__log_info("running as uid %u gid %u (user = %s), capabilities kept:%s",
		     (unsigned)getuid(), (unsigned)getgid(), d->user.spec, n ? caps : " none");
	if (d->tracer && pl__tracer_turned_delayacct_on(d->tracer))
		pl__log_warnx("trace-enable-delayacct: kernel.task_delayacct stays on when "
			      "perflinkd stops: perflinkd was started without CAP_SYS_ADMIN, which "
			      "the root cleanup process would need to write it");
	return 0;
}

static void close_all(struct daemon *d)
{
	stop_modules(d);
	pl__collector_close(d->collector);
	d->collector = NULL;
	pl__daemon_link_stop(d->link);
	d->link = NULL;
	pl__recorder_close(&d->recorder);
	pl__control_close(d->control);
	d->control = NULL;
	pl__pidfile_remove(&d->pidfile);
	pl__procfile_free(&d->statm);
	pl__loop_free(d->loop);
	d->loop = NULL;
	pl__daemon_config_free(&d->cfg);
	pl__privilege_user_free(&d->user);
	/* last: the root cleanup process (if any) now undoes what it was to */
	if (d->root_cleanup_fd >= 0)
		close(d->root_cleanup_fd);
}

int main(int argc, char **argv)
{
	static struct daemon d = {
		.pidfile = PL_PIDFILE_INIT,
		.statm = PL_PROCFILE_INIT,
		.root_cleanup_fd = -1,
		.stats_lock = PTHREAD_MUTEX_INITIALIZER,
	};
	char err[PL_ERRBUF];
	int ret;

	d.start_ns = pl__mono_ns();
	ret = pl__daemon_config_init(&d.cfg, err, sizeof(err));
	if (ret == 0)
		ret = pl__daemon_config_parse(&d.cfg, argc, argv, err, sizeof(err));
	if (ret != 0) {
		if (ret < 0)
			fprintf(stderr, "perflinkd: %s\n", err);
		pl__daemon_config_free(&d.cfg);
		return ret < 0 ? 1 : 0;
	}
	pl__log_init("perflinkd", d.cfg.foreground, d.cfg.verbose ? 1 : 0);

	if (resolve_user(&d) < 0 || open_all(&d) < 0 || become_user(&d) < 0 ||
	    start_workers(&d) < 0) {
		pl__log_warnx("not started");
		close_all(&d);
		return 1;
	}
	if (d.link) {
		/* chosen now, so that no frame waits for the measurement */
		char hash[160];

		pl__payload_hash_format(hash, sizeof(hash));
		pl__log_info("payload hash: %s", hash);
	}
	pl__notify("READY=1");
	pl__log_info("version %s running: tracer %s, resources %s, link %s, control socket %s",
		     PL_VERSION, d.trace_m.state, d.res_m.state, d.link ? "on" : "off",
		     d.cfg.control_socket);

	ret = pl__loop_run(d.loop);
	if (ret < 0)
		pl__log_warnc(ret, "event loop failed");

	pl__notify("STOPPING=1");
	close_all(&d);
	pl__log_info("stopped");
	return ret < 0 ? 1 : 0;
}
