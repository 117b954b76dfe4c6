/* DIR/telemetry/render_window.jsonl: the render sampler's windows as the
 * device sent them (preload/sampler/sampler_forward.c), one JSON line a
 * window:
 *   {"type":"render_window","pid":N,"comm":"...","tid":N,"mono_ns":N,
 *    "window_s":N,"sample_period_ns":N,"report":"<text>","folded":"<stacks>",
 *    "modules":[{"name":S,"path":S,"build_id":HEX},...],
 *    "samples":[[MONO_NS,LINE],...],"samples_dropped":N}
 * The folded text gives the stacks and their counts; the report is read
 * only for what the folded text leaves out: each function's module (its
 * rankings say "hot_a (renderer)") and the file:line of its hottest
 * innermost line ("spin.h:10 hot_a"). A line that is not valid JSON, or
 * lacks pid or folded, is skipped and counted; so is a folded line that
 * does not parse (bad_stack_lines), and the window keeps the rest. A
 * timed sample names its stack by the folded line (from 0) it went into;
 * one that names no line that parsed is kept without a stack, and a
 * sample that is not two numbers is left out. A module without a name is
 * left out, a build-id that is not hex (of whole bytes, at most 64) is
 * taken as none: a host must never pick a debug file by a guess. */
#include "proc_parse.h"
#include "recording.h"
#include "json_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SAMPLES 65536 /* timed samples in one line; the device sends 4096 at most */
#define MAX_MODULES 1024  /* modules in one line; the device keeps 128 */
#define MODULE_TEXT_MAX 4096 /* a module's name or path, longer is cut */

struct listed_module {
	char *name, *path;
	char build_id[PL_REC_BUILD_ID_HEX + 1];
};

struct timed {
	uint64_t mono_ns;
	int64_t line;
	uint8_t seen; /* a bit a field */
};

struct window_line {
	struct pl_recording *r;
	int err;
	bool have_pid, have_type;
	int64_t pid;
	uint64_t window_s, period_ns;
	char comm[PL_REC_NAME];
	char *folded, *report;
	uint64_t tid, dropped;
	struct timed *timed; /* kept across lines, reset for each */
	size_t n_timed, cap_timed;
	struct listed_module *modules; /* this line's */
	size_t n_modules, cap_modules;
};

/* The hex of whole bytes, lowercased into out, or "" */
static void take_build_id(char *out, const char *hex)
{
	size_t n = strlen(hex), i;

	out[0] = '\0';
	if (n == 0 || n % 2 || n > PL_REC_BUILD_ID_HEX || strspn(hex, "0123456789abcdefABCDEF") != n)
		return;
	for (i = 0; i < n; i++)
		out[i] = (char)(hex[i] >= 'A' && hex[i] <= 'F' ? hex[i] - 'A' + 'a' : hex[i]);
	out[n] = '\0';
}

static void on_module(struct window_line *w, size_t index, const char *rest, const char *value)
{
	struct listed_module *m;
	char **text = NULL;

	m = pl__recording_item_at((void **)&w->modules, &w->n_modules, &w->cap_modules, sizeof(*m),
				  index);
	if (!m) {
		w->err = -ENOMEM;
		return;
	}
	if (strcmp(rest, "name") == 0)
		text = &m->name;
	else if (strcmp(rest, "path") == 0)
		text = &m->path;
	else if (strcmp(rest, "build_id") == 0)
		take_build_id(m->build_id, value);
	if (text && !*text && !(*text = strndup(value, MODULE_TEXT_MAX)))
		w->err = -ENOMEM;
}

static void free_modules(struct window_line *w)
{
	size_t i;

	for (i = 0; i < w->n_modules; i++) {
		free(w->modules[i].name);
		free(w->modules[i].path);
	}
	w->n_modules = 0;
}

static void on_sample(struct window_line *w, size_t index, const char *rest, const char *value)
{
	struct timed *t;
	char *end;

	t = pl__recording_item_at((void **)&w->timed, &w->n_timed, &w->cap_timed, sizeof(*t), index);
	if (!t) {
		w->err = -ENOMEM;
		return;
	}
	if (strcmp(rest, "0") == 0 && pl__parse_u64_all(value, &t->mono_ns)) {
		t->seen |= 1;
	} else if (strcmp(rest, "1") == 0) {
		errno = 0;
		t->line = strtoll(value, &end, 10);
		if (errno == 0 && end != value && *end == '\0' && t->line >= -1)
			t->seen |= 2;
	}
}

