/* The resource sampler: configuration, lifecycle, and the tick that turns
 * one pass over the chosen processes into one line of resources.jsonl. */
#include "resources_priv.h"
#include "fd_budget.h"
#include "whole_write.h"
#include "clock.h"
#include "pl_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Lines are built in memory and written whole: a reader never sees half a
 * line. Large enough for the longest smaps line with its path. */
#define SMAPS_BUF_LEN (64u * 1024u)

void pl__resources_config_init(struct pl_resources_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->out_path = strdup("resources.jsonl");
	cfg->proc_root = strdup("/proc");
	cfg->interval_s = 1.0;
	cfg->pss_interval_s = 10.0;
	cfg->threads = true;
}

void pl__resources_config_free(struct pl_resources_config *cfg)
{
	free(cfg->out_path);
	free(cfg->pids);
	free(cfg->names);
	free(cfg->proc_root);
	cfg->out_path = cfg->pids = cfg->names = cfg->proc_root = NULL;
}

const struct pl_option *pl__resources_options(struct pl_resources_config *cfg)
{
	const struct pl_option table[] = {
		{ "out", PL_OPT_STRING, &cfg->out_path, 0, 0, "FILE",
		  "write the JSON lines here ('' for no file)" },
		{ "pids", PL_OPT_STRING, &cfg->pids, 0, 0, "PID,...",
		  "sample these processes (the ones holding these pids at start)" },
		{ "names", PL_OPT_STRING, &cfg->names, 0, 0, "NAME,...",
		  "sample every process whose comm contains one of these, looked for each sample" },
		{ "interval", PL_OPT_DOUBLE, &cfg->interval_s, 0.01, 3600, "SECONDS",
		  "time between samples" },
		{ "pss-interval", PL_OPT_DOUBLE, &cfg->pss_interval_s, 0, 86400, "SECONDS",
		  "time between PSS reads (smaps_rollup, or smaps before 4.14; they take the "
		  "target's mm lock); 0: no PSS" },
		{ "threads", PL_OPT_BOOL, &cfg->threads, 0, 0, NULL,
		  "list every thread: CPU ticks, schedstat, context switches (--threads=no: "
		  "processes only)" },
		{ "proc-root", PL_OPT_STRING, &cfg->proc_root, 0, 0, "DIR",
		  "read this tree instead of /proc (a recorded one)" },
		PL_OPT_END,
	};

	_Static_assert(sizeof(table) <= sizeof(cfg->options), "options fit the config");
	memcpy(cfg->options, table, sizeof(table));
	return cfg->options;
}

