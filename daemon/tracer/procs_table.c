/* The process table's records: memory, the pid hash, the list of the
 * entries read this tick, and dropping the dead. */
#include "procs.h"
#include "procs_read.h"
#include "procs_reap.h"
#include "fd_budget.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pl__tracer_match(const char *const *watch, size_t nwatch, const char *comm)
{
	for (size_t i = 0; i < nwatch; i++) {
		if (strstr(comm, watch[i]))
			return (int)i;
	}
	return -1;
}

int pl__tprocs_init(struct pl_tprocs *tp, const struct pl_tprocs_cfg *cfg)
{
	const struct pl_procfile init = PL_PROCFILE_INIT;

	memset(tp, 0, sizeof(*tp));
	tp->cfg = *cfg;
	tp->rootfd = -1;
	tp->scanfd = -1;
	tp->scratch = init;
	tp->fd_budget = cfg->fd_budget > 0 ? cfg->fd_budget : pl__fd_budget();
	tp->dents_cap = 32768;
	tp->dents = malloc(tp->dents_cap);
	return tp->dents ? 0 : -ENOMEM;
}

void pl__tproc_close_fd(struct pl_tprocs *tp, int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		tp->fds_open--;
	}
	*fd = -1;
}

void pl__tproc_close(struct pl_tprocs *tp, struct pl_tproc *p)
{
	pl__tproc_close_fd(tp, &p->stat_fd);
	pl__tproc_close_fd(tp, &p->io_fd);
	pl__tproc_close_fd(tp, &p->ss_fd);
	pl__tproc_close_fd(tp, &p->wchan_fd);
	pl__memcg_close(&p->memcg);
}

void pl__tprocs_free(struct pl_tprocs *tp)
{
	for (size_t i = 0; i < tp->n; i++)
		pl__tproc_close(tp, &tp->v[i]);
	if (tp->scanfd >= 0)
		close(tp->scanfd);
	free(tp->v);
	free(tp->due);
	free(tp->touched);
	free(tp->hash);
	free(tp->dents);
	pl__procfile_free(&tp->scratch);
	memset(tp, 0, sizeof(*tp));
	tp->scanfd = -1;
}

/* Does the root's "self" name this process, i.e. is it a procfs of this
 * process's pid namespace? */
static bool self_is(int rootfd, pid_t pid)
{
	char link[24], want[24];
	ssize_t n = readlinkat(rootfd, "self", link, sizeof(link) - 1);

	if (n <= 0)
		return false;
	link[n] = '\0';
	snprintf(want, sizeof(want), "%d", (int)pid);
	return strcmp(link, want) == 0;
}

int pl__tprocs_set_root(struct pl_tprocs *tp, int rootfd, bool keep_fds)
{
	int fd;

	for (size_t i = 0; i < tp->n; i++)
		pl__tproc_close(tp, &tp->v[i]);
	if (tp->scanfd >= 0)
		close(tp->scanfd);
	tp->scanfd = -1;
	tp->rootfd = rootfd;
	tp->kept = keep_fds;
	tp->no_schedstat = false;
	fd = pl__procdir_open(rootfd, ".");
	if (fd < 0)
		return fd;
	tp->scanfd = fd;
	tp->own_pid_ns = keep_fds && self_is(rootfd, getpid());
	tp->self_pid = tp->own_pid_ns ? (int)getpid() : 0;
	/* a clock is looked up by pid in this process's pid namespace */
	tp->cpuclock = tp->own_pid_ns && pl__tproc_cpuclock_works();
	return 0;
}

int pl__tprocs_grow(struct pl_tprocs *tp)
{
	size_t ncap = tp->cap ? tp->cap * 2 : 256;
	size_t *nt = realloc(tp->touched, ncap * sizeof(*nt));
	struct pl_tproc_due *nd;
	struct pl_tproc *nv;

	if (!nt)
		return -ENOMEM;
	tp->touched = nt;
	if (!(nd = realloc(tp->due, ncap * sizeof(*nd))))
		return -ENOMEM;
	tp->due = nd;
	if (!(nv = realloc(tp->v, ncap * sizeof(*nv))))
		return -ENOMEM;
	tp->v = nv;
	tp->cap = ncap;
	return 0;
}

/* A block made smaller, or the same one where realloc cannot. */
static void *shrunk(void *block, size_t size)
{
	void *smaller = realloc(block, size);

	return smaller ? smaller : block;
}

