/* One table of options serves a program's config file and its command line:
 * every config key is also a flag (`key = value` in the file, `--key value` or
 * `--key=value` on the command line; '-' and '_' are the same in names).
 *
 * Errors are written into a caller's buffer as a complete sentence, with
 * "FILE:LINE: " in front when they come from a file, so that a program can
 * print it and refuse to start. */
#ifndef PL_COMMON_OPTIONS_H
#define PL_COMMON_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum pl_opt_type {
	PL_OPT_BOOL,   /* bool *: "1/0/yes/no/true/false/on/off"; a bare flag is true */
	PL_OPT_INT,    /* long *, within [min, max] */
	PL_OPT_HEX,    /* as PL_OPT_INT, shown in hexadecimal (USB ids) */
	PL_OPT_DOUBLE, /* double *, within [min, max] */
	PL_OPT_STRING, /* char **: owned (NULL or malloc-ed), replaced with strdup on each set */
};

struct pl_option {
	const char *name;
	enum pl_opt_type type;
	void *target;
	double min, max; /* for INT and DOUBLE */
	const char *metavar;
	const char *help;
};

#define PL_OPT_END { NULL, PL_OPT_BOOL, NULL, 0, 0, NULL, NULL }
#define PL_ERRBUF 512

/* Set one option by name. 0, or -EINVAL/-ENOENT with err filled. */
int pl__option_set(const struct pl_option *table, const char *name, const char *value,
		   char *err, size_t errlen);

/* Read a key = value file: '#' starts a comment, blank lines are ignored,
 * values may be quoted with "". The first bad line stops the load with
 * "path:line: what" in err. -ENOENT (with err filled) when the file is
 * missing, so that callers can decide whether a missing file is fine. */
int pl__config_load(const struct pl_option *table, const char *path, char *err,
		    size_t errlen);

/* Parse argv[1..] up to the first argument that is not an option (or "--").
 * *next is set to the index of the first unparsed argument. Returns 0, 1 when
 * --help was given, or -EINVAL with err filled. */
int pl__options_parse_argv(const struct pl_option *table, int argc, char **argv, int *next,
			   char *err, size_t errlen);

/* One line per option: "  --name METAVAR  help (default: current value)". */
void pl__options_print_help(const struct pl_option *table, FILE *out);

/* Free the strings the table owns. */
void pl__options_free(const struct pl_option *table);

/* Several tables as one, for a program that offers other parts' options as
 * its own: *out receives a malloc-ed table holding the entries of tables[0]
 * to tables[n - 1] in order, each name prefixed with prefixes[i] (NULL or ""
 * for none), ending in PL_OPT_END. Targets are shared with the originals.
 * Two entries with the same resulting name ('-' and '_' alike) are -EEXIST,
 * with err filled. Free with pl__options_table_free. */
int pl__options_merge(struct pl_option **out, const struct pl_option *const *tables,
		      const char *const *prefixes, size_t n, char *err, size_t errlen);
/* Free a table from pl__options_merge: its names and itself, not the values
 * (pl__options_free does those). NULL is fine. */
void pl__options_table_free(struct pl_option *table);

/* Write the current values in config file syntax, one "name = value" line per
 * option, such that pl__config_load reads back the same values. An unset
 * string is written as a comment; so is one that cannot be written (it holds
 * a newline). 0, or -EIO when out failed. */
int pl__options_write_config(const struct pl_option *table, FILE *out);

#endif
