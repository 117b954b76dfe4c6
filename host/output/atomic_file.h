/* A file that appears whole or not at all: written as PATH.tmp.PID, then
 * flushed, synced and renamed over PATH. A reader (or a run stopped by
 * SIGINT in the middle of writing) never sees half a summary. */
#ifndef PL_HOST_ATOMIC_FILE_H
#define PL_HOST_ATOMIC_FILE_H

#include <stdio.h>

struct pl_atomic_file {
	FILE *f;
	char *path, *tmp;
};

/* 0 or -errno; on success write to a->f, then commit or abort. */
int pl__atomic_file_open(struct pl_atomic_file *a, const char *path);
/* Flush, sync, rename. 0 or -errno; the temporary file is removed on failure. */
int pl__atomic_file_commit(struct pl_atomic_file *a);
void pl__atomic_file_abort(struct pl_atomic_file *a);
/* All three: write(f, ctx) fills the file (0 or -errno). 0 or -errno. */
int pl__atomic_file_write(const char *path, int (*write)(FILE *f, const void *ctx),
			  const void *ctx);

#endif
