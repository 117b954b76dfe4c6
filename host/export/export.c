/* See export.h. */
#include "export.h"
#include "atomic_file.h"
#include "log.h"
#include "metrics_prom.h"
#include "perfetto_trace.h"
#include "pprof_profile.h"
#include "recording.h"
#include "report_html.h"
#include "stacks_folded.h"
#include "symbolize.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_file(const void *ctx, const char *dir, const char *name,
		      int (*fill)(FILE *f, const void *ctx))
{
	char path[4096];
	int err;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		err = -ENAMETOOLONG;
	else
		err = pl__atomic_file_write(path, fill, ctx);
	if (err < 0)
		pl__log_warnc(err, "%s/%s", dir, name);
	return err;
}

static void report_skipped(const struct pl_recording *r, const char *dir)
{
	int f;

	for (f = 0; f < PL_REC_FILE_COUNT; f++)
		if (r->bad_lines[f])
			pl__log_warnx("%s/%s: skipped %" PRIu64 " of %" PRIu64
				      " lines that did not parse",
				      dir, pl__recording_file_name((enum pl_recording_file)f),
				      r->bad_lines[f], r->lines[f]);
	if (r->bad_stack_lines)
		pl__log_warnx("%s/%s: skipped %" PRIu64 " folded stack lines that did not parse",
			      dir, pl__recording_file_name(PL_REC_RENDER_WINDOW), r->bad_stack_lines);
}

/* DIR/profile.pb.gz (every window) and DIR/profiles/window-N.pb.gz (N from
 * 1, in the order of render_window.jsonl), when there are windows */
static int write_profiles(const struct pl_recording *r, const char *dir)
{
	char sub[4096], name[64];
	int status, err;
	size_t i;

	if (!r->n_windows)
		return 0;
	status = write_file(r, dir, "profile.pb.gz", pl__pprof_write_merged);
	if ((size_t)snprintf(sub, sizeof(sub), "%s/profiles", dir) >= sizeof(sub)) {
		pl__log_warnc(-ENAMETOOLONG, "%s/profiles", dir);
		return -ENAMETOOLONG;
	}
	if (mkdir(sub, 0755) < 0 && errno != EEXIST) {
		err = -errno;
		pl__log_warnc(err, "%s", sub);
		return err;
	}
	for (i = 0; i < r->n_windows; i++) {
		struct pl_pprof_window w = { r, i };

		snprintf(name, sizeof(name), "window-%zu.pb.gz", i + 1);
		if ((err = write_file(&w, sub, name, pl__pprof_write_window)) < 0 && status == 0)
			status = err;
	}
	return status;
}

/* The trace's parts: DIR/trace.perfetto-trace, then trace.1.perfetto-trace,
 * trace.2..., each written whole or not at all. */
struct trace_parts {
	const char *dir;
	struct pl_atomic_file file;
};

static int part_path(char *path, size_t cap, const char *dir, unsigned part)
{
	int n = part ? snprintf(path, cap, "%s/trace.%u.perfetto-trace", dir, part)
		     : snprintf(path, cap, "%s/trace.perfetto-trace", dir);

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

static int open_part(void *ctx, unsigned part, FILE **out)
{
	struct trace_parts *tp = ctx;
	char path[4096];
	int err;

	if ((err = part_path(path, sizeof(path), tp->dir, part)) < 0 ||
	    (err = pl__atomic_file_open(&tp->file, path)) < 0) {
		pl__log_warnc(err, "%s", path);
		return err;
	}
	*out = tp->file.f;
	return 0;
}

static int close_part(void *ctx, unsigned part, bool ok)
{
	struct trace_parts *tp = ctx;
	int err;

	if (!ok) {
		pl__atomic_file_abort(&tp->file);
		return 0;
	}
	if ((err = pl__atomic_file_commit(&tp->file)) < 0)
		pl__log_warnc(err, "%s: trace part %u", tp->dir, part);
	return err;
}

/* The trace in parts of about trace_max_bytes; parts an earlier export left
 * beyond the last written now are removed, so that the folder holds one
 * trace. */
static int write_trace(const struct pl_recording *r, const char *dir, uint64_t trace_max_bytes)
{
	struct trace_parts tp = { .dir = dir };
	struct pl_trace_parts parts = { open_part, close_part, &tp, trace_max_bytes };
	unsigned n_parts, k;
	char path[4096];
	int err;

	err = pl__perfetto_trace_write_parts(r, &parts, &n_parts);
	if (err < 0) {
		pl__log_warnc(err, "%s/trace.perfetto-trace", dir);
		return err;
	}
	for (k = n_parts; part_path(path, sizeof(path), dir, k) == 0 && unlink(path) == 0; k++)
		;
	if (n_parts > 1)
		pl__log_info("%s: the trace is in %u parts of about %.3g MB "
			     "(trace.perfetto-trace, trace.1.perfetto-trace, ...)",
			     dir, n_parts, (double)trace_max_bytes / 1e6);
	return 0;
}

int pl__export_dir(const char *dir, const struct pl_export_options *opt)
{
	struct pl_recording r;
	int err, status;

	err = pl__recording_read(&r, dir);
	if (err == -ENOENT) {
		pl__log_warnx("%s: no recording here (neither frames.csv nor telemetry/*.jsonl "
			      "of perflink-host --out)", dir);
		return err;
	}
	if (err < 0) {
		pl__log_warnc(err, "%s: cannot read the recording", dir);
		return err;
	}
	report_skipped(&r, dir);
	/* a sysroot that cannot be read leaves the device's names: said, and
	 * the files are still written */
	status = pl__recording_symbolize(&r, &opt->symbols) == -ENOMEM ? -ENOMEM : 0;
	err = write_file(&r, dir, "metrics.prom", pl__metrics_prom_write);
	if (err < 0 && status == 0)
		status = err;
	err = write_trace(&r, dir, opt->trace_max_bytes);
	if (err < 0 && status == 0)
		status = err;
	err = write_profiles(&r, dir);
	if (err < 0 && status == 0)
		status = err;
	if (r.n_windows && (err = write_file(&r, dir, "stacks.folded", pl__stacks_folded_write)) < 0 &&
	    status == 0)
		status = err;
	{
		struct pl_report_html report = { &r, dir };

		err = write_file(&report, dir, "report.html", pl__report_html_write);
	}
	pl__recording_free(&r);
	return status < 0 ? status : err;
}
