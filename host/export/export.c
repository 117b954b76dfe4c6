/* See export.h. */
#include "export.h"
#include "atomic_file.h"
#include "log.h"
#include "metrics_prom.h"
#include "perfetto_trace.h"
#include "recording.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

static int write_file(const struct pl_recording *r, const char *dir, const char *name,
		      int (*fill)(FILE *f, const void *recording))
{
	char path[4096];
	int err;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		err = -ENAMETOOLONG;
	else
		err = pl__atomic_file_write(path, fill, r);
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
}

int pl__export_dir(const char *dir)
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
	status = write_file(&r, dir, "metrics.prom", pl__metrics_prom_write);
	err = write_file(&r, dir, "trace.perfetto-trace", pl__perfetto_trace_write);
	pl__recording_free(&r);
	return status < 0 ? status : err;
}
