/* Catch what a piece of code logs to stderr (common/log.c writes there in
 * the foreground), so that a test can check a message was given, and how
 * often. */
#ifndef PL_TEST_STDERR_CAPTURE_H
#define PL_TEST_STDERR_CAPTURE_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct stderr_capture {
	int saved;
	FILE *tmp;
	char text[8192];
};

static inline void capture_begin(struct stderr_capture *c)
{
	fflush(stderr);
	c->tmp = tmpfile();
	c->saved = dup(2);
	if (c->tmp)
		dup2(fileno(c->tmp), 2);
}

/* Returns the text logged since capture_begin (cut at 8 KiB). */
static inline const char *capture_end(struct stderr_capture *c)
{
	size_t n = 0;

	fflush(stderr);
	if (c->saved >= 0) {
		dup2(c->saved, 2);
		close(c->saved);
	}
	c->text[0] = '\0';
	if (c->tmp) {
		rewind(c->tmp);
		n = fread(c->text, 1, sizeof(c->text) - 1, c->tmp);
		c->text[n] = '\0';
		fclose(c->tmp);
	}
	return c->text;
}

static inline int count_of(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* What was logged since capture_begin, on one line (newlines folded to
 * spaces) into out: for quoting in a check, where a newline would break the
 * TAP stream. */
static inline void capture_end_line(struct stderr_capture *c, char *out, size_t len)
{
	const char *text = capture_end(c);
	size_t i, n = strlen(text);

	if (len == 0)
		return;
	if (n >= len)
		n = len - 1; /* cut: the start says what failed */
	memcpy(out, text, n);
	out[n] = '\0';
	for (i = 0; out[i]; i++)
		if (out[i] == '\n')
			out[i] = out[i + 1] ? ' ' : '\0';
}

/* What was logged, as TAP comment lines. */
static inline void capture_diag(const char *text)
{
	while (*text) {
		size_t n = strcspn(text, "\n");

		printf("#   %.*s\n", (int)n, text);
		text += n + (text[n] == '\n');
	}
}

#endif