static char *dup_or_note(struct window_line *w, const char *s)
{
	char *d = strdup(s);

	if (!d)
		w->err = -ENOMEM;
	return d;
}

static void on_scalar(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct window_line *w = ctx;
	char *end;

	if (strcmp(path, "type") == 0) {
		w->have_type = kind == PL_JSON_STRING && strcmp(value, "render_window") == 0;
	} else if (strcmp(path, "pid") == 0) {
		errno = 0;
		w->pid = strtoll(value, &end, 10);
		w->have_pid = errno == 0 && end != value && *end == '\0' && w->pid >= 0;
	} else if (strcmp(path, "comm") == 0) {
		/* pl__recording_copy_name keeps names UTF-8 for protobuf strings */
		pl__recording_copy_name(w->comm, value);
	} else if (strcmp(path, "window_s") == 0) {
		pl__parse_u64_all(value, &w->window_s);
	} else if (strcmp(path, "sample_period_ns") == 0) {
		if (!pl__parse_u64_all(value, &w->period_ns))
			w->period_ns = 0;
	} else if (strcmp(path, "folded") == 0 && kind == PL_JSON_STRING && !w->folded) {
		w->folded = dup_or_note(w, value);
	} else if (strcmp(path, "report") == 0 && kind == PL_JSON_STRING && !w->report) {
		w->report = dup_or_note(w, value);
	} else if (strcmp(path, "tid") == 0) {
		if (!pl__parse_u64_all(value, &w->tid) || w->tid >= (1u << 22))
			w->tid = 0;
	} else if (strcmp(path, "samples_dropped") == 0) {
		pl__parse_u64_all(value, &w->dropped);
	} else if (kind == PL_JSON_NUMBER) {
		size_t index;
		const char *rest = pl__recording_item_of(path, "samples", MAX_SAMPLES, &index);

		if (rest)
			on_sample(w, index, rest, value);
	} else if (kind == PL_JSON_STRING) {
		size_t index;
		const char *rest = pl__recording_item_of(path, "modules", MAX_MODULES, &index);

		if (rest)
			on_module(w, index, rest, value);
	}
}

/* The name as the folded stacks spell it (sampler_stacks.c append_frame):
 * ' ' and ';' as '_', cut where a module's " (" begins. malloc'd. */
static char *folded_name(const char *name, size_t len)
{
	const char *paren = strstr(name, " (");
	char *out;
	size_t i;

	if (paren && (size_t)(paren - name) < len)
		len = (size_t)(paren - name);
	out = malloc(len + 1);
	if (!out)
		return NULL;
	for (i = 0; i < len; i++)
		out[i] = name[i] == ' ' || name[i] == ';' ? '_' : name[i];
	out[len] = '\0';
	return out;
}

static struct pl_recorded_function *function_of(struct pl_recording *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n_functions; i++)
		if (strcmp(r->functions[i].name, name) == 0)
			return &r->functions[i];
	return NULL;
}

/* The entry for name (len bytes of a report line's name), made if new;
 * NULL with -ENOMEM in *err. */
static struct pl_recorded_function *function_for(struct pl_recording *r, const char *name,
						 size_t len, int *err)
{
	struct pl_recorded_function *f;
	char *key = folded_name(name, len);

	if (!key) {
		*err = -ENOMEM;
		return NULL;
	}
	if ((f = function_of(r, key))) {
		free(key);
		goto shown;
	}
	if ((*err = pl__recording_grow((void **)&r->functions, &r->cap_functions,
				       r->n_functions, sizeof(*r->functions))) < 0) {
		free(key);
		return NULL;
	}
	f = &r->functions[r->n_functions++];
	memset(f, 0, sizeof(*f));
	f->name = key;
shown:
	if (!f->shown) {
		const char *paren = strstr(name, " (");

		if (paren && (size_t)(paren - name) < len)
			len = (size_t)(paren - name);
		if (!(f->shown = strndup(name, len))) {
			*err = -ENOMEM;
			return NULL;
		}
	}
	return f;
}

/* "NAME (MODULE)" of the rankings by function */
static int take_module(struct pl_recording *r, const char *name)
{
	const char *open = strstr(name, " ("), *next;
	size_t len = strlen(name);
	struct pl_recorded_function *f;
	int err = 0;

	if (!open || len < 3 || name[len - 1] != ')')
		return 0; /* "[unknown] ADDRESS", "module+offset": no module said */
	while ((next = strstr(open + 2, " (")))
		open = next;
	if (!(f = function_for(r, name, (size_t)(open - name), &err)))
		return err;
	if (!f->module && !(f->module = strndup(open + 2, (size_t)(name + len - 1 - (open + 2)))))
		return -ENOMEM;
	return 0;
}

