/* A /proc (or recorded /proc) file kept open and re-read with pread.
 *
 * Reopening a /proc file each tick costs a path walk and a dentry lookup; a
 * kept fd costs one pread. A kept fd of /proc/PID/... also stays bound to the
 * task it was opened for: once that task exits, reads fail with ESRCH even if
 * the pid is reused, which is how the readers notice the process went away.
 *
 * The root is a directory fd so that a recorded tree (--proc-root) reads
 * through exactly the same code as the live /proc. */
#ifndef PL_COMMON_PROCFILE_H
#define PL_COMMON_PROCFILE_H

#include <dirent.h>
#include <stddef.h>
#include <sys/types.h>

struct pl_procfile {
	int fd;       /* -1 when closed */
	char *buf;    /* NUL-terminated contents after a successful read */
	size_t cap;   /* allocated size of buf */
	size_t len;   /* bytes read last time */
};

#define PL_PROCFILE_INIT { -1, NULL, 0, 0 }

/* Largest file a reader accepts: a /proc file larger than this is malformed
 * input as far as perflink is concerned (smaps of a huge process is read
 * through pl__procfile_read_lines instead). */
#define PL_PROCFILE_MAX (1u << 20)

/* Open rel (relative to dirfd) read-only, close-on-exec. 0 or -errno. */
int pl__procfile_open(struct pl_procfile *pf, int dirfd, const char *rel);
/* Read the whole file from offset 0 into pf->buf (grown as needed up to
 * PL_PROCFILE_MAX). Returns the length or -errno (-EFBIG past the limit). */
ssize_t pl__procfile_read(struct pl_procfile *pf);
/* Open, read and close in one step, for files read once. */
ssize_t pl__procfile_read_once(struct pl_procfile *pf, int dirfd, const char *rel);
void pl__procfile_close(struct pl_procfile *pf);
/* Close and free the buffer. */
void pl__procfile_free(struct pl_procfile *pf);

/* Open a directory (the proc root, or a pid directory under it) O_DIRECTORY,
 * close-on-exec. Returns the fd or -errno. */
int pl__procdir_open(int dirfd, const char *rel);

/* The same, as a DIR stream for readdir (the DIR owns the fd). 0 or -errno. */
int pl__procdir_opendir(int dirfd, const char *rel, DIR **out);

#endif
