/* Text helpers the recording's line readers share (recording.h). */
#include "recording.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The length of the UTF-8 sequence at s, 0 if it is not one (overlong
 * forms, surrogates and code points past U+10FFFF included). */
static size_t utf8_sequence(const unsigned char *s)
{
	unsigned cp, n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07u;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void pl__recording_copy_name(char *dst, const char *src)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0, k;

	while (*s) {
		k = utf8_sequence(s);
		if (o + (k ? k : 1) >= PL_REC_NAME)
			break;
		if (k) {
			memcpy(dst + o, s, k);
			o += k;
			s += k;
		} else {
			dst[o++] = '?';
			s++;
		}
	}
	dst[o] = '\0';
}

const char *pl__recording_item_of(const char *path, const char *prefix, size_t max,
				  size_t *index)
{
	size_t len = strlen(prefix);
	unsigned long i;
	char *end;

	if (strncmp(path, prefix, len) != 0 || path[len] != '.' || path[len + 1] < '0' ||
	    path[len + 1] > '9')
		return NULL;
	errno = 0;
	i = strtoul(path + len + 1, &end, 10);
	if (errno || *end != '.' || i >= max)
		return NULL;
	*index = i;
	return end + 1;
}

#define MAX_NAMES 65535 /* distinct names in a recording: they are uint16_t */

int pl__recording_intern(struct pl_recording *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->n_names; i++)
		if (strcmp(r->names[i], name) == 0)
			return (int)i;
	if (r->n_names >= MAX_NAMES)
		return -1;
	if (pl__recording_grow((void **)&r->names, &r->cap_names, r->n_names,
			       sizeof(*r->names)) < 0)
		return -2;
	snprintf(r->names[r->n_names], PL_REC_NAME, "%s", name);
	return (int)r->n_names++;
}

int pl__recording_point(struct pl_recording *r, enum pl_counter_kind kind, int64_t pid,
			const char *comm, uint64_t mono_ns, double value)
{
	struct pl_recorded_point *p;
	int name = pl__recording_intern(r, comm && comm[0] ? comm : "?");

	if (name == -2 || pl__recording_grow((void **)&r->points, &r->cap_points, r->n_points,
					     sizeof(*r->points)) < 0)
		return -ENOMEM;
	p = &r->points[r->n_points++];
	p->kind = (uint8_t)kind;
	p->comm = name < 0 ? 0 : (uint16_t)name; /* a full table: the first name */
	p->pid = pid;
	p->mono_ns = mono_ns;
	p->value = value;
	return 0;
}

void *pl__recording_item_at(void **v, size_t *n, size_t *cap, size_t elem, size_t index)
{
	while (*n <= index) {
		if (pl__recording_grow(v, cap, *n, elem) < 0)
			return NULL;
		memset((char *)*v + *n * elem, 0, elem);
		(*n)++;
	}
	return (char *)*v + index * elem;
}
