/* Reading one chosen process: its status, its threads (stat, schedstat,
 * status each) and, every PSS interval, smaps_rollup or smaps.
 *
 * Files a kernel lacks (schedstat without CONFIG_SCHED_INFO) and files of a
 * task that just left fail the same way, with ENOENT or ESRCH. Re-reading
 * the task's stat tells them apart: if it still reads, the file is missing
 * and its fields are left out; if not, the task left and nothing read from
 * it this tick is written. */
#include "resources_priv.h"
#include "clock.h"
#include "proc_smaps.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool gone_err(ssize_t err)
{
	return err == -ESRCH || err == -ENOENT;
}

/* Does the task that p (t NULL) or t was still exist? */
static bool still_there(struct pl_resources *r, struct pl_res_proc *p, struct pl_res_thread *t)
{
	struct pl_procfile *pf = t ? &t->stat : &p->stat;
	uint64_t want = t ? t->starttime_ticks : p->starttime_ticks;
	struct pl_pid_stat st;

	if (pl__res_read(r, p, t, pf, "stat") < 0 || pl__parse_pid_stat(r->buf.buf, &st) < 0)
		return false;
	return st.starttime_ticks == want;
}

static void thread_close(struct pl_resources *r, struct pl_res_thread *t)
{
	pl__res_close_file(r, &t->stat);
	pl__res_close_file(r, &t->schedstat);
	pl__res_close_file(r, &t->status);
}