/* Give memory back once most processes are gone. */
void pl__tprocs_shrink(struct pl_tprocs *tp)
{
	size_t half = tp->cap / 2;

	if (tp->cap <= 256 || tp->n >= tp->cap / 4)
		return;
	tp->v = shrunk(tp->v, half * sizeof(*tp->v));
	tp->due = shrunk(tp->due, half * sizeof(*tp->due));
	tp->touched = shrunk(tp->touched, half * sizeof(*tp->touched));
	tp->cap = half;
}

static uint32_t hash_pid(int pid)
{
	return (uint32_t)pid * 2654435761u;
}

/* Rebuilding walks every entry, so it is done only when a drop made the
 * hash stale or it must grow. */
int pl__tprocs_rehash(struct pl_tprocs *tp)
{
	size_t want = 1024;

	while (want < 2 * (tp->n + 256))
		want *= 2;
	if (tp->hash_ok && want == tp->hcap)
		return 0;
	if (want != tp->hcap) {
		int32_t *nh = malloc(want * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		free(tp->hash);
		tp->hash = nh;
		tp->hcap = want;
	}
	memset(tp->hash, 0, tp->hcap * sizeof(*tp->hash));
	for (size_t i = 0; i < tp->n; i++) {
		size_t h = hash_pid(tp->due[i].pid) & (tp->hcap - 1);

		while (tp->hash[h])
			h = (h + 1) & (tp->hcap - 1);
		tp->hash[h] = (int32_t)i + 1;
	}
	tp->hash_ok = true;
	return 0;
}

long pl__tprocs_lookup(const struct pl_tprocs *tp, int pid)
{
	size_t h = hash_pid(pid) & (tp->hcap - 1);

	while (tp->hash[h]) {
		if (tp->due[tp->hash[h] - 1].pid == pid)
			return tp->hash[h] - 1;
		h = (h + 1) & (tp->hcap - 1);
	}
	return -(long)h - 1;
}

void pl__tprocs_touch(struct pl_tprocs *tp, size_t i)
{
	struct pl_tproc *p = &tp->v[i];

	if (p->touch_tick == tp->tick)
		return;
	p->touch_tick = tp->tick;
	p->touch_pos = tp->n_touched;
	tp->touched[tp->n_touched++] = i;
}

/* Entry i leaves the table: out of the list, and the last entry, which
 * takes its place, known there. */
static void untouch_for_drop(struct pl_tprocs *tp, size_t i)
{
	struct pl_tproc *p = &tp->v[i], *last = &tp->v[tp->n - 1];

	if (p->touch_tick == tp->tick) {
		size_t pos = p->touch_pos, moved = tp->touched[--tp->n_touched];

		tp->touched[pos] = moved;
		tp->v[moved].touch_pos = pos;
		p->touch_tick = 0;
	}
	if (last != p && last->touch_tick == tp->tick)
		tp->touched[last->touch_pos] = i;
}

static int cmp_index(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

void pl__tprocs_touched_sort(struct pl_tprocs *tp)
{
	if (tp->n_touched > 1)
		qsort(tp->touched, tp->n_touched, sizeof(*tp->touched), cmp_index);
	for (size_t k = 0; k < tp->n_touched; k++)
		tp->v[tp->touched[k]].touch_pos = k;
}

void pl__tprocs_drop(struct pl_tprocs *tp, size_t i, uint64_t tick)
{
	struct pl_tproc *p = &tp->v[i];

	/* kept first: its parent's jump may go to it (procs_reap.c) */
	pl__writes_gone_add(&tp->gone, p->pid, p->comm, &p->writes, tick);
	pl__reap_credit_parent(tp, p, tick);
	pl__tproc_close(tp, p);
	tp->exits++;
	untouch_for_drop(tp, i);
	if (i != tp->n - 1) {
		tp->v[i] = tp->v[tp->n - 1];
		tp->due[i] = tp->due[tp->n - 1];
	}
	tp->n--;
	tp->hash_ok = false;
}

void pl__tproc_put_writes(struct pl_tproc *p, uint64_t tick)
{
	pl__writes_put(&p->writes, tick, p->gap_wbytes, p->gap_wchar);
	pl__writes_put_mem(&p->writes, tick, p->gap_rbytes, p->gap_rss_kb);
}
