/* Which processes the resource sampler follows.
 *
 * A process is identified by (pid, starttime): a pid alone can be reused.
 * On the live /proc a kept fd of PID/stat already fails with ESRCH once its
 * task is gone; the starttime comparison catches the same on a recorded
 * tree and on the open-read-close path.
 *
 * Names and trees are looked for on every tick by a scan of the root: one
 * stat read per process not already chosen, which gives the comm, the ppid
 * and the starttime together. Descendants are closed over ppid links: a
 * process is in a tree when its parent is a root or already in it. */
#include "resources_priv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_pid(const char *s, int *out)
{
	uint64_t v;

	if (pl__parse_u64(&s, &v) < 0 || *s != '\0' || v == 0 || v > INT32_MAX)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

static int parse_pid_list(struct pl_resources *r, const char *list)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		int pid, *n;

		if (parse_pid(tok, &pid) < 0) {
			pl__log_warnx("resources: --pids: '%s' is not a pid", tok);
			err = -EINVAL;
			break;
		}
		n = realloc(r->want_pids, (r->n_want_pids + 1) * sizeof(*n));
		if (!n) {
			err = -ENOMEM;
			break;
		}
		r->want_pids = n;
		r->want_pids[r->n_want_pids++] = pid;
	}
	free(copy);
	return err;
}

static int parse_name_list(struct pl_resources *r, const char *list)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char **n, *name;

		while (*tok == ' ')
			tok++;
		if (*tok == '\0')
			continue;
		if (strlen(tok) >= PL_COMM_MAX) {
			pl__log_warnx("resources: --names: '%.20s...' is longer than any comm",
				      tok);
			err = -EINVAL;
			break;
		}
		n = realloc(r->names, (r->n_names + 1) * sizeof(*n));
		name = strdup(tok);
		if (n)
			r->names = n;
		if (!n || !name) {
			free(name);
			err = -ENOMEM;
			break;
		}
		r->names[r->n_names++] = name;
	}
	free(copy);
	if (err == 0 && r->n_names == 0) {
		pl__log_warnx("resources: --names: no name given");
		err = -EINVAL;
	}
	return err;
}

