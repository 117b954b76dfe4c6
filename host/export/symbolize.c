/* See symbolize.h. Each stack's frames are read as the device wrote them
 * ("outer;...;inner"); a frame "MODULE+0xOFFSET" whose MODULE the window
 * lists once, with a build-id, is looked up in that build-id's debug file
 * (debug_files.h) and replaced by the function's name; every other frame
 * is kept byte for byte. The writers (pprof, the trace, report.html,
 * stacks.folded) then see names as if the device had sent them. */
#include "symbolize.h"
#include "debug_files.h"
#include "demangle.h"
#include "log.h"
#include "recording.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* An innermost line of a named function and its samples, for the
 * function's hottest line. */
struct hot_line {
	char *function, *file;
	uint64_t line, count;
};

struct pass {
	struct pl_recording *r;
	struct pl_debug_files *df;
	struct hot_line *lines;
	size_t n_lines, cap_lines;
	char *out; /* the stack being rewritten */
	size_t len, cap;
	uint64_t module_frames, named, ambiguous;
};

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "NAME+0xHEX" (offset 0 is written "NAME+0"): the length of NAME and the
 * offset. */
static bool module_frame(const char *frame, size_t len, size_t *name_len, uint64_t *offset)
{
	const char *plus = memrchr(frame, '+', len), *p, *end = frame + len;

	if (!plus || plus == frame)
		return false;
	*name_len = (size_t)(plus - frame);
	*offset = 0;
	if (end - plus == 2 && plus[1] == '0')
		return true;
	if (end - plus < 4 || plus[1] != '0' || plus[2] != 'x' || end - plus > 3 + 16)
		return false;
	for (p = plus + 3; p < end; p++) {
		int d = hex_digit(*p);

		if (d < 0)
			return false;
		*offset = *offset << 4 | (uint64_t)d;
	}
	return true;
}

/* The window's module of that name; NULL when none, or when two listed
 * under it differ (their frames cannot be told apart). */
static const struct pl_recorded_module *module_named(const struct pl_recording *r,
						     const struct pl_recorded_window *w,
						     const char *name, size_t len, bool *ambiguous)
{
	const struct pl_recorded_module *found = NULL;
	size_t i;

	*ambiguous = false;
	for (i = w->first_module; i < w->first_module + w->n_modules && i < r->n_modules; i++) {
		const struct pl_recorded_module *m = &r->modules[i];

		if (strlen(m->name) != len || memcmp(m->name, name, len) != 0)
			continue;
		if (found && strcmp(found->build_id, m->build_id) != 0) {
			*ambiguous = true;
			return NULL;
		}
		found = m;
	}
	return found;
}

static int append(struct pass *p, const char *s, size_t n)
{
	if (p->len + n + 1 > p->cap) {
		size_t cap = p->cap ? p->cap : 256;
		char *v;

		while (p->len + n + 1 > cap)
			cap *= 2;
		if (!(v = realloc(p->out, cap)))
			return -ENOMEM;
		p->out = v;
		p->cap = cap;
	}
	memcpy(p->out + p->len, s, n);
	p->len += n;
	p->out[p->len] = '\0';
	return 0;
}

/* name as the folded stacks spell it: ' ' and ';' as '_' */
static int append_folded(struct pass *p, const char *name)
{
	size_t start = p->len, i;
	int err = append(p, name, strlen(name));

	for (i = start; err == 0 && i < p->len; i++)
		if (p->out[i] == ' ' || p->out[i] == ';')
			p->out[i] = '_';
	return err;
}

static int note_line(struct pass *p, const char *function, const char *file, int line,
		     uint64_t count)
{
	struct hot_line *h;
	size_t i;
	int err;

	for (i = 0; i < p->n_lines; i++) {
		h = &p->lines[i];
		if (h->line == (uint64_t)line && strcmp(h->function, function) == 0 &&
		    strcmp(h->file, file) == 0) {
			h->count += count;
			return 0;
		}
	}
	if ((err = pl__recording_grow((void **)&p->lines, &p->cap_lines, p->n_lines,
				      sizeof(*p->lines))) < 0)
		return err;
	h = &p->lines[p->n_lines];
	h->function = strdup(function);
	h->file = strdup(file);
	if (!h->function || !h->file) {
		free(h->function);
		free(h->file);
		return -ENOMEM;
	}
	h->line = (uint64_t)line;
	h->count = count;
	p->n_lines++;
	return 0;
}

