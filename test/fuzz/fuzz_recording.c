/* libFuzzer target: perflink-host export over a hostile recording (a
 * copied or truncated --out directory, or one written by someone else).
 * The input's first byte picks the file the rest becomes: frames.csv or
 * one of the telemetry files the export reads; the directory is then read
 * back (host/export/recording_*.c) and written as Prometheus text, as
 * a Perfetto trace, as pprof profiles (merged and per window), as
 * report.html and as stacks.folded, into memory, after the module+offset
 * frames of its render windows went through the host's symbolisation
 * (host/export/symbolize.c: the frames and the windows' modules parsed,
 * a debug folder with no file in it looked in).
 * Checked: reading a directory that holds the file never says there is no
 * recording; the lines read and the lines skipped agree; the frames kept
 * are no more than the lines, the windows no more than theirs, each
 * window's stacks and modules inside the recording's, every module
 * named and its build-id hex of whole bytes or empty; every writer succeeds; no
 * '<' inside report.html's data element (nothing the recording holds can
 * end it). */
#include "metrics_prom.h"
#include "perfetto_trace.h"
#include "pprof_profile.h"
#include "recording.h"
#include "report_html.h"
#include "stacks_folded.h"
#include "symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/pl-fuzz-recording.XXXXXX";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char sub[sizeof(dir) + 16];

	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		abort();
	snprintf(sub, sizeof(sub), "%s/telemetry", dir);
	if (mkdir(sub, 0700) != 0)
		abort();
	return 0;
}

static void remove_files(void)
{
	char path[sizeof(dir) + 64];
	int f;

	for (f = 0; f < PL_REC_FILE_COUNT; f++) {
		snprintf(path, sizeof(path), "%s/%s", dir,
			 pl__recording_file_name((enum pl_recording_file)f));
		unlink(path);
	}
}

static void write_input(enum pl_recording_file f, const uint8_t *data, size_t size)
{
	char path[sizeof(dir) + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, pl__recording_file_name(f));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
}

static void write_out(int (*fill)(FILE *, const void *), const void *ctx)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!out)
		abort();
	if (fill(out, ctx) < 0)
		abort(); /* nothing but the writing itself can fail */
	fclose(out);
	free(buf);
}

/* report.html: its data element holds no '<' up to the end tag */
static void write_report(const struct pl_recording *r)
{
	static const char open_tag[] = "id=\"perflink-data\">";
	struct pl_report_html h = { r, NULL };
	char *buf = NULL, *data, *end;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!out)
		abort();
	if (pl__report_html_write(out, &h) < 0)
		abort();
	fclose(out);
	data = strstr(buf, open_tag);
	end = data ? strstr(data, "</script>") : NULL;
	if (!end || memchr(data + sizeof(open_tag) - 1, '<',
			   (size_t)(end - data) - (sizeof(open_tag) - 1)))
		abort();
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pl_recording r;
	enum pl_recording_file f;
	size_t w;
	int err, i;

	if (size < 1)
		return 0;
	f = (enum pl_recording_file)(data[0] % PL_REC_FILE_COUNT);
	remove_files();
	write_input(f, data + 1, size - 1);
	err = pl__recording_read(&r, dir);
	if (err == -ENOMEM)
		return 0;
	if (err < 0)
		abort(); /* the file is there: a recording, however bad */
	for (i = 0; i < PL_REC_FILE_COUNT; i++)
		if (r.bad_lines[i] > r.lines[i])
			abort();
	if (r.n_frames > r.lines[PL_REC_FRAMES])
		abort();
	if (r.n_windows > r.lines[PL_REC_RENDER_WINDOW])
		abort();
	for (w = 0; w < r.n_windows; w++)
		if (r.windows[w].first_stack + r.windows[w].n_stacks > r.n_stacks ||
		    r.windows[w].first_module + r.windows[w].n_modules > r.n_modules)
			abort();
	for (w = 0; w < r.n_modules; w++) {
		size_t n = strlen(r.modules[w].build_id);

		if (!r.modules[w].name || !r.modules[w].name[0] || n % 2 ||
		    strspn(r.modules[w].build_id, "0123456789abcdef") != n)
			abort();
	}
	{
		/* no file is there: every build-id is looked for and not found */
		struct pl_symbol_dirs dirs = { NULL, dir };

		err = pl__recording_symbolize(&r, &dirs);
		if (err < 0 && err != -ENOMEM && err != -ENOTSUP)
			abort();
	}
	write_out(pl__metrics_prom_write, &r);
	write_out(pl__perfetto_trace_write, &r);
	write_out(pl__pprof_write_merged, &r);
	for (w = 0; w < r.n_windows; w++) {
		struct pl_pprof_window pw = { &r, w };

		write_out(pl__pprof_write_window, &pw);
	}
	write_report(&r);
	write_out(pl__stacks_folded_write, &r);
	pl__recording_free(&r);
	return 0;
}