/* "FILE:LINE FUNCTION" of the ranking by line; "module+offset ..." (no
 * line tables on the device) says no line */
static int take_line(struct pl_recording *r, const char *entry)
{
	const char *space = strchr(entry, ' '), *colon;
	struct pl_recorded_function *f;
	uint64_t line;
	char digits[24];
	size_t n;
	int err = 0;

	if (!space || !space[1])
		return 0;
	colon = memrchr(entry, ':', (size_t)(space - entry));
	if (!colon || colon == entry)
		return 0;
	n = (size_t)(space - colon - 1);
	if (n == 0 || n >= sizeof(digits))
		return 0;
	memcpy(digits, colon + 1, n);
	digits[n] = '\0';
	if (!pl__parse_u64_all(digits, &line) || line == 0)
		return 0;
	if (!(f = function_for(r, space + 1, strlen(space + 1), &err)))
		return err;
	if (!f->file) {
		if (!(f->file = strndup(entry, (size_t)(colon - entry))))
			return -ENOMEM;
		f->line = line;
	}
	return 0;
}

/* The rankings' entries: "  65.2% NAME" under "-- TITLE" lines. */
static int read_report(struct pl_recording *r, char *report)
{
	enum { NONE, BY_FUNCTION, BY_LINE } section = NONE;
	char *line, *save = NULL;
	int err = 0;

	for (line = strtok_r(report, "\n", &save); line && err == 0;
	     line = strtok_r(NULL, "\n", &save)) {
		char *p = line, *end;

		if (strncmp(line, "-- ", 3) == 0) {
			section = strncmp(line + 3, "innermost line", 14) == 0 ? BY_LINE
				  : strncmp(line + 3, "on the stack", 12) == 0 ||
					  strncmp(line + 3, "innermost function", 18) == 0
				      ? BY_FUNCTION
				      : NONE;
			continue;
		}
		if (section == NONE)
			continue;
		while (*p == ' ')
			p++;
		strtod(p, &end);
		if (end == p || end[0] != '%' || end[1] != ' ' || !end[2])
			continue;
		err = section == BY_LINE ? take_line(r, end + 2) : take_module(r, end + 2);
	}
	return err;
}

/* "outer;...;inner COUNT": frames non-empty, the count a whole number > 0 */
static bool stack_of(char *line, uint64_t *count)
{
	char *space = strrchr(line, ' '), *p;

	if (!space || space == line || !pl__parse_u64_all(space + 1, count) || *count == 0)
		return false;
	*space = '\0';
	if (line[0] == ';' || space[-1] == ';')
		return false;
	for (p = line; *p; p++)
		if (p[0] == ';' && p[1] == ';')
			return false;
	return true;
}

/* Each folded line's stack (an index into r->stacks, -1 for one that did
 * not parse) goes to line_stack, grown as needed, for the timed samples. */
