/* Reading resources.jsonl lines in the resource sampler's tests: each line
 * is walked with common/json_reader.h into (dotted path, value) pairs, so
 * that a test asks for "procs.0.threads.2.comm". Test code: aborts on
 * allocation failure. */
#ifndef PL_TEST_RESOURCES_JSONL_H
#define PL_TEST_RESOURCES_JSONL_H

#include "json_reader.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct jl_kv {
	char *path, *value;
	enum pl_json_kind kind;
};

struct jl_doc {
	struct jl_kv *kv;
	size_t n, cap;
	bool ok; /* the line was one well-formed JSON value */
};

static void jl_cb(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct jl_doc *d = ctx;

	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 256;
		d->kv = realloc(d->kv, d->cap * sizeof(*d->kv));
		if (!d->kv)
			abort();
	}
	d->kv[d->n].path = strdup(path);
	d->kv[d->n].value = strdup(value);
	d->kv[d->n].kind = kind;
	if (!d->kv[d->n].path || !d->kv[d->n].value)
		abort();
	d->n++;
}

static inline void jl_free(struct jl_doc *d)
{
	size_t i;

	for (i = 0; i < d->n; i++) {
		free(d->kv[i].path);
		free(d->kv[i].value);
	}
	free(d->kv);
	memset(d, 0, sizeof(*d));
}

static inline bool jl_parse(struct jl_doc *d, const char *line, size_t len)
{
	memset(d, 0, sizeof(*d));
	d->ok = pl__json_walk(line, len, jl_cb, d) == 0;
	return d->ok;
}

static inline const struct jl_kv *jl_vfind(const struct jl_doc *d, const char *fmt, va_list ap)
{
	char path[PL_JSON_READ_PATH];
	size_t i;

	vsnprintf(path, sizeof(path), fmt, ap);
	for (i = 0; i < d->n; i++) {
		if (strcmp(d->kv[i].path, path) == 0)
			return &d->kv[i];
	}
	return NULL;
}

static inline const struct jl_kv *jl_find(const struct jl_doc *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline const struct jl_kv *jl_find(const struct jl_doc *d, const char *fmt, ...)
{
	const struct jl_kv *kv;
	va_list ap;

	va_start(ap, fmt);
	kv = jl_vfind(d, fmt, ap);
	va_end(ap);
	return kv;
}

/* The string or number at the path, or NULL when absent. */
static inline const char *jl_str(const struct jl_doc *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline const char *jl_str(const struct jl_doc *d, const char *fmt, ...)
{
	const struct jl_kv *kv;
	va_list ap;

	va_start(ap, fmt);
	kv = jl_vfind(d, fmt, ap);
	va_end(ap);
	return kv ? kv->value : NULL;
}

#define JL_MISSING UINT64_MAX

/* A non-negative integer at the path, or JL_MISSING when absent or not one. */
static inline uint64_t jl_u64(const struct jl_doc *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline uint64_t jl_u64(const struct jl_doc *d, const char *fmt, ...)
{
	const struct jl_kv *kv;
	char *end;
	uint64_t v;
	va_list ap;

	va_start(ap, fmt);
	kv = jl_vfind(d, fmt, ap);
	va_end(ap);
	if (!kv || kv->kind != PL_JSON_NUMBER || kv->value[0] == '-')
		return JL_MISSING;
	v = strtoull(kv->value, &end, 10);
	return *end == '\0' ? v : JL_MISSING;
}

static inline double jl_double(const struct jl_doc *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline double jl_double(const struct jl_doc *d, const char *fmt, ...)
{
	const struct jl_kv *kv;
	va_list ap;

	va_start(ap, fmt);
	kv = jl_vfind(d, fmt, ap);
	va_end(ap);
	if (!kv || kv->kind != PL_JSON_NUMBER)
		return -1;
	return strtod(kv->value, NULL);
}

/* Does any scalar live at or under the path? */
static inline bool jl_has(const struct jl_doc *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline bool jl_has(const struct jl_doc *d, const char *fmt, ...)
{
	char path[PL_JSON_READ_PATH];
	size_t i, len;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	len = strlen(path);
	for (i = 0; i < d->n; i++) {
		if (strncmp(d->kv[i].path, path, len) == 0 &&
		    (d->kv[i].path[len] == '\0' || d->kv[i].path[len] == '.'))
			return true;
	}
	return false;
}

/* Elements of the array at the path that hold at least one scalar. */
static inline size_t jl_len(const struct jl_doc *d, const char *path)
{
	size_t n = 0;

	while (jl_has(d, "%s.%zu", path, n))
		n++;
	return n;
}

/* Index of the element of array `path` whose `key` is the string or number
 * `value`, or -1. */
static inline int jl_index(const struct jl_doc *d, const char *path, const char *key,
			   const char *value)
{
	size_t i, n = jl_len(d, path);

	for (i = 0; i < n; i++) {
		const char *v = jl_str(d, "%s.%zu.%s", path, i, key);

		if (v && strcmp(v, value) == 0)
			return (int)i;
	}
	return -1;
}

/* All lines of a JSONL text. */
struct jl_lines {
	struct jl_doc *doc;
	size_t n;
	bool all_ok;
};

static inline void jl_lines_parse(struct jl_lines *l, const char *text)
{
	const char *s = text;

	memset(l, 0, sizeof(*l));
	l->all_ok = true;
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);

		l->doc = realloc(l->doc, (l->n + 1) * sizeof(*l->doc));
		if (!l->doc)
			abort();
		if (!jl_parse(&l->doc[l->n], s, len))
			l->all_ok = false;
		l->n++;
		if (!nl) {
			l->all_ok = false; /* every line must end in '\n' */
			break;
		}
		s = nl + 1;
	}
}

static inline void jl_lines_free(struct jl_lines *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		jl_free(&l->doc[i]);
	free(l->doc);
	memset(l, 0, sizeof(*l));
}

/* The sampler's lines as it hands them to its on_line callback, collected
 * into one string (set cfg.on_line = jl_capture_line, on_line_ctx = &cap). */
struct jl_capture {
	char *text;
	size_t len;
	unsigned lines;
};

static inline void jl_capture_line(void *ctx, const char *line)
{
	struct jl_capture *c = ctx;
	size_t n = strlen(line);

	c->text = realloc(c->text, c->len + n + 1);
	if (!c->text)
		abort();
	memcpy(c->text + c->len, line, n + 1);
	c->len += n;
	c->lines++;
}

#endif
