/* See json_writer.h. */
#include "json_writer.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pl__json_init(struct pl_json *j)
{
	memset(j, 0, sizeof(*j));
}

void pl__json_reset(struct pl_json *j)
{
	j->len = 0;
	j->failed = false;
	j->depth = 0;
	memset(j->need_comma, 0, sizeof(j->need_comma));
	if (j->buf)
		j->buf[0] = '\0';
}

void pl__json_free(struct pl_json *j)
{
	free(j->buf);
	pl__json_init(j);
}

static bool reserve(struct pl_json *j, size_t more)
{
	size_t want = j->len + more + 1;
	char *nbuf;
	size_t ncap;

	if (j->failed)
		return false;
	if (want <= j->cap)
		return true;
	ncap = j->cap ? j->cap : 256;
	while (ncap < want)
		ncap *= 2;
	nbuf = realloc(j->buf, ncap);
	if (!nbuf) {
		j->failed = true;
		return false;
	}
	j->buf = nbuf;
	j->cap = ncap;
	return true;
}

static void put(struct pl_json *j, const char *s, size_t n)
{
	if (!reserve(j, n))
		return;
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static void putf(struct pl_json *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct pl_json *j, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		j->failed = true;
		return;
	}
	put(j, tmp, (size_t)n);
}

/* At most n bytes of s, ending early at a NUL. */
static void put_string_n(struct pl_json *j, const char *s, size_t n)
{
	put(j, "\"", 1);
	for (; n && *s; s++, n--) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };

			put(j, esc, 2);
		} else if (c == '\n') {
			put(j, "\\n", 2);
		} else if (c == '\t') {
			put(j, "\\t", 2);
		} else if (c < 0x20 || c == 0x7f) {
			putf(j, "\\u%04x", c);
		} else {
			put(j, (const char *)&c, 1);
		}
	}
	put(j, "\"", 1);
}

/* The comma and the key that come before every value. */
static void prefix(struct pl_json *j, const char *key)
{
	if (j->depth > 0) {
		if (j->need_comma[j->depth])
			put(j, ",", 1);
		j->need_comma[j->depth] = true;
	}
	if (key) {
		put_string_n(j, key, SIZE_MAX);
		put(j, ":", 1);
	}
}

static void open_level(struct pl_json *j, const char *key, char c)
{
	prefix(j, key);
	put(j, &c, 1);
	if (j->depth + 1 >= PL_JSON_MAX_DEPTH) {
		j->failed = true;
		return;
	}
	j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_level(struct pl_json *j, char c)
{
	if (j->depth <= 0) {
		j->failed = true;
		return;
	}
	j->depth--;
	put(j, &c, 1);
}

void pl__json_begin_object(struct pl_json *j, const char *key) { open_level(j, key, '{'); }
void pl__json_end_object(struct pl_json *j) { close_level(j, '}'); }
void pl__json_begin_array(struct pl_json *j, const char *key) { open_level(j, key, '['); }
void pl__json_end_array(struct pl_json *j) { close_level(j, ']'); }

void pl__json_str(struct pl_json *j, const char *key, const char *value)
{
	prefix(j, key);
	if (value)
		put_string_n(j, value, SIZE_MAX);
	else
		put(j, "null", 4);
}

void pl__json_str_n(struct pl_json *j, const char *key, const char *value, size_t len)
{
	prefix(j, key);
	put_string_n(j, value, len);
}

void pl__json_u64(struct pl_json *j, const char *key, uint64_t value)
{
	prefix(j, key);
	putf(j, "%llu", (unsigned long long)value);
}

void pl__json_i64(struct pl_json *j, const char *key, int64_t value)
{
	prefix(j, key);
	putf(j, "%lld", (long long)value);
}

void pl__json_double(struct pl_json *j, const char *key, double value, int decimals)
{
	prefix(j, key);
	if (!isfinite(value))
		put(j, "null", 4);
	else
		putf(j, "%.*f", decimals < 0 ? 0 : decimals > 9 ? 9 : decimals, value);
}

void pl__json_bool(struct pl_json *j, const char *key, bool value)
{
	prefix(j, key);
	put(j, value ? "true" : "false", value ? 4 : 5);
}

void pl__json_null(struct pl_json *j, const char *key)
{
	prefix(j, key);
	put(j, "null", 4);
}

const char *pl__json_finish(struct pl_json *j)
{
	if (j->depth != 0)
		j->failed = true;
	put(j, "\n", 1);
	return j->failed ? NULL : j->buf;
}
