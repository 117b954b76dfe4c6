/* The tests' one way to read a whole file: what a program under test wrote
 * (a summary, a CSV, its log) or a /proc file (whose size stat does not
 * know, so it is read to the end rather than measured first).
 *
 * test_read_file: the contents, NUL-terminated, to free(); NULL when the
 * file cannot be opened (a check says "missing" rather than crashing on it).
 * Out of memory aborts: a test has no better answer. */
#ifndef PL_TEST_READ_FILE_H
#define PL_TEST_READ_FILE_H

#include <stdio.h>
#include <stdlib.h>

static inline char *test_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t cap = 0, len = 0, n;
	char *buf = NULL;

	if (!f)
		return NULL;
	do {
		if (cap - len < 4096 + 1) {
			cap = cap ? cap * 2 : 65536;
			if (!(buf = realloc(buf, cap)))
				abort();
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

#endif