static int copy_str(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

/* Kept /proc fds are what makes a tick cheap; half of what the process may
 * keep (common/fd_budget.h), at most 16384, unless told a share. */
static long fd_budget(const struct pl_resources_config *cfg)
{
	long all = pl__fd_budget();

	if (cfg->fd_budget > 0)
		return cfg->fd_budget;
	return (all > 32768 ? 32768 : all) / 2;
}

int pl__resources_open(struct pl_resources **out, const struct pl_resources_config *cfg)
{
	struct pl_resources *r = calloc(1, sizeof(*r));
	const char *root;
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->cfg = *cfg;
	r->cfg.out_path = r->cfg.pids = r->cfg.names = r->cfg.proc_root = NULL;
	r->root_fd = -1;
	r->out_fd = -1;
	r->buf = (struct pl_procfile)PL_PROCFILE_INIT;
	r->meminfo = (struct pl_procfile)PL_PROCFILE_INIT;
	r->vmstat = (struct pl_procfile)PL_PROCFILE_INIT;
	r->buddyinfo = (struct pl_procfile)PL_PROCFILE_INIT;
	if (copy_str(&r->cfg.out_path, cfg->out_path ? cfg->out_path : "resources.jsonl") < 0 ||
	    copy_str(&r->cfg.pids, cfg->pids) < 0 || copy_str(&r->cfg.names, cfg->names) < 0 ||
	    copy_str(&r->cfg.proc_root, cfg->proc_root) < 0) {
		err = -ENOMEM;
		goto fail;
	}
	r->rl_read = (struct pl__ratelimit)PL_RATELIMIT_INIT(1000);
	pl__json_init(&r->json);
	if (!(cfg->interval_s >= 0.001 && cfg->interval_s <= 86400) ||
	    !(cfg->pss_interval_s >= 0 && cfg->pss_interval_s <= 86400 * 7)) {
		pl__log_warnx("resources: interval %g s or PSS interval %g s out of range",
			      cfg->interval_s, cfg->pss_interval_s);
		err = -EINVAL;
		goto fail;
	}
	r->interval_ns = (uint64_t)(cfg->interval_s * 1e9);
	r->pss_interval_ns = (uint64_t)(cfg->pss_interval_s * 1e9);

	root = r->cfg.proc_root && r->cfg.proc_root[0] ? r->cfg.proc_root : "/proc";
	r->root_fd = pl__procdir_open(AT_FDCWD, root);
	if (r->root_fd < 0) {
		err = r->root_fd;
		pl__log_warnc(err, "resources: %s", root);
		goto fail;
	}
	r->fds_budget = fd_budget(cfg);
	r->smaps_buf_len = SMAPS_BUF_LEN;
	r->smaps_buf = malloc(r->smaps_buf_len);
	if (!r->smaps_buf) {
		err = -ENOMEM;
		goto fail;
	}
	if ((err = pl__res_select_init(r)) < 0)
		goto fail;
	pl__res_probe(r);

	if (r->cfg.out_path[0]) {
		do
			r->out_fd = open(r->cfg.out_path,
					 O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY |
						 O_NOFOLLOW, 0644); /* a planted link is refused */
		while (r->out_fd < 0 && errno == EINTR);
		if (r->out_fd < 0) {
			err = -errno;
			pl__log_warnc(err, "resources: %s", r->cfg.out_path);
			goto fail;
		}
	}
	*out = r;
	return 0;
fail:
	pl__resources_close(r);
	return err;
}

void pl__resources_set_fault(struct pl_resources *r, pl_res_fault_fn fn, void *ctx)
{
	r->fault = fn;
	r->fault_ctx = ctx;
}

static int put_line(struct pl_resources *r)
{
	const char *line = pl__json_finish(&r->json);
	int err;

	if (!line) {
		pl__log_warnx("resources: out of memory building a line; it is lost");
		return 0;
	}
	if (r->cfg.on_line)
		r->cfg.on_line(r->cfg.on_line_ctx, line);
	if (r->out_fd >= 0 && (err = pl__write_record(r->out_fd, line, r->json.len)) < 0) {
		pl__log_warnc(err, "resources: writing %s", r->cfg.out_path);
		return err;
	}
	return 0;
}

static int write_header(struct pl_resources *r)
{
	struct pl_json *j = &r->json;

	pl__json_reset(j);
	pl__json_begin_object(j, NULL);
	pl__json_str(j, "type", "header");
	pl__json_i64(j, "schema", 1);
	pl__json_str(j, "tool", "perflink resources");
	pl__json_str(j, "perflink_version", PL_VERSION);
	pl__json_u64(j, "mono_ns", pl__mono_ns());
	pl__json_u64(j, "wall_ns", pl__wall_ns());
	pl__res_emit_header_facts(r);
	pl__json_double(j, "interval_ms", (double)r->interval_ns / 1e6, 3);
	if (r->pss_interval_ns)
		pl__json_double(j, "pss_interval_ms", (double)r->pss_interval_ns / 1e6, 3);
	else
		pl__json_null(j, "pss_interval_ms");
	pl__json_bool(j, "threads", r->cfg.threads);
	pl__res_json_text(j, "proc_root", r->cfg.proc_root ? r->cfg.proc_root : "/proc");
	pl__json_i64(j, "fds_budget", r->fds_budget);
	pl__res_emit_selection(r);
	pl__json_end_object(j);
	return put_line(r);
}

/* PSS runs on its own absolute cadence; a tick within half an interval of
 * the deadline takes it, so that 10 s at 1 Hz is every tenth tick and not
 * the eleventh when a tick comes a little early. */
static bool pss_due(struct pl_resources *r, uint64_t now)
{
	if (r->pss_interval_ns == 0)
		return false;
	if (r->next_pss_mono_ns != 0 && now + r->interval_ns / 2 < r->next_pss_mono_ns)
		return false;
	if (r->next_pss_mono_ns == 0)
		r->next_pss_mono_ns = now;
	while (r->next_pss_mono_ns <= now + r->interval_ns / 2)
		r->next_pss_mono_ns += r->pss_interval_ns;
	return true;
}

int pl__resources_tick(struct pl_resources *r)
{
	struct pl_json *j = &r->json;
	uint64_t t0, c0, threads = 0;
	size_t i, kept = 0;
	double ms;
	bool pss;
	int err;

	if (!r->header_written) {
		if ((err = write_header(r)) < 0)
			return err;
		r->header_written = true;
	}
	t0 = pl__mono_ns();
	c0 = pl__thread_cpu_ns();
	pss = pss_due(r, t0);
	r->n_gone = 0;

	pl__json_reset(j);
	pl__json_begin_object(j, NULL);
	pl__json_str(j, "type", "sample");
	pl__json_u64(j, "seq", r->seq);
	pl__json_u64(j, "mono_ns", t0);
	pl__json_u64(j, "wall_ns", pl__wall_ns());
	pl__json_bool(j, "pss", pss);
	pl__res_emit_system(r);

	pl__res_select(r);
	pl__json_begin_array(j, "procs");
	for (i = 0; i < r->n_procs; i++) {
		struct pl_res_proc *p = r->procs[i];

		if (pl__res_proc_sample(r, p, pss) < 0) {
			pl__res_proc_gone(r, p, "exited mid-read");
			continue;
		}
		pl__res_emit_proc(r, p);
		threads += p->threads_listed;
		r->procs[kept++] = p;
	}
	r->n_procs = kept;
	pl__json_end_array(j);
	pl__res_emit_gone(r);

	ms = (double)(pl__mono_ns() - t0) / 1e6;
	pl__json_double(j, "sampler_ms", ms, 3);
	pl__json_double(j, "sampler_cpu_ms", (double)(pl__thread_cpu_ns() - c0) / 1e6, 3);
	pl__json_end_object(j);
	r->seq++;

	r->stats.samples++;
	r->stats.processes = r->n_procs;
	r->stats.threads = threads;
	r->stats.sampler_ms_last = ms;
	if (ms > r->stats.sampler_ms_max)
		r->stats.sampler_ms_max = ms;
	return put_line(r);
}

uint64_t pl__resources_interval_ns(const struct pl_resources *r)
{
	return r->interval_ns;
}

void pl__resources_get_stats(const struct pl_resources *r, struct pl_resources_stats *out)
{
	*out = r->stats;
	out->kept_fds = r->fds_kept > 0 ? (uint64_t)r->fds_kept : 0;
	out->fd_budget = r->fds_budget > 0 ? (uint64_t)r->fds_budget : 0;
}

void pl__resources_close(struct pl_resources *r)
{
	if (!r)
		return;
	pl__res_select_free(r);
	pl__procfile_free(&r->buf);
	pl__procfile_free(&r->meminfo);
	pl__procfile_free(&r->vmstat);
	pl__procfile_free(&r->buddyinfo);
	free(r->smaps_buf);
	free(r->tids);
	if (r->root_fd >= 0)
		close(r->root_fd);
	if (r->out_fd >= 0)
		close(r->out_fd);
	pl__json_free(&r->json);
	free(r->cfg.out_path);
	free(r->cfg.pids);
	free(r->cfg.names);
	free(r->cfg.proc_root);
	free(r);
}
