/* Merging option tables under prefixes (how perflinkd offers the tracer's and
 * the sampler's options), and writing a table back as a config file that
 * loads to the same values. */
#include "options.h"
#include "tap.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static long a_n = 5;
static bool a_flag;
static double b_ratio = 0.25;
static char *b_out;
static long b_n = 7;

static const struct pl_option table_a[] = {
	{ "n", PL_OPT_INT, &a_n, 0, 100, "N", "a's number" },
	{ "flag", PL_OPT_BOOL, &a_flag, 0, 0, NULL, "a's flag" },
	PL_OPT_END,
};
static const struct pl_option table_b[] = {
	{ "ratio", PL_OPT_DOUBLE, &b_ratio, 0, 1, "R", "b's ratio" },
	{ "out", PL_OPT_STRING, &b_out, 0, 0, "PATH", "b's output" },
	{ "n", PL_OPT_INT, &b_n, 0, 100, "N", "b's number" },
	PL_OPT_END,
};

int main(void)
{
	const struct pl_option *tables[] = { table_a, table_b };
	const char *const prefixes[] = { NULL, "b-" };
	const char *const clash[] = { NULL, NULL };
	struct pl_option *m = NULL, *m2 = NULL;
	char err[PL_ERRBUF] = "", path[] = "/tmp/pl-test-merge-XXXXXX";
	char *argv[] = { "prog", "--n=9", "--b-n", "11", "--b_ratio=0.5", "--flag", NULL };
	int next, fd;
	FILE *f;

	TAP_OK(pl__options_merge(&m, tables, prefixes, 2, err, sizeof(err)) == 0, "merged (%s)",
	       err);
	TAP_EQ_STR(m[0].name, "n", "no prefix keeps the name");
	TAP_EQ_STR(m[2].name, "b-ratio", "the prefix is put in front");
	TAP_EQ_STR(m[4].name, "b-n", "the same name under two prefixes is two options");
	TAP_OK(m[5].name == NULL, "ends in PL_OPT_END");
	TAP_OK(m[3].target == &b_out && m[3].type == PL_OPT_STRING && m[2].max == 1,
	       "targets, types and limits are kept");

	TAP_OK(pl__options_parse_argv(m, 6, argv, &next, err, sizeof(err)) == 0, "flags parse");
	TAP_OK(a_n == 9 && b_n == 11 && b_ratio == 0.5 && a_flag, "and reach the originals");
	TAP_OK(pl__option_set(m, "ratio", "0.1", err, sizeof(err)) == -ENOENT,
	       "the unprefixed name of a prefixed option is unknown");

	TAP_OK(pl__options_merge(&m2, tables, clash, 2, err, sizeof(err)) == -EEXIST &&
		       strstr(err, "'n'"),
	       "two options with one name are refused (%s)", err);

	/* write_config, then load into defaults again: the same values. */
	TAP_OK(pl__option_set(m, "b-out", "/a b/#not a comment\"", err, sizeof(err)) == 0,
	       "a string with a space, '#' and a quote");
	fd = mkstemp(path);
	f = fdopen(fd, "w");
	TAP_OK(f && pl__options_write_config(m, f) == 0, "written");
	fclose(f);
	a_n = 0;
	a_flag = false;
	b_ratio = 0;
	b_n = 0;
	free(b_out);
	b_out = NULL;
	TAP_OK(pl__config_load(m, path, err, sizeof(err)) == 0, "loads back (%s)", err);
	TAP_OK(a_n == 9 && b_n == 11 && b_ratio == 0.5 && a_flag, "numbers and flags survive");
	TAP_EQ_STR(b_out, "/a b/#not a comment\"", "the string survives");

	b_ratio = 0.1 + 0.2; /* no short decimal form */
	free(b_out);
	b_out = NULL;
	f = fopen(path, "w");
	pl__options_write_config(m, f);
	fclose(f);
	b_ratio = 0;
	TAP_OK(pl__config_load(m, path, err, sizeof(err)) == 0 && b_ratio == 0.1 + 0.2,
	       "a double reads back exactly");
	TAP_OK(b_out == NULL, "an unset string stays unset");
	unlink(path);

	pl__options_free(m);
	pl__options_table_free(m);
	pl__options_table_free(NULL);
	return tap_done();
}
