/* See options.h. */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static bool name_eq(const char *a, const char *b, size_t blen)
{
	size_t i;

	for (i = 0; i < blen; i++) {
		char ca = a[i] == '_' ? '-' : a[i];
		char cb = b[i] == '_' ? '-' : b[i];

		if (ca == '\0' || ca != cb)
			return false;
	}
	return a[blen] == '\0';
}

static const struct pl_option *find(const struct pl_option *table, const char *name,
				    size_t len)
{
	for (; table->name; table++) {
		if (name_eq(table->name, name, len))
			return table;
	}
	return NULL;
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

static int set_value(const struct pl_option *o, const char *value, char *err, size_t errlen)
{
	char *end;

	switch (o->type) {
	case PL_OPT_BOOL:
		if (parse_bool(value, o->target) < 0) {
			seterr(err, errlen, "%s: '%s' is not a boolean (use yes or no)", o->name,
			       value);
			return -EINVAL;
		}
		return 0;
	case PL_OPT_INT:
	case PL_OPT_HEX: {
		long v;

		errno = 0;
		v = strtol(value, &end, 0);
		if (errno || end == value || *end != '\0') {
			seterr(err, errlen, "%s: '%s' is not an integer", o->name, value);
			return -EINVAL;
		}
		if ((double)v < o->min || (double)v > o->max) {
			if (o->type == PL_OPT_HEX)
				seterr(err, errlen, "%s: %s is outside 0x%lx..0x%lx", o->name, value,
				       (long)o->min, (long)o->max);
			else
				seterr(err, errlen, "%s: %ld is outside %.0f..%.0f", o->name, v,
				       o->min, o->max);
			return -EINVAL;
		}
		*(long *)o->target = v;
		return 0;
	}
	case PL_OPT_DOUBLE: {
		double v;

		errno = 0;
		v = strtod(value, &end);
		if (errno || end == value || *end != '\0' || !isfinite(v)) {
			seterr(err, errlen, "%s: '%s' is not a number", o->name, value);
			return -EINVAL;
		}
		if (v < o->min || v > o->max) {
			seterr(err, errlen, "%s: %g is outside %g..%g", o->name, v, o->min, o->max);
			return -EINVAL;
		}
		*(double *)o->target = v;
		return 0;
	}
	case PL_OPT_STRING: {
		char **dst = o->target;
		char *copy = strdup(value);

		if (!copy) {
			seterr(err, errlen, "%s: out of memory", o->name);
			return -ENOMEM;
		}
		free(*dst);
		*dst = copy;
		return 0;
	}
	}
	return -EINVAL;
}

int pl__option_set(const struct pl_option *table, const char *name, const char *value,
		   char *err, size_t errlen)
{
	const struct pl_option *o = find(table, name, strlen(name));

	if (!o) {
		seterr(err, errlen, "unknown option '%s'", name);
		return -ENOENT;
	}
	return set_value(o, value, err, errlen);
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* One line of a config file; err receives the message without position. */
static int load_line(const struct pl_option *table, char *line, char *err, size_t errlen)
{
	char *eq, *key, *value;
	size_t vlen;
	const struct pl_option *o;

	line = trim(line);
	if (*line == '\0' || *line == '#')
		return 0;
	eq = strchr(line, '=');
	if (!eq) {
		seterr(err, errlen, "expected 'key = value', got '%.60s'", line);
		return -EINVAL;
	}
	*eq = '\0';
	key = trim(line);
	value = trim(eq + 1);
	if (*key == '\0') {
		seterr(err, errlen, "missing key before '='");
		return -EINVAL;
	}
	vlen = strlen(value);
	if (vlen >= 2 && value[0] == '"' && value[vlen - 1] == '"') {
		value[vlen - 1] = '\0';
		value++;
	} else if (value[0] == '"') {
		seterr(err, errlen, "%s: unterminated quote", key);
		return -EINVAL;
	} else {
		char *hash = strchr(value, '#');

		if (hash) {
			*hash = '\0';
			value = trim(value);
		}
	}
	o = find(table, key, strlen(key));
	if (!o) {
		seterr(err, errlen, "unknown key '%.60s'", key);
		return -EINVAL;
	}
	return set_value(o, value, err, errlen);
}

int pl__config_load(const struct pl_option *table, const char *path, char *err,
		    size_t errlen)
{
	char msg[PL_ERRBUF];
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int ret = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		int e = errno;

		seterr(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		if (strlen(line) > 4096) {
			seterr(err, errlen, "%s:%u: line too long", path, lineno);
			ret = -EINVAL;
			break;
		}
		if (load_line(table, line, msg, sizeof(msg)) < 0) {
			seterr(err, errlen, "%s:%u: %s", path, lineno, msg);
			ret = -EINVAL;
			break;
		}
	}
	if (ret == 0 && ferror(f)) {
		seterr(err, errlen, "%s: read error", path);
		ret = -EIO;
	}
	free(line);
	fclose(f);
	return ret;
}

int pl__options_parse_argv(const struct pl_option *table, int argc, char **argv, int *next,
			   char *err, size_t errlen)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *name, *eq, *value = NULL;
		const struct pl_option *o;
		size_t len;

		if (strcmp(arg, "--") == 0) {
			i++;
			break;
		}
		if (strncmp(arg, "--", 2) != 0)
			break;
		if (strcmp(arg, "--help") == 0) {
			*next = i + 1;
			return 1;
		}
		name = arg + 2;
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		o = find(table, name, len);
		if (!o) {
			seterr(err, errlen, "unknown option '--%.*s' (see --help)", (int)len, name);
			*next = i;
			return -EINVAL;
		}
		if (eq) {
			value = eq + 1;
		} else if (o->type == PL_OPT_BOOL) {
			value = "yes";
		} else if (i + 1 < argc) {
			value = argv[++i];
		} else {
			seterr(err, errlen, "option '--%s' needs a value", o->name);
			*next = i;
			return -EINVAL;
		}
		if (set_value(o, value, err, errlen) < 0) {
			*next = i;
			return -EINVAL;
		}
	}
	*next = i;
	return 0;
}

