/* /proc file access for the resource sampler.
 *
 * Files of chosen processes and threads are kept open and re-read with
 * pread (procfile.h) while the fd budget lasts; past it they are opened and
 * closed each tick, which costs more but never fails for lack of fds. All
 * reads land in one shared buffer and are parsed at once: a kept file costs
 * an fd, not a buffer (600 thread files would otherwise hold 2.4 MiB). */
#include "resources_priv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int pl__res_fault(struct pl_resources *r, int pid, int tid, const char *name)
{
	return r->fault ? r->fault(r->fault_ctx, pid, tid, name) : 0;
}

int pl__res_path(const struct pl_res_proc *p, const struct pl_res_thread *t, const char *name,
		 char *path, size_t len, int root_fd)
{
	char pid_prefix[16] = "";
	int n;

	if (p->dirfd < 0)
		snprintf(pid_prefix, sizeof(pid_prefix), "%d/", p->pid);
	if (t)
		n = snprintf(path, len, "%stask/%d/%s", pid_prefix, t->tid, name);
	else
		n = snprintf(path, len, "%s%s", pid_prefix, name);
	if (n < 0 || (size_t)n >= len)
		path[0] = '\0';
	return p->dirfd >= 0 ? p->dirfd : root_fd;
}

/* Read pf (open) into the shared buffer by lending it the buffer. */
static ssize_t read_kept(struct pl_resources *r, struct pl_procfile *pf)
{
	ssize_t n;

	pf->buf = r->buf.buf;
	pf->cap = r->buf.cap;
	n = pl__procfile_read(pf);
	r->buf.buf = pf->buf;
	r->buf.cap = pf->cap;
	r->buf.len = n >= 0 ? (size_t)n : 0;
	pf->buf = NULL;
	pf->cap = 0;
	return n;
}

static ssize_t read_at(struct pl_resources *r, struct pl_procfile *pf, int dirfd,
		       const char *path)
{
	int err;

	if (path[0] == '\0')
		return -ENAMETOOLONG;
	if (pf && pf->fd >= 0)
		return read_kept(r, pf);
	if (pf && r->fds_kept < r->fds_budget) {
		err = pl__procfile_open(pf, dirfd, path);
		if (err < 0)
			return err;
		r->fds_kept++;
		return read_kept(r, pf);
	}
	return pl__procfile_read_once(&r->buf, dirfd, path);
}

ssize_t pl__res_read(struct pl_resources *r, struct pl_res_proc *p, struct pl_res_thread *t,
		     struct pl_procfile *pf, const char *name)
{
	char path[96];
	int dirfd, err;

	err = pl__res_fault(r, p->pid, t ? t->tid : 0, name);
	if (err < 0)
		return err;
	if (pf && pf->fd >= 0)
		return read_kept(r, pf);
	dirfd = pl__res_path(p, t, name, path, sizeof(path), r->root_fd);
	return read_at(r, pf, dirfd, path);
}

ssize_t pl__res_read_root(struct pl_resources *r, struct pl_procfile *pf, const char *rel)
{
	return read_at(r, pf, r->root_fd, rel);
}

int pl__res_open_piddir(struct pl_resources *r, int pid)
{
	char rel[16];
	int fd;

	if (r->fds_kept >= r->fds_budget)
		return -EMFILE;
	snprintf(rel, sizeof(rel), "%d", pid);
	fd = pl__procdir_open(r->root_fd, rel);
	if (fd >= 0)
		r->fds_kept++;
	return fd;
}

void pl__res_close_file(struct pl_resources *r, struct pl_procfile *pf)
{
	if (pf->fd >= 0) {
		pl__procfile_close(pf);
		r->fds_kept--;
	}
}

void pl__res_close_fd(struct pl_resources *r, int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
		r->fds_kept--;
	}
}

void pl__res_read_error(struct pl_resources *r, int err, int pid, const char *what)
{
	r->stats.read_errors++;
	pl__log_warnx_limited(&r->rl_read, "resources: pid %d: %s: %s; skipped", pid, what,
			      strerror(err < 0 ? -err : err));
}