static size_t find_index(const struct pl_resources *r, int pid, bool *found)
{
	size_t lo = 0, hi = r->n_procs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->procs[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < r->n_procs && r->procs[lo]->pid == pid;
	return lo;
}

static struct pl_res_proc *find_proc(const struct pl_resources *r, int pid)
{
	bool found;
	size_t i = find_index(r, pid, &found);

	return found ? r->procs[i] : NULL;
}

static void seen_close(struct pl_resources *r, struct pl_res_seen *e)
{
	pl__res_close_file(r, &e->comm_file);
	pl__procfile_free(&e->comm_file);
}

void pl__res_proc_free(struct pl_resources *r, struct pl_res_proc *p)
{
	if (!p)
		return;
	pl__res_threads_free(r, p);
	pl__res_close_file(r, &p->stat);
	pl__res_close_file(r, &p->status);
	pl__procfile_free(&p->stat);
	pl__procfile_free(&p->status);
	pl__res_close_fd(r, &p->dirfd);
	free(p);
}

void pl__res_proc_gone(struct pl_resources *r, struct pl_res_proc *p, const char *why)
{
	if (r->n_gone == r->cap_gone) {
		size_t ncap = r->cap_gone ? r->cap_gone * 2 : 8;
		struct pl_res_gone *n = realloc(r->gone, ncap * sizeof(*n));

		if (n) {
			r->gone = n;
			r->cap_gone = ncap;
		}
	}
	/* Out of memory loses the notice, never the bookkeeping. */
	if (r->n_gone < r->cap_gone) {
		struct pl_res_gone *g = &r->gone[r->n_gone++];

		g->pid = p->pid;
		g->starttime_ticks = p->starttime_ticks;
		memcpy(g->comm, p->st.comm, sizeof(g->comm));
		g->why = why;
	}
	r->stats.exited++;
	pl__log_debug("resources: pid %d (%s): %s", p->pid, p->st.comm, why);
	pl__res_proc_free(r, p);
}

/* Start following pid. starttime 0: whatever process has it now. Returns
 * the new process, or NULL when it is gone, already followed, or the cap is
 * reached. */
static struct pl_res_proc *add_proc(struct pl_resources *r, int pid, unsigned why,
				    uint64_t starttime)
{
	struct pl_res_proc *p;
	bool found;
	size_t at = find_index(r, pid, &found);
	ssize_t n;

	if (found) {
		r->procs[at]->why |= why;
		return NULL;
	}
	if (r->n_procs >= PL_RES_MAX_PROCS) {
		if (!r->procs_capped_warned)
			pl__log_warnx("resources: more than %d processes chosen; "
				      "the others are not sampled", PL_RES_MAX_PROCS);
		r->procs_capped_warned = true;
		return NULL;
	}
	if (r->n_procs == r->cap_procs) {
		size_t ncap = r->cap_procs ? r->cap_procs * 2 : 16;
		struct pl_res_proc **np = realloc(r->procs, ncap * sizeof(*np));

		if (!np)
			return NULL;
		r->procs = np;
		r->cap_procs = ncap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->why = why;
	p->stat = (struct pl_procfile)PL_PROCFILE_INIT;
	p->status = (struct pl_procfile)PL_PROCFILE_INIT;
	p->dirfd = pl__res_open_piddir(r, pid);
	if (p->dirfd == -EMFILE) {
		p->dirfd = -1;
	} else if (p->dirfd < 0) {
		p->dirfd = -1;
		free(p);
		return NULL;
	}
	n = pl__res_read(r, p, NULL, &p->stat, "stat");
	if (n < 0 || pl__parse_pid_stat(r->buf.buf, &p->st) < 0 || p->st.pid != pid ||
	    (starttime != 0 && p->st.starttime_ticks != starttime)) {
		/* Gone, or a new process took the pid since the scan. */
		pl__res_proc_free(r, p);
		return NULL;
	}
	p->starttime_ticks = p->st.starttime_ticks;
	memmove(&r->procs[at + 1], &r->procs[at], (r->n_procs - at) * sizeof(*r->procs));
	r->procs[at] = p;
	r->n_procs++;
	return p;
}

int pl__res_select_init(struct pl_resources *r)
{
	size_t i;
	int err;

	if (r->cfg.pids && r->cfg.pids[0] && (err = parse_pid_list(r, r->cfg.pids)) < 0)
		return err;
	if (r->cfg.names && r->cfg.names[0] && (err = parse_name_list(r, r->cfg.names)) < 0)
		return err;
	for (i = 0; i < r->n_want_pids; i++) {
		int pid = r->want_pids[i];

		if (find_proc(r, pid) || add_proc(r, pid, PL_RES_BY_PID, 0))
			continue;
		pl__log_warnx("resources: --pids: no process %d", pid);
		int *n = realloc(r->missing_pids, (r->n_missing_pids + 1) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->missing_pids = n;
		r->missing_pids[r->n_missing_pids++] = pid;
	}
	return 0;
}

void pl__res_select_free(struct pl_resources *r)
{
	size_t i;

	for (i = 0; i < r->n_procs; i++)
		pl__res_proc_free(r, r->procs[i]);
	free(r->procs);
	r->procs = NULL;
	r->n_procs = 0;
	for (i = 0; i < r->n_names; i++)
		free(r->names[i]);
	free(r->names);
	free(r->want_pids);
	free(r->missing_pids);
	free(r->roots);
	free(r->gone);
	for (i = 0; i < r->n_seen; i++)
		seen_close(r, &r->seen[i]);
	free(r->seen);
	free(r->listing);
}

/* Re-read every chosen process's stat; drop the ones that left. */
static void refresh(struct pl_resources *r)
{
	size_t i, kept = 0;

	for (i = 0; i < r->n_procs; i++) {
		struct pl_res_proc *p = r->procs[i];
		ssize_t n = pl__res_read(r, p, NULL, &p->stat, "stat");
		const char *why = NULL;

		if (n < 0)
			why = "exited";
		else if (pl__parse_pid_stat(r->buf.buf, &p->st) < 0)
			why = "unreadable";
		else if (p->st.pid != p->pid || p->st.starttime_ticks != p->starttime_ticks)
			why = "pid reused";
		if (n < 0 && n != -ESRCH && n != -ENOENT)
			pl__res_read_error(r, (int)n, p->pid, "stat");
		if (why) {
			pl__res_proc_gone(r, p, why);
			continue;
		}
		r->procs[kept++] = p;
	}
	r->n_procs = kept;
}

static bool need_scan(const struct pl_resources *r)
{
	size_t i;

	if (r->n_names)
		return true;
	for (i = 0; i < r->n_roots; i++) {
		if (!r->roots[i].gone)
			return true;
	}
	return false;
}

static int cmp_dirent(const void *a, const void *b)
{
	int x = ((const struct pl_res_dirent *)a)->pid, y = ((const struct pl_res_dirent *)b)->pid;

	return (x > y) - (x < y);
}

/* The root's process directories, sorted by pid: the count or -errno. */
static ssize_t list_root(struct pl_resources *r)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d;
	int err;

	if ((err = pl__procdir_opendir(r->root_fd, ".", &d)) < 0)
		return err;
	while ((de = readdir(d))) {
		int pid;

		if (parse_pid(de->d_name, &pid) < 0)
			continue;
		if (n == r->cap_listing) {
			size_t ncap = r->cap_listing ? r->cap_listing * 2 : 512;
			struct pl_res_dirent *nl = realloc(r->listing, ncap * sizeof(*nl));

			if (!nl) {
				closedir(d);
				return -ENOMEM;
			}
			r->listing = nl;
			r->cap_listing = ncap;
		}
		r->listing[n].pid = pid;
		r->listing[n].ino = de->d_ino;
		n++;
	}
	closedir(d);
	qsort(r->listing, n, sizeof(*r->listing), cmp_dirent);
	return (ssize_t)n;
}

/* Fill e from PID/stat (a process not seen before). */
static bool seen_read_stat(struct pl_resources *r, struct pl_res_seen *e)
{
	struct pl_pid_stat st;
	char rel[32];

	snprintf(rel, sizeof(rel), "%d/stat", e->pid);
	if (pl__res_read_root(r, NULL, rel) < 0 || pl__parse_pid_stat(r->buf.buf, &st) < 0 ||
	    st.pid != e->pid)
		return false;
	e->ppid = st.ppid;
	e->starttime_ticks = st.starttime_ticks;
	memcpy(e->comm, st.comm, sizeof(e->comm));
	return true;
}

/* Re-read the comm of a process seen before (--names). */
static bool seen_refresh_comm(struct pl_resources *r, struct pl_res_seen *e)
{
	char rel[32];
	size_t len;

	snprintf(rel, sizeof(rel), "%d/comm", e->pid);
	if (pl__res_read_root(r, &e->comm_file, rel) < 0) {
		/* A tree without comm files: stat has it too. */
		pl__res_close_file(r, &e->comm_file);
		return seen_read_stat(r, e);
	}
	len = strcspn(r->buf.buf, "\n");
	if (len >= sizeof(e->comm))
		len = sizeof(e->comm) - 1;
	memcpy(e->comm, r->buf.buf, len);
	e->comm[len] = '\0';
	return true;
}

/* Bring r->seen up to date with a new listing of the root. false when the
 * root cannot be listed (then nothing is concluded this tick). */
static bool scan(struct pl_resources *r)
{
	ssize_t n = list_root(r);
	struct pl_res_seen *old = r->seen, *nseen;
	size_t n_old = r->n_seen, i, j = 0, k = 0;

	if (n < 0) {
		pl__res_read_error(r, (int)n, 0, "listing the proc root");
		return false;
	}
	nseen = malloc(((size_t)n ? (size_t)n : 1) * sizeof(*nseen));
	if (!nseen) {
		pl__res_read_error(r, -ENOMEM, 0, "listing the proc root");
		return false;
	}
	for (i = 0; i < (size_t)n; i++) {
		const struct pl_res_dirent *l = &r->listing[i];
		struct pl_res_seen *e = &nseen[k];
		bool ok;

		while (j < n_old && old[j].pid < l->pid)
			seen_close(r, &old[j++]);
		if (j < n_old && old[j].pid == l->pid && (find_proc(r, l->pid) ||
							  old[j].dir_ino != l->ino ||
							  old[j].taken))
			seen_close(r, &old[j++]);
		if (find_proc(r, l->pid))
			continue;
		if (j < n_old && old[j].pid == l->pid) {
			*e = old[j++];
			ok = r->n_names == 0 || seen_refresh_comm(r, e);
		} else {
			memset(e, 0, sizeof(*e));
			e->comm_file = (struct pl_procfile)PL_PROCFILE_INIT;
			e->pid = l->pid;
			e->dir_ino = l->ino;
			ok = seen_read_stat(r, e);
		}
		if (!ok) {
			/* It exited between the listing and the read. */
			seen_close(r, e);
			continue;
		}
		e->taken = false;
		k++;
	}
	while (j < n_old)
		seen_close(r, &old[j++]);
	free(old);
	r->seen = nseen;
	r->n_seen = k;
	return true;
}

static bool name_matches(const struct pl_resources *r, const char *comm)
{
	size_t i;

	for (i = 0; i < r->n_names; i++) {
		if (strstr(comm, r->names[i]))
			return true;
	}
	return false;
}

/* Is pid a process whose children belong to a tree? */
static bool in_tree(const struct pl_resources *r, int pid)
{
	const struct pl_res_proc *p = find_proc(r, pid);
	size_t i;

	if (p)
		return (p->why & PL_RES_BY_TREE) != 0;
	for (i = 0; i < r->n_roots; i++) {
		if (r->roots[i].pid == pid && !r->roots[i].include_self)
			return true;
	}
	return false;
}

/* Roots already followed (say by --pids) are known without a scan; a known
 * root no longer followed has exited, and its pid means nothing now. */
static void update_roots(struct pl_resources *r)
{
	size_t i;

	for (i = 0; i < r->n_roots; i++) {
		struct pl_res_root *root = &r->roots[i];
		struct pl_res_proc *p;

		if (!root->include_self || root->gone)
			continue;
		p = find_proc(r, root->pid);
		if (p && (!root->known || p->starttime_ticks == root->starttime_ticks)) {
			p->why |= PL_RES_BY_TREE;
			root->known = true;
			root->starttime_ticks = p->starttime_ticks;
		} else if (root->known) {
			root->gone = true;
		}
	}
}

static unsigned root_match(struct pl_resources *r, const struct pl_res_seen *c)
{
	size_t i;

	for (i = 0; i < r->n_roots; i++) {
		struct pl_res_root *root = &r->roots[i];

		if (root->pid != c->pid || !root->include_self || root->gone)
			continue;
		if (root->known && root->starttime_ticks != c->starttime_ticks)
			continue;
		root->known = true;
		root->starttime_ticks = c->starttime_ticks;
		return PL_RES_BY_TREE;
	}
	return 0;
}

static void take_new(struct pl_resources *r)
{
	bool added;
	size_t i;

	/* Repeat until no candidate joins: a child can come before its
	 * parent in the listing (pids wrap). */
	do {
		added = false;
		for (i = 0; i < r->n_seen; i++) {
			struct pl_res_seen *c = &r->seen[i];
			unsigned why = 0;

			if (c->taken)
				continue;
			if (name_matches(r, c->comm))
				why |= PL_RES_BY_NAME;
			why |= root_match(r, c);
			if (in_tree(r, c->ppid))
				why |= PL_RES_BY_TREE;
			if (!why)
				continue;
			c->taken = true;
			seen_close(r, c);
			if (add_proc(r, c->pid, why, c->starttime_ticks) && (why & PL_RES_BY_TREE))
				added = true;
		}
	} while (added);
	/* A root that was never seen had exited before the first scan. */
	for (i = 0; i < r->n_roots; i++) {
		if (r->roots[i].include_self && !r->roots[i].known)
			r->roots[i].gone = true;
	}
}

void pl__res_select(struct pl_resources *r)
{
	refresh(r);
	update_roots(r);
	if (!need_scan(r))
		return;
	if (scan(r))
		take_new(r);
}

static void add_root(struct pl_resources *r, int pid, bool include_self)
{
	struct pl_res_root *n;

	if (pid <= 0)
		return;
	n = realloc(r->roots, (r->n_roots + 1) * sizeof(*n));
	if (!n) {
		pl__log_warnx("resources: out of memory adding pid %d", pid);
		return;
	}
	r->roots = n;
	memset(&n[r->n_roots], 0, sizeof(*n));
	n[r->n_roots].pid = pid;
	n[r->n_roots].include_self = include_self;
	r->n_roots++;
}

void pl__resources_add_root_pid(struct pl_resources *r, int pid)
{
	add_root(r, pid, true);
}

void pl__resources_add_descendants_of(struct pl_resources *r, int pid)
{
	add_root(r, pid, false);
}