void pl__options_print_help(const struct pl_option *table, FILE *out)
{
	for (; table->name; table++) {
		char flag[64];

		if (table->type == PL_OPT_BOOL)
			snprintf(flag, sizeof(flag), "--%s", table->name);
		else
			snprintf(flag, sizeof(flag), "--%s %s", table->name,
				 table->metavar ? table->metavar : "VALUE");
		fprintf(out, "  %-28s %s", flag, table->help ? table->help : "");
		switch (table->type) {
		case PL_OPT_BOOL:
			fprintf(out, " (default: %s)", *(bool *)table->target ? "yes" : "no");
			break;
		case PL_OPT_INT:
			fprintf(out, " (default: %ld)", *(long *)table->target);
			break;
		case PL_OPT_HEX:
			fprintf(out, " (default: 0x%04lx)", *(long *)table->target);
			break;
		case PL_OPT_DOUBLE:
			fprintf(out, " (default: %g)", *(double *)table->target);
			break;
		case PL_OPT_STRING:
			if (*(char **)table->target)
				fprintf(out, " (default: %s)", *(char **)table->target);
			break;
		}
		fputc('\n', out);
	}
}

void pl__options_free(const struct pl_option *table)
{
	for (; table->name; table++) {
		if (table->type == PL_OPT_STRING) {
			free(*(char **)table->target);
			*(char **)table->target = NULL;
		}
	}
}

int pl__options_merge(struct pl_option **out, const struct pl_option *const *tables,
		      const char *const *prefixes, size_t n, char *err, size_t errlen)
{
	const struct pl_option *o;
	struct pl_option *merged;
	size_t count = 0, i, k = 0;

	for (i = 0; i < n; i++) {
		for (o = tables[i]; o->name; o++)
			count++;
	}
	merged = calloc(count + 1, sizeof(*merged));
	if (!merged) {
		seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		const char *prefix = prefixes && prefixes[i] ? prefixes[i] : "";

		for (o = tables[i]; o->name; o++) {
			size_t plen = strlen(prefix), nlen = strlen(o->name);
			char *name = malloc(plen + nlen + 1);

			if (!name) {
				pl__options_table_free(merged);
				seterr(err, errlen, "out of memory");
				return -ENOMEM;
			}
			memcpy(name, prefix, plen);
			memcpy(name + plen, o->name, nlen + 1);
			if (find(merged, name, plen + nlen)) {
				seterr(err, errlen, "option '%s' is defined twice", name);
				free(name);
				pl__options_table_free(merged);
				return -EEXIST;
			}
			merged[k] = *o;
			merged[k].name = name;
			k++;
		}
	}
	*out = merged;
	return 0;
}

void pl__options_table_free(struct pl_option *table)
{
	struct pl_option *o;

	if (!table)
		return;
	for (o = table; o->name; o++)
		free((char *)o->name);
	free(table);
}

/* The shortest %g form that reads back as the same double. */
static void print_double(FILE *out, double v)
{
	char buf[40];
	int prec;

	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	snprintf(buf, sizeof(buf), "%.*g", prec, v);
	fputs(buf, out);
}

int pl__options_write_config(const struct pl_option *table, FILE *out)
{
	for (; table->name; table++) {
		const char *s;

		switch (table->type) {
		case PL_OPT_BOOL:
			fprintf(out, "%s = %s\n", table->name,
				*(bool *)table->target ? "yes" : "no");
			break;
		case PL_OPT_INT:
			fprintf(out, "%s = %ld\n", table->name, *(long *)table->target);
			break;
		case PL_OPT_HEX:
			fprintf(out, "%s = 0x%04lx\n", table->name, *(long *)table->target);
			break;
		case PL_OPT_DOUBLE:
			fprintf(out, "%s = ", table->name);
			print_double(out, *(double *)table->target);
			fputc('\n', out);
			break;
		case PL_OPT_STRING:
			s = *(char **)table->target;
			if (!s)
				fprintf(out, "# %s = (unset)\n", table->name);
			else if (strchr(s, '\n'))
				fprintf(out, "# %s = (a value with a newline)\n", table->name);
			else
				/* The loader strips one pair of outer quotes and
				 * keeps everything between them. */
				fprintf(out, "%s = \"%s\"\n", table->name, s);
			break;
		}
	}
	return ferror(out) ? -EIO : 0;
}
