/* A strict recursive-descent JSON walker (RFC 8259). */
#include "json_reader.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct walker {
	const char *p, *end;
	pl_json_walk_cb cb;
	void *ctx;
	char path[PL_JSON_READ_PATH];
	size_t plen;
	char *scratch; /* decoded strings and number text; as long as the input */
	int depth;
};

static void skip_ws(struct walker *w)
{
	while (w->p < w->end && (*w->p == ' ' || *w->p == '\t' || *w->p == '\n' || *w->p == '\r'))
		w->p++;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hex4(const char *s, const char *end)
{
	int v = 0, i;

	if (end - s < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static size_t put_utf8(char *out, unsigned cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Decode the string at w->p (the opening quote) into w->scratch. Decoded
 * text is never longer than the encoded text, so scratch always fits. */
static int read_string(struct walker *w, size_t *len_out)
{
	char *o = w->scratch;

	w->p++;
	for (;;) {
		unsigned char c;

		if (w->p >= w->end)
			return -EINVAL;
		c = (unsigned char)*w->p;
		if (c == '"')
			break;
		if (c < 0x20)
			return -EINVAL;
		if (c != '\\') {
			*o++ = (char)c;
			w->p++;
			continue;
		}
		if (++w->p >= w->end)
			return -EINVAL;
		switch (*w->p) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			int hi = hex4(w->p + 1, w->end), lo;
			unsigned cp;

			if (hi <= 0) /* malformed, or \u0000: strings are C strings */
				return -EINVAL;
			w->p += 4;
			cp = (unsigned)hi;
			if (hi >= 0xdc00 && hi <= 0xdfff)
				return -EINVAL;
			if (hi >= 0xd800 && hi <= 0xdbff) {
				if (w->end - w->p < 7 || w->p[1] != '\\' || w->p[2] != 'u')
					return -EINVAL;
				lo = hex4(w->p + 3, w->end);
				if (lo < 0xdc00 || lo > 0xdfff)
					return -EINVAL;
				w->p += 6;
				cp = 0x10000 + (((unsigned)hi - 0xd800) << 10) +
				     ((unsigned)lo - 0xdc00);
			}
			o += put_utf8(o, cp);
			break;
		}
		default:
			return -EINVAL;
		}
		w->p++;
	}
	w->p++;
	*o = '\0';
	*len_out = (size_t)(o - w->scratch);
	return 0;
}

static int read_number(struct walker *w)
{
	const char *s = w->p;

	if (w->p < w->end && *w->p == '-')
		w->p++;
	if (w->p >= w->end || !is_digit(*w->p))
		return -EINVAL;
	if (*w->p == '0') {
		w->p++;
	} else {
		while (w->p < w->end && is_digit(*w->p))
			w->p++;
	}
	if (w->p < w->end && *w->p == '.') {
		w->p++;
		if (w->p >= w->end || !is_digit(*w->p))
			return -EINVAL;
		while (w->p < w->end && is_digit(*w->p))
			w->p++;
	}
	if (w->p < w->end && (*w->p == 'e' || *w->p == 'E')) {
		w->p++;
		if (w->p < w->end && (*w->p == '+' || *w->p == '-'))
			w->p++;
		if (w->p >= w->end || !is_digit(*w->p))
			return -EINVAL;
		while (w->p < w->end && is_digit(*w->p))
			w->p++;
	}
	/* "01" reads as 0 then a stray 1, which the caller refuses */
	memcpy(w->scratch, s, (size_t)(w->p - s));
	w->scratch[w->p - s] = '\0';
	return 0;
}

static bool literal(struct walker *w, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(w->end - w->p) < n || memcmp(w->p, word, n) != 0)
		return false;
	w->p += n;
	return true;
}

/* Append ".component" (no dot at the start) to the path. */
static int push(struct walker *w, const char *component, size_t len)
{
	size_t need = w->plen + (w->plen ? 1 : 0) + len;

	if (need >= sizeof(w->path))
		return -E2BIG;
	if (w->plen)
		w->path[w->plen++] = '.';
	memcpy(w->path + w->plen, component, len);
	w->plen = need;
	w->path[need] = '\0';
	return 0;
}

static int walk_value(struct walker *w);

static int walk_container(struct walker *w, bool object)
{
	char close = object ? '}' : ']';
	size_t saved = w->plen, index = 0;
	int r;

	if (++w->depth > PL_JSON_READ_DEPTH)
		return -E2BIG;
	w->p++;
	skip_ws(w);
	if (w->p < w->end && *w->p == close) {
		w->p++;
		w->depth--;
		return 0;
	}
	for (;;) {
		skip_ws(w);
		if (object) {
			size_t klen;

			if (w->p >= w->end || *w->p != '"')
				return -EINVAL;
			r = read_string(w, &klen);
			if (r < 0)
				return r;
			skip_ws(w);
			if (w->p >= w->end || *w->p != ':')
				return -EINVAL;
			w->p++;
			r = push(w, w->scratch, klen);
		} else {
			char num[24];

			r = push(w, num, (size_t)snprintf(num, sizeof(num), "%zu", index++));
		}
		if (r < 0)
			return r;
		r = walk_value(w);
		if (r < 0)
			return r;
		w->plen = saved;
		w->path[saved] = '\0';
		skip_ws(w);
		if (w->p < w->end && *w->p == ',') {
			w->p++;
			continue;
		}
		if (w->p < w->end && *w->p == close) {
			w->p++;
			w->depth--;
			return 0;
		}
		return -EINVAL;
	}
}

static int walk_value(struct walker *w)
{
	size_t len;
	int r;

	skip_ws(w);
	if (w->p >= w->end)
		return -EINVAL;
	switch (*w->p) {
	case '{':
		return walk_container(w, true);
	case '[':
		return walk_container(w, false);
	case '"':
		r = read_string(w, &len);
		if (r == 0)
			w->cb(w->ctx, w->path, PL_JSON_STRING, w->scratch);
		return r;
	case 't':
		if (!literal(w, "true"))
			return -EINVAL;
		w->cb(w->ctx, w->path, PL_JSON_BOOL, "true");
		return 0;
	case 'f':
		if (!literal(w, "false"))
			return -EINVAL;
		w->cb(w->ctx, w->path, PL_JSON_BOOL, "false");
		return 0;
	case 'n':
		if (!literal(w, "null"))
			return -EINVAL;
		w->cb(w->ctx, w->path, PL_JSON_NULL, "null");
		return 0;
	default:
		r = read_number(w);
		if (r == 0)
			w->cb(w->ctx, w->path, PL_JSON_NUMBER, w->scratch);
		return r;
	}
}

int pl__json_walk(const char *text, size_t len, pl_json_walk_cb cb, void *ctx)
{
	struct walker w;
	int r;

	memset(&w, 0, sizeof(w));
	w.p = text;
	w.end = text + len;
	w.cb = cb;
	w.ctx = ctx;
	w.scratch = malloc(len + 1);
	if (!w.scratch)
		return -ENOMEM;
	r = walk_value(&w);
	if (r == 0) {
		skip_ws(&w);
		if (w.p != w.end)
			r = -EINVAL;
	}
	free(w.scratch);
	return r;
}
