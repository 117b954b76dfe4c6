/* Reading a trace CSV back (trace_rows.h). */
#include "trace_rows.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "read_file.h"

/* The next comma-separated field of line, NUL-terminated in place. */
static char *field(char **line)
{
	char *f = *line, *c;

	if (!f)
		return NULL;
	c = strchr(f, ',');
	if (c) {
		*c = '\0';
		*line = c + 1;
	} else {
		*line = NULL;
	}
	return f;
}

static int number(const char *s, double *out)
{
	char *end;

	if (!s || !*s)
		return -EINVAL;
	*out = strtod(s, &end);
	return *end == '\0' && isfinite(*out) ? 0 : -EINVAL;
}

/* wall,mono,proc,pid,state,d_wchar_kB,d_wbytes_kB,d_blkio_ms,... */
static int parse_row(char *line, struct trace_row *r, int *is_sys)
{
	double wall, pid;
	const char *proc, *state;

	if (number(field(&line), &wall) < 0 || number(field(&line), &r->mono) < 0)
		return -EINVAL;
	proc = field(&line);
	if (!proc || strlen(proc) >= sizeof(r->proc) || number(field(&line), &pid) < 0 ||
	    pid < 0 || pid > 1 << 30)
		return -EINVAL;
	strcpy(r->proc, proc);
	state = field(&line);
	if (!state || strlen(state) != 1)
		return -EINVAL;
	r->pid = (int)pid;
	r->state = state[0];
	*is_sys = strcmp(proc, "SYS") == 0 && r->pid == 0;
	if (*is_sys) {
		r->d_wchar_kb = r->d_wbytes_kb = r->d_blkio_ms = 0;
		return 0;
	}
	if (number(field(&line), &r->d_wchar_kb) < 0 ||
	    number(field(&line), &r->d_wbytes_kb) < 0 || number(field(&line), &r->d_blkio_ms) < 0)
		return -EINVAL;
	return 0;
}

static void add_tick(struct trace_rows *rows, double mono)
{
	/* a power of two, the array's capacity, is where it grows */
	if ((rows->sys & (rows->sys - 1)) == 0 &&
	    !(rows->tick = realloc(rows->tick, (rows->sys ? rows->sys * 2 : 1) * sizeof(double))))
		abort();
	if (rows->sys && mono - rows->last_sys_mono > rows->longest_tick_s)
		rows->longest_tick_s = mono - rows->last_sys_mono;
	rows->tick[rows->sys++] = mono;
	rows->last_sys_mono = mono;
}

/* A tick's rows come before its SYS row, and ticks in order of time. */
static void set_until(struct trace_rows *rows)
{
	size_t t = 0;

	for (size_t i = 0; i < rows->n; i++) {
		while (t < rows->sys && rows->tick[t] <= rows->v[i].mono)
			t++;
		rows->v[i].until = t < rows->sys ? rows->tick[t] : INFINITY;
	}
}

int trace_rows_load(const char *path, struct trace_rows *rows)
{
	char *text, *line, *nl;
	size_t cap = 0;

	memset(rows, 0, sizeof(*rows));
	rows->last_sys_mono = -1;
	if (!(text = test_read_file(path)))
		return -errno;
	nl = strchr(text, '\n');
	if (!nl) {
		free(text);
		return -ENODATA;
	}
	rows->header = strndup(text, (size_t)(nl - text + 1));
	for (line = nl + 1; *line; line = nl + 1) {
		struct trace_row r;
		int is_sys;

		if (!(nl = strchr(line, '\n'))) {
			rows->malformed++; /* the writer was stopped inside a line */
			break;
		}
		*nl = '\0';
		if (parse_row(line, &r, &is_sys) < 0) {
			rows->malformed++;
			continue;
		}
		if (is_sys) {
			add_tick(rows, r.mono);
			continue;
		}
		if (rows->n == cap) {
			cap = cap ? cap * 2 : 256;
			if (!(rows->v = realloc(rows->v, cap * sizeof(*rows->v))))
				abort();
		}
		rows->v[rows->n++] = r;
	}
	free(text);
	set_until(rows);
	return rows->header ? 0 : -ENOMEM;
}

void trace_rows_free(struct trace_rows *rows)
{
	free(rows->header);
	free(rows->v);
	free(rows->tick);
	memset(rows, 0, sizeof(*rows));
}
