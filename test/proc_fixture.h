/* Reading a captured /proc file from test/fixtures/proc for a parser test,
 * through the same kept-fd reader the tracer and the sampler use. */
#ifndef PL_TEST_PROC_FIXTURE_H
#define PL_TEST_PROC_FIXTURE_H

#include <fcntl.h>
#include <stdio.h>

#include "procfile.h"

/* The file's text (valid until pf is read again), or "" with a TAP comment
 * when it cannot be read, so that the parser under test fails visibly. */
/* test/fixtures/proc as a directory fd, opened once (-errno if missing). */
static inline int fixture_root(void)
{
	static int root = -1;

	if (root < 0)
		root = pl__procdir_open(AT_FDCWD, PL_FIXTURES "/proc");
	return root;
}

static inline const char *read_fixture(struct pl_procfile *pf, const char *rel)
{
	int root = fixture_root();

	if (root < 0 || pl__procfile_read_once(pf, root, rel) < 0) {
		printf("# cannot read fixture %s\n", rel);
		return "";
	}
	return pf->buf;
}

#endif
