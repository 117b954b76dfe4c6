/* See stacks_folded.h. */
#include "stacks_folded.h"
#include "recording.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct line {
	char *text; /* "COMM (PID);frames" */
	uint64_t count;
};

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

int pl__stacks_folded_write(FILE *out, const void *recording)
{
	const struct pl_recording *r = recording;
	struct line *lines = r->n_stacks ? calloc(r->n_stacks, sizeof(*lines)) : NULL;
	size_t n = 0, w, i;
	int err = 0;

	if (r->n_stacks && !lines)
		return -ENOMEM;
	for (w = 0; w < r->n_windows && err == 0; w++) {
		const struct pl_recorded_window *win = &r->windows[w];

		for (i = win->first_stack; i < win->first_stack + win->n_stacks && i < r->n_stacks;
		     i++) {
			/* comm is made UTF-8 by the reader; ';' would split the frame, a
			 * newline the line */
			char comm[PL_REC_NAME], *c;

			snprintf(comm, sizeof(comm), "%s", win->comm[0] ? win->comm : "?");
			for (c = comm; *c; c++)
				if (*c == ';' || *c == '\n')
					*c = '_';
			if (asprintf(&lines[n].text, "%s (%" PRId64 ");%s", comm, win->pid,
				     r->stacks[i].frames) < 0) {
				err = -ENOMEM;
				break;
			}
			lines[n++].count = r->stacks[i].count;
		}
	}
	if (err == 0 && n)
		qsort(lines, n, sizeof(*lines), by_text);
	for (i = 0; i < n && err == 0; i++) {
		if (i + 1 < n && strcmp(lines[i].text, lines[i + 1].text) == 0 &&
		    lines[i + 1].count <= UINT64_MAX - lines[i].count) {
			lines[i + 1].count += lines[i].count;
			continue;
		}
		if (fprintf(out, "%s %" PRIu64 "\n", lines[i].text, lines[i].count) < 0)
			err = -EIO;
	}
	for (i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	return err;
}
