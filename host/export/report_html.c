/* See report_html.h: the page around the data (report_data.c), the run's
 * summary.json, and the escaping that keeps the data inside its element. */
#include "report_html.h"
#include "json_reader.h"
#include "json_writer.h"
#include "recording.h"
#include "report_assets.h"
#include "report_data.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SUMMARY_MAX_BYTES (1u << 20)

/* summary.json's scalars by their dotted paths, as text: the page shows
 * those it knows (the clock offset, the host's drop counts) */
static void on_summary(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct pl_json *j = ctx;

	/* numbers and booleans as text, exactly as the file has them */
	if (kind == PL_JSON_NULL)
		pl__json_null(j, path);
	else
		pl__json_str(j, path, value);
}

static void ignore(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	(void)ctx, (void)path, (void)kind, (void)value;
}

/* The object "summary" of what DIR/summary.json holds (flat: its scalars
 * by dotted path), or null when it is missing or does not parse. */
static void summary(struct pl_json *j, const char *dir)
{
	char path[4096], *text = NULL;
	ssize_t got = 0, n;
	int fd = -1;

	if (!dir || (size_t)snprintf(path, sizeof(path), "%s/summary.json", dir) >= sizeof(path))
		goto none;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || !(text = malloc(SUMMARY_MAX_BYTES)))
		goto none;
	while ((size_t)got < SUMMARY_MAX_BYTES &&
	       (n = read(fd, text + got, SUMMARY_MAX_BYTES - (size_t)got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto none;
		got += n;
	}
	/* checked whole first: a walk that fails halfway has called back */
	if (pl__json_walk(text, (size_t)got, ignore, NULL) < 0)
		goto none;
	pl__json_begin_object(j, "summary");
	pl__json_walk(text, (size_t)got, on_summary, j);
	pl__json_end_object(j);
	goto out;
none:
	pl__json_null(j, "summary");
out:
	if (fd >= 0)
		close(fd);
	free(text);
}

/* JSON text inside <script type="application/json">: '<', '>' and '&'
 * only occur inside strings there, where \u escapes mean the same, so
 * no text from the recording can close the element or open a comment. */
static int write_escaped_json(FILE *out, const char *text, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		switch (text[i]) {
		case '<': fputs("\\u003c", out); break;
		case '>': fputs("\\u003e", out); break;
		case '&': fputs("\\u0026", out); break;
		default: fputc(text[i], out);
		}
	}
	return ferror(out) ? -EIO : 0;
}

int pl__report_html_write(FILE *out, const void *ctx)
{
	const struct pl_report_html *h = ctx;
	struct pl_json j;
	int err;

	pl__json_init(&j);
	pl__json_begin_object(&j, NULL);
	pl__json_u64(&j, "schema", 1);
	summary(&j, h->dir);
	err = pl__report_data(&j, h->r);
	pl__json_end_object(&j);
	if (!err && j.failed)
		err = -ENOMEM;
	if (err < 0)
		goto out;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      /* nothing is fetched: the page is whole without the network */
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<title>perflink report</title>\n", out);
	fwrite(pl__report_head, 1, pl__report_head_len, out);
	fputs("</head>\n<body>\n<main id=\"report\"><noscript>This report draws itself "
	      "with JavaScript.</noscript></main>\n"
	      "<script type=\"application/json\" id=\"perflink-data\">", out);
	err = write_escaped_json(out, j.buf, j.len);
	fputs("</script>\n", out);
	fwrite(pl__report_tail, 1, pl__report_tail_len, out);
	fputs("</body>\n</html>\n", out);
	if (!err && ferror(out))
		err = -EIO;
out:
	pl__json_free(&j);
	return err;
}