void pl__res_threads_free(struct pl_resources *r, struct pl_res_proc *p)
{
	size_t i;

	for (i = 0; i < p->n_threads; i++)
		thread_close(r, &p->threads[i]);
	free(p->threads);
	p->threads = NULL;
	p->n_threads = p->cap_threads = 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* List task/ into r->tids, sorted. Returns the count or -errno. */
static ssize_t list_tids(struct pl_resources *r, struct pl_res_proc *p)
{
	char path[48];
	struct dirent *de;
	size_t n = 0;
	DIR *d;
	int dirfd, err;

	err = pl__res_fault(r, p->pid, 0, "task");
	if (err < 0)
		return err;
	dirfd = pl__res_path(p, NULL, "task", path, sizeof(path), r->root_fd);
	if ((err = pl__procdir_opendir(dirfd, path, &d)) < 0)
		return err;
	p->threads_truncated = false;
	while ((de = readdir(d))) {
		const char *s = de->d_name;
		uint64_t tid;

		if (pl__parse_u64(&s, &tid) < 0 || *s != '\0' || tid == 0 || tid > INT32_MAX)
			continue;
		if (n == PL_RES_MAX_THREADS) {
			p->threads_truncated = true;
			break;
		}
		if (n == r->cap_tids) {
			size_t ncap = r->cap_tids ? r->cap_tids * 2 : 64;
			int *nt = realloc(r->tids, ncap * sizeof(*nt));

			if (!nt) {
				p->threads_truncated = true;
				break;
			}
			r->tids = nt;
			r->cap_tids = ncap;
		}
		r->tids[n++] = (int)tid;
	}
	closedir(d);
	qsort(r->tids, n, sizeof(*r->tids), cmp_int);
	return (ssize_t)n;
}

static void thread_init(struct pl_res_thread *t, int tid)
{
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->stat = (struct pl_procfile)PL_PROCFILE_INIT;
	t->schedstat = (struct pl_procfile)PL_PROCFILE_INIT;
	t->status = (struct pl_procfile)PL_PROCFILE_INIT;
}

/* Make p->threads match the listing, keeping the fds of threads that stay. */
static int merge_threads(struct pl_resources *r, struct pl_res_proc *p, size_t n)
{
	struct pl_res_thread *nt;
	size_t i, j = 0;

	if (n == p->n_threads) {
		for (i = 0; i < n && p->threads[i].tid == r->tids[i]; i++)
			;
		if (i == n)
			return 0;
	}
	nt = malloc((n ? n : 1) * sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		while (j < p->n_threads && p->threads[j].tid < r->tids[i])
			thread_close(r, &p->threads[j++]);
		if (j < p->n_threads && p->threads[j].tid == r->tids[i])
			nt[i] = p->threads[j++];
		else
			thread_init(&nt[i], r->tids[i]);
	}
	while (j < p->n_threads)
		thread_close(r, &p->threads[j++]);
	free(p->threads);
	p->threads = nt;
	p->n_threads = p->cap_threads = n;
	return 0;
}

static ssize_t read_thread_stat(struct pl_resources *r, struct pl_res_proc *p,
				struct pl_res_thread *t)
{
	ssize_t n = pl__res_read(r, p, t, &t->stat, "stat");

	if (n >= 0 && pl__parse_pid_stat(r->buf.buf, &t->st) < 0)
		return -EINVAL;
	return n;
}

/* Read one thread; false when it left (or never parsed). */
static bool sample_thread(struct pl_resources *r, struct pl_res_proc *p, struct pl_res_thread *t)
{
	bool had_fd = t->stat.fd >= 0;
	bool missing = false;
	ssize_t n = read_thread_stat(r, p, t);

	/* A kept fd of an exited thread fails even if a new thread has the
	 * tid now; a recorded tree shows a new starttime instead. Either way
	 * the listed tid is a new thread: start over once. */
	if ((n < 0 && had_fd) ||
	    (n >= 0 && t->starttime_ticks && t->st.starttime_ticks != t->starttime_ticks)) {
		thread_close(r, t);
		thread_init(t, t->tid);
		n = read_thread_stat(r, p, t);
	}
	if (n < 0) {
		if (!gone_err(n))
			pl__res_read_error(r, (int)n, p->pid, "thread stat");
		return false;
	}
	if (t->st.pid != t->tid)
		return false;
	t->starttime_ticks = t->st.starttime_ticks;

	n = pl__res_read(r, p, t, &t->schedstat, "schedstat");
	t->has_sched = n >= 0 && pl__parse_schedstat(r->buf.buf, &t->sched) == 0;
	if (n < 0)
		missing = missing || gone_err(n);

	n = pl__res_read(r, p, t, &t->status, "status");
	t->has_status = n >= 0 && pl__parse_pid_status(r->buf.buf, &t->status_v) == 0;
	if (n < 0)
		missing = missing || gone_err(n);

	if (missing && !still_there(r, p, t))
		return false;
	return true;
}

static void sample_threads(struct pl_resources *r, struct pl_res_proc *p)
{
	ssize_t n = list_tids(r, p);
	size_t i;

	p->threads_err = 0;
	if (n < 0) {
		p->threads_err = (int)n;
		pl__res_threads_free(r, p);
		return;
	}
	if (merge_threads(r, p, (size_t)n) < 0) {
		p->threads_err = -ENOMEM;
		return;
	}
	for (i = 0; i < p->n_threads; i++) {
		struct pl_res_thread *t = &p->threads[i];

		t->ok = sample_thread(r, p, t);
		if (t->ok)
			p->threads_listed++;
		else
			p->threads_gone++;
	}
}

static void sample_pss(struct pl_resources *r, struct pl_res_proc *p)
{
	const char *name = r->smaps_rollup ? "smaps_rollup" : "smaps";
	char path[48];
	uint64_t t0 = pl__mono_ns();
	int dirfd, err;

	p->pss_read = true;
	err = pl__res_fault(r, p->pid, 0, name);
	if (err == 0) {
		dirfd = pl__res_path(p, NULL, name, path, sizeof(path), r->root_fd);
		err = pl__smaps_read_sum(dirfd, path, &p->pss, r->smaps_buf, r->smaps_buf_len);
	}
	if (err < 0)
		pl__smaps_sum_init(&p->pss);
	/* A task without memory of its own (a kernel thread; a process
	 * between exit and reaping) fails with ESRCH: no PSS, not an error.
	 * If the process itself left, the check after this read says so. */
	if (err == -ESRCH)
		err = 0;
	p->pss_err = err;
	p->pss_ms = (double)(pl__mono_ns() - t0) / 1e6;
	if (err == -EACCES || err == -EPERM) {
		if (!p->pss_warned)
			pl__log_warnx("resources: pid %d (%s): cannot read %s: %s (another "
				      "user's process?); its PSS is not sampled",
				      p->pid, p->st.comm, name, strerror(-err));
		p->pss_warned = true;
	} else if (err < 0 && !gone_err(err)) {
		pl__res_read_error(r, err, p->pid, name);
	}
}

int pl__res_proc_sample(struct pl_resources *r, struct pl_res_proc *p, bool pss_due)
{
	ssize_t n;

	p->has_status = false;
	p->threads_listed = p->threads_gone = 0;
	p->threads_truncated = false;
	p->threads_err = 0;
	p->pss_read = false;
	p->pss_err = 0;

	n = pl__res_read(r, p, NULL, &p->status, "status");
	if (n >= 0) {
		p->has_status = pl__parse_pid_status(r->buf.buf, &p->status_v) == 0;
		if (!p->has_status)
			pl__res_read_error(r, -EINVAL, p->pid, "status does not parse");
	} else if (gone_err(n)) {
		if (!still_there(r, p, NULL))
			return -ESRCH;
	} else {
		pl__res_read_error(r, (int)n, p->pid, "status");
	}
	if (r->cfg.threads)
		sample_threads(r, p);
	if (pss_due) {
		sample_pss(r, p);
		/* smaps is read in chunks, each under the mmap lock taken
		 * anew: a process that exits in between leaves a short sum
		 * that must not be written. */
		if (!still_there(r, p, NULL))
			return -ESRCH;
	}
	return 0;
}