static int read_folded(struct pl_recording *r, struct pl_recorded_window *win, char *folded,
		       int64_t **line_stack, size_t *n_lines, size_t *cap_lines)
{
	char *line, *save = NULL;
	int err;

	*n_lines = 0;
	for (line = strtok_r(folded, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct pl_recorded_stack *s;
		uint64_t count;

		if ((err = pl__recording_grow((void **)line_stack, cap_lines, *n_lines,
					      sizeof(**line_stack))) < 0)
			return err;
		(*line_stack)[(*n_lines)++] = -1;
		if (!stack_of(line, &count)) {
			r->bad_stack_lines++;
			continue;
		}
		(*line_stack)[*n_lines - 1] = (int64_t)r->n_stacks;
		if ((err = pl__recording_grow((void **)&r->stacks, &r->cap_stacks, r->n_stacks,
					      sizeof(*r->stacks))) < 0)
			return err;
		s = &r->stacks[r->n_stacks];
		if (!(s->frames = strdup(line)))
			return -ENOMEM;
		s->count = count;
		r->n_stacks++;
		win->n_stacks++;
	}
	return 0;
}

/* The line's timed samples, their folded lines turned into stacks. */
static int take_samples(struct pl_recording *r, const struct window_line *w,
			const int64_t *line_stack, size_t n_lines)
{
	size_t i;
	int err;

	if (!w->tid)
		return 0; /* no thread to put them on */
	r->samples_dropped += w->dropped;
	for (i = 0; i < w->n_timed; i++) {
		const struct timed *t = &w->timed[i];
		struct pl_recorded_sample *s;

		if (t->seen != 3)
			continue;
		if ((err = pl__recording_grow((void **)&r->samples, &r->cap_samples, r->n_samples,
					      sizeof(*r->samples))) < 0)
			return err;
		s = &r->samples[r->n_samples++];
		s->pid = w->pid;
		s->tid = (uint32_t)w->tid;
		s->mono_ns = t->mono_ns;
		s->stack = t->line >= 0 && (size_t)t->line < n_lines ? line_stack[t->line] : -1;
	}
	return 0;
}

/* The line's named modules, owned by the recording from here. */
static int take_modules(struct pl_recording *r, struct pl_recorded_window *win,
			struct window_line *w)
{
	size_t i;
	int err;

	for (i = 0; i < w->n_modules; i++) {
		struct listed_module *l = &w->modules[i];
		struct pl_recorded_module *m;

		if (!l->name || !l->name[0])
			continue;
		if ((err = pl__recording_grow((void **)&r->modules, &r->cap_modules, r->n_modules,
					      sizeof(*r->modules))) < 0)
			return err;
		m = &r->modules[r->n_modules++];
		m->name = l->name;
		m->path = l->path;
		memcpy(m->build_id, l->build_id, sizeof(m->build_id));
		l->name = l->path = NULL;
		win->n_modules++;
	}
	return 0;
}

static int window_line(void *ctx, const char *text, size_t len)
{
	struct window_line *w = ctx;
	struct pl_recording *r = w->r;
	struct pl_recorded_window *win;
	struct timed *timed = w->timed;
	struct listed_module *modules = w->modules;
	size_t cap_timed = w->cap_timed, cap_modules = w->cap_modules;
	int64_t *line_stack = NULL;
	size_t n_lines = 0, cap_lines = 0;
	int err;

	free(w->folded);
	free(w->report);
	free_modules(w);
	memset(w, 0, sizeof(*w));
	w->r = r;
	w->timed = timed;
	w->cap_timed = cap_timed;
	w->modules = modules;
	w->cap_modules = cap_modules;
	err = pl__json_walk(text, len, on_scalar, w);
	if (w->err < 0)
		return w->err;
	if (err == -ENOMEM)
		return err;
	if (err < 0 || !w->have_type || !w->have_pid || !w->folded)
		return 1;
	if ((err = pl__recording_grow((void **)&r->windows, &r->cap_windows, r->n_windows,
				      sizeof(*r->windows))) < 0)
		return err;
	win = &r->windows[r->n_windows++];
	memset(win, 0, sizeof(*win));
	win->pid = w->pid;
	memcpy(win->comm, w->comm, sizeof(win->comm));
	win->window_s = w->window_s;
	win->period_ns = w->period_ns;
	win->first_stack = r->n_stacks;
	win->first_module = r->n_modules;
	err = read_folded(r, win, w->folded, &line_stack, &n_lines, &cap_lines);
	if (err == 0)
		err = take_samples(r, w, line_stack, n_lines);
	if (err == 0)
		err = take_modules(r, win, w);
	free(line_stack);
	if (err < 0)
		return err;
	return w->report ? read_report(r, w->report) : 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct pl_recorded_function *)a)->name,
		      ((const struct pl_recorded_function *)b)->name);
}

struct pl_recorded_function *pl__recording_function_add(struct pl_recording *r, const char *shown)
{
	int err = 0;

	return function_for(r, shown, strlen(shown), &err);
}

void pl__recording_functions_sorted(struct pl_recording *r)
{
	if (r->n_functions)
		qsort(r->functions, r->n_functions, sizeof(*r->functions), by_name);
}

int pl__recording_read_render_windows(struct pl_recording *r, int dir_fd)
{
	struct window_line w = { .r = r };
	int err;

	err = pl__recording_each_line(r, dir_fd, PL_REC_RENDER_WINDOW, window_line, &w);
	free(w.folded);
	free(w.report);
	free(w.timed);
	free_modules(&w);
	free(w.modules);
	/* for pl__recording_function's bsearch */
	pl__recording_functions_sorted(r);
	return err;
}

const struct pl_recorded_function *pl__recording_function(const struct pl_recording *r,
							  const char *name)
{
	struct pl_recorded_function key = { .name = (char *)name };

	if (!r->n_functions)
		return NULL;
	return bsearch(&key, r->functions, r->n_functions, sizeof(*r->functions), by_name);
}