/* The function named, with its module as the profiles' mapping. */
static int add_function(struct pass *p, const char *function, const char *module)
{
	struct pl_recorded_function *f = pl__recording_function_add(p->r, function);
	char name[PL_REC_NAME];

	if (!f)
		return -ENOMEM;
	if (!f->module) {
		pl__recording_copy_name(name, module); /* UTF-8 for protobuf strings */
		if (!(f->module = strdup(name)))
			return -ENOMEM;
	}
	return 0;
}

static int rewrite_stack(struct pass *p, const struct pl_recorded_window *w,
			 struct pl_recorded_stack *s)
{
	const char *frame = s->frames, *next;
	bool changed = false;
	int err = 0;

	p->len = 0;
	for (; err == 0; frame = next + 1) {
		const struct pl_recorded_module *m;
		struct pl_debug_name dn;
		size_t len, name_len;
		uint64_t offset;
		bool ambiguous, innermost;

		next = strchr(frame, ';');
		innermost = !next;
		if (!next)
			next = frame + strlen(frame);
		len = (size_t)(next - frame);
		if (frame != s->frames)
			err = append(p, ";", 1);
		if (err == 0 && module_frame(frame, len, &name_len, &offset)) {
			p->module_frames++;
			m = module_named(p->r, w, frame, name_len, &ambiguous);
			p->ambiguous += ambiguous;
			if (m && pl__debug_files_name(p->df, m, offset, innermost, &dn)) {
				/* as the device shows C++ names */
				char *plain = pl__demangle(dn.function);
				const char *function = plain ? plain : dn.function;

				p->named++;
				changed = true;
				err = append_folded(p, function);
				if (err == 0)
					err = add_function(p, function, m->name);
				if (err == 0 && dn.file)
					err = note_line(p, function, dn.file, dn.line, s->count);
				free(plain);
				if (innermost)
					break;
				continue;
			}
		}
		if (err == 0)
			err = append(p, frame, len);
		if (innermost)
			break;
	}
	if (err == 0 && changed) {
		char *frames = strdup(p->out);

		if (!frames)
			return -ENOMEM;
		free(s->frames);
		s->frames = frames;
	}
	return err;
}

/* Each named function's hottest innermost line, unless the device's
 * report gave one. */
static int take_lines(struct pass *p)
{
	size_t i, k;

	for (i = 0; i < p->n_lines; i++) {
		struct hot_line *h = &p->lines[i];
		struct pl_recorded_function *f;
		bool hottest = true;

		for (k = 0; k < p->n_lines && hottest; k++)
			if (k != i && strcmp(p->lines[k].function, h->function) == 0 &&
			    (p->lines[k].count > h->count || (p->lines[k].count == h->count && k < i)))
				hottest = false;
		if (!hottest)
			continue;
		if (!(f = pl__recording_function_add(p->r, h->function)))
			return -ENOMEM;
		if (!f->file) {
			if (!(f->file = strdup(h->file)))
				return -ENOMEM;
			f->line = h->line;
		}
	}
	return 0;
}

int pl__recording_symbolize(struct pl_recording *r, const struct pl_symbol_dirs *dirs)
{
	struct pass p;
	size_t w, i;
	int err = 0;

	if (!dirs || (!dirs->sysroot && !dirs->debug_dir))
		return 0;
	memset(&p, 0, sizeof(p));
	p.r = r;
	if (!(p.df = pl__debug_files_new(dirs, &err))) {
		if (err == -ENOTSUP)
			pl__log_warnx("--sysroot, --debug-dir: this perflink-host was built without "
				      "elfutils' libdw, frames stay module+offset");
		return err;
	}
	for (w = 0; w < r->n_windows && err == 0; w++) {
		const struct pl_recorded_window *win = &r->windows[w];

		for (i = win->first_stack; i < win->first_stack + win->n_stacks && i < r->n_stacks &&
					   err == 0;
		     i++)
			err = rewrite_stack(&p, win, &r->stacks[i]);
	}
	if (err == 0)
		err = take_lines(&p);
	pl__recording_functions_sorted(r);
	pl__debug_files_free(p.df);
	if (err == 0 && p.module_frames)
		pl__log_info("debug files named %llu of the %llu module+offset frames of the render "
			     "windows' stacks%s",
			     (unsigned long long)p.named, (unsigned long long)p.module_frames,
			     p.ambiguous ? " (some modules' names were listed twice in a window: "
					   "their frames stay as they are)"
					 : "");
	for (i = 0; i < p.n_lines; i++) {
		free(p.lines[i].function);
		free(p.lines[i].file);
	}
	free(p.lines);
	free(p.out);
	return err;
}
