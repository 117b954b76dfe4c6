/* The option table: config files and command lines set the same options, and
 * every bad input names where it is. */
#include "options.h"
#include "tap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long hz_int;
static double ratio;
static bool flag;
static char *out;
static long vid = 0x1d6b;

static const struct pl_option table[] = {
	{ "hz", PL_OPT_INT, &hz_int, 1, 1000, "N", "rate" },
	{ "stall_ratio", PL_OPT_DOUBLE, &ratio, 0, 1, "R", "ratio" },
	{ "foreground", PL_OPT_BOOL, &flag, 0, 0, NULL, "stay in front" },
	{ "out", PL_OPT_STRING, &out, 0, 0, "PATH", "output" },
	{ "vid", PL_OPT_HEX, &vid, 0, 0xffff, "ID", "USB vendor id" },
	PL_OPT_END,
};

/* Load text as a config file (a temporary one, removed again). */
static int load_text(const char *text, char *err, size_t errlen)
{
	char path[64];
	int fd, rc;

	snprintf(path, sizeof(path), "/tmp/pl-test-options-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
	rc = pl__config_load(table, path, err, errlen);
	unlink(path);
	return rc;
}

int main(void)
{
	char err[PL_ERRBUF] = "";
	int next;
	char *argv1[] = { "prog", "--hz=20", "--stall-ratio", "0.5", "--foreground", "--out",
			  "/x", "rest", NULL };
	char *argv2[] = { "prog", "--hz", "0", NULL };
	char *argv3[] = { "prog", "--bogus", NULL };
	char *argv4[] = { "prog", "--out", NULL };

	TAP_OK(load_text("# comment\n\nhz = 25\nstall-ratio=0.25 # trailing\nout = \"/a b\"\n"
			 "foreground = yes\n",
			 err, sizeof(err)) == 0,
	       "good file loads (%s)", err);
	TAP_OK(hz_int == 25 && ratio == 0.25 && flag && out && strcmp(out, "/a b") == 0,
	       "values from the file");

	TAP_OK(load_text("hz = 25\n\nhz = 2000\n", err, sizeof(err)) == -EINVAL,
	       "out of range refused");
	TAP_OK(strstr(err, ":3: hz: 2000 is outside") != NULL, "error names file:line (%s)", err);

	TAP_OK(load_text("hz 25\n", err, sizeof(err)) == -EINVAL &&
		       strstr(err, ":1: expected 'key = value'"),
	       "line without '=' refused (%s)", err);

	TAP_OK(load_text("colour = blue\n", err, sizeof(err)) == -EINVAL &&
		       strstr(err, ":1: unknown key 'colour'"),
	       "unknown key refused (%s)", err);

	TAP_OK(load_text("out = \"open\n", err, sizeof(err)) == -EINVAL &&
		       strstr(err, "unterminated quote"),
	       "unterminated quote refused (%s)", err);

	TAP_OK(load_text("foreground = maybe\n", err, sizeof(err)) == -EINVAL &&
		       strstr(err, "not a boolean"),
	       "bad boolean refused (%s)", err);

	TAP_OK(pl__config_load(table, "/nonexistent/perflink.conf", err, sizeof(err)) == -ENOENT,
	       "missing file is -ENOENT");

	flag = false;
	TAP_OK(pl__options_parse_argv(table, 8, argv1, &next, err, sizeof(err)) == 0,
	       "argv parses");
	TAP_OK(hz_int == 20 && ratio == 0.5 && flag && strcmp(out, "/x") == 0 && next == 7,
	       "argv values, stops at the first operand");
	TAP_OK(pl__options_parse_argv(table, 3, argv2, &next, err, sizeof(err)) == -EINVAL,
	       "argv out of range (%s)", err);
	TAP_OK(pl__options_parse_argv(table, 2, argv3, &next, err, sizeof(err)) == -EINVAL &&
		       strstr(err, "--bogus"),
	       "unknown flag named (%s)", err);
	TAP_OK(pl__options_parse_argv(table, 2, argv4, &next, err, sizeof(err)) == -EINVAL &&
		       strstr(err, "needs a value"),
	       "missing value (%s)", err);
	{
		/* USB ids: shown and written in hexadecimal, read in either base */
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);

		pl__options_print_help(table, mem);
		fclose(mem);
		TAP_OK(strstr(text, "USB vendor id (default: 0x1d6b)") != NULL,
		       "--help shows a hexadecimal default as such");
		free(text);
		TAP_OK(load_text("vid = 0x10000\n", err, sizeof(err)) == -EINVAL &&
			       strstr(err, "vid: 0x10000 is outside 0x0..0xffff"),
		       "hexadecimal out of range, said in hexadecimal (%s)", err);
		TAP_OK(load_text("vid = 4660\n", err, sizeof(err)) == 0 && vid == 0x1234,
		       "decimal accepted too");
		text = NULL;
		mem = open_memstream(&text, &len);
		pl__options_write_config(table, mem);
		fclose(mem);
		TAP_OK(strstr(text, "\nvid = 0x1234\n") != NULL, "written back in hexadecimal");
		vid = 0;
		TAP_OK(load_text(text, err, sizeof(err)) == 0 && vid == 0x1234,
		       "and read back (%s)", err);
		free(text);
	}
	pl__options_free(table);
	TAP_OK(out == NULL, "strings freed");
	return tap_done();
}
