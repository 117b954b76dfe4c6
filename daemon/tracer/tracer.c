/* The tracer's lifecycle and its tick: read the system counters and the
 * process table, write the CSV rows the Python tool would write, hand the
 * watched processes to the stall detector, measure what the tick cost.
 *
 * Replay: a --proc-root whose 0000/.perflink-time exists is a recording
 * (perflink record-proc); snapshot NNNN is read at tick NNNN + 1 with its
 * wall and mono time from .perflink-time, and the tick after the last one
 * returns -ENODATA. Any other root is read like /proc on every tick. */
#include "tracer_priv.h"
#include "whole_write.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "probe.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

static char *dup_or_null(const char *s, int *err)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*err = -ENOMEM;
	return d;
}

static int copy_config(struct pl_tracer_config *dst, const struct pl_tracer_config *src)
{
	int err = 0;

	*dst = *src;
	dst->out_path = dup_or_null(src->out_path, &err);
	dst->disks = dup_or_null(src->disks, &err);
	dst->names = dup_or_null(src->names, &err);
	dst->events_path = dup_or_null(src->events_path, &err);
	dst->proc_root = dup_or_null(src->proc_root, &err);
	dst->cpus = dup_or_null(src->cpus, &err);
	return err;
}

/* The watch list as the Python tool builds it: split on ',', strip, drop
 * empty names. */
static int split_names(struct pl_tracer *t)
{
	size_t n = 1;
	char *p, *save = NULL, *tok;

	t->names_buf = strdup(t->cfg.names ? t->cfg.names : "");
	if (!t->names_buf)
		return -ENOMEM;
	for (p = t->names_buf; *p; p++)
		n += *p == ',';
	t->watch = calloc(n, sizeof(*t->watch));
	if (!t->watch)
		return -ENOMEM;
	for (tok = strtok_r(t->names_buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *e;

		while (*tok == ' ' || *tok == '\t' || *tok == '\n')
			tok++;
		e = tok + strlen(tok);
		while (e > tok && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n'))
			*--e = '\0';
		if (*tok)
			t->watch[t->nwatch++] = tok;
	}
	return 0;
}

static bool is_dir_at(int dirfd, const char *rel)
{
	return faccessat(dirfd, rel, F_OK, 0) == 0;
}

static void snap_name(char *buf, size_t cap, size_t i)
{
	snprintf(buf, cap, "%04zu", i);
}

/* "wall mono\n" in seconds. */
static int read_snap_time(int snapfd, double *wall, double *mono)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	ssize_t n = pl__procfile_read_once(&pf, snapfd, ".perflink-time");
	char *end;
	int err = -EINVAL;

	if (n < 0) {
		pl__procfile_free(&pf);
		return (int)n;
	}
	*wall = strtod(pf.buf, &end);
	if (end != pf.buf && *end == ' ') {
		const char *m = end + 1;

		*mono = strtod(m, &end);
		if (end != m && (*end == '\n' || *end == '\0') && isfinite(*wall) &&
		    isfinite(*mono) && *wall >= 0 && *mono >= 0)
			err = 0;
	}
	pl__procfile_free(&pf);
	return err;
}

static int set_delayacct(int rootfd, char value)
{
	char c[2] = { value, '\n' };
	ssize_t n;
	int fd;

	do
		fd = openat(rootfd, "sys/kernel/task_delayacct", O_WRONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	do
		n = write(fd, c, 2);
	while (n < 0 && errno == EINTR);
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

static void delayacct_setup(struct pl_tracer *t, int rootfd)
{
	t->delayacct = pl__tracer_read_delayacct(rootfd);
	/* forced absent: off, and not to be turned on (it is not ours to
	 * change when the kernel only pretends to lack it) */
	if (t->cfg.enable_delayacct && t->delayacct == PL_DELAYACCT_OFF &&
	    !pl__probe_forced(PL_PROBE_DELAYACCT)) {
		int err = t->seq ? -EROFS : set_delayacct(rootfd, '1');

		if (err == -EROFS && t->seq)
			pl__log_warnx("--enable-delayacct: %s is a recording, not changed",
				      t->cfg.proc_root);
		else if (err < 0)
			pl__log_warnc(-err, "--enable-delayacct: cannot write 1 to "
					    "%s/sys/kernel/task_delayacct (needs root)",
				      t->cfg.proc_root);
		else
			t->delayacct_restore = true;
		t->delayacct = pl__tracer_read_delayacct(rootfd);
	}
	switch (t->delayacct) {
	case PL_DELAYACCT_OFF:
		pl__probe_absent(PL_PROBE_DELAYACCT, true,
				 "kernel.task_delayacct is off: block-I/O delays (stat field 42) "
				 "read 0 and only D state is seen; turn it on with "
				 "--enable-delayacct or sysctl kernel.task_delayacct=1 (processes "
				 "started before that keep reading 0)");
		break;
	case PL_DELAYACCT_ABSENT:
		pl__log_info("no kernel.task_delayacct (kernel before 5.14): block-I/O delays "
			     "are counted if the kernel has CONFIG_TASK_DELAY_ACCT");
		break;
	case PL_DELAYACCT_UNREADABLE:
		pl__probe_absent(PL_PROBE_DELAYACCT, true, "kernel.task_delayacct is unreadable: "
							   "block-I/O delays may read 0");
		break;
	case PL_DELAYACCT_ON:
		pl__probe_present(PL_PROBE_DELAYACCT);
		break;
	}
	/* no delay total to say a run of D samples were I/O waits */
	t->scfg.dstate_one_wait = t->delayacct == PL_DELAYACCT_OFF ||
				  pl__probe_forced(PL_PROBE_DELAYACCT);
}

int pl__tracer_open_output(const char *path, bool *created)
{
	int fd;

	/* O_NOFOLLOW: a symbolic link planted where the file goes (a shared
	 * directory such as /tmp) must not make the tracer, often root,
	 * overwrite the file it points to. No O_TRUNC: an output is emptied
	 * only once every output has opened. */
	do
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW,
			  0644);
	while (fd < 0 && errno == EINTR);
	*created = fd >= 0;
	if (fd < 0 && errno == EEXIST) {
		do
			fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
		while (fd < 0 && errno == EINTR);
	}
	return fd < 0 ? -errno : fd;
}

static int open_csv(struct pl_tracer *t, bool *created)
{
	int fd = pl__tracer_open_output(t->cfg.out_path, created);

	t->csv = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!t->csv) {
		int err = fd < 0 ? fd : -errno;

		if (fd >= 0)
			close(fd);
		pl__log_warnc(-err, "cannot write %s", t->cfg.out_path);
		return err;
	}
	return 0;
}

static int write_csv_header(struct pl_tracer *t)
{
	/* One flush a tick: a crash loses at most the tick in progress. */
	t->csv_buf = malloc(65536);
	if (t->csv_buf)
		setvbuf(t->csv, t->csv_buf, _IOFBF, 65536);
	if (pl__truncate_to(fileno(t->csv), 0) < 0 || fputs(pl__tracer_csv_header, t->csv) == EOF ||
	    fflush(t->csv) == EOF) {
		int err = -errno;

		pl__log_warn("cannot write %s", t->cfg.out_path);
		return err ? err : -EIO;
	}
	t->csv_whole = pl__file_length(fileno(t->csv));
	return 0;
}

/* A tick whose rows did not all reach the CSV (a full disk, a file size
 * limit): the file goes back to its last whole tick, and what stdio still
 * holds of this one is thrown away, so that no reader meets half a row. */
static void csv_back_to_whole(struct pl_tracer *t)
{
	__fpurge(t->csv);
	t->csv_tick_bytes = 0;
	if (t->csv_whole >= 0)
		pl__truncate_to(fileno(t->csv), t->csv_whole);
}

/* What pl__tracer_close frees or closes, in a state it may free before
 * anything is set up. */
static void init_closable(struct pl_tracer *t)
{
	t->rootfd = t->snapfd = t->events_fd = -1;
	t->procs.scanfd = -1;
	t->procs.scratch.fd = -1;
	pl__tsys_init(&t->sys, NULL);
	pl__json_init(&t->json);
}

static int check_config(const struct pl_tracer_config *cfg)
{
	if (!cfg->out_path || !cfg->proc_root || !cfg->names || !cfg->disks) {
		pl__log_warnx("tracer: --out, --proc-root, --names and --disk need a value");
		return -EINVAL;
	}
	if (!(cfg->hz > 0) || !isfinite(cfg->hz)) {
		pl__log_warnx("tracer: --hz must be above 0");
		return -EINVAL;
	}
	return 0;
}

/* The tick rate, the watch list and the stall thresholds from t->cfg. */
static int derive_settings(struct pl_tracer *t)
{
	int err;

	t->interval_ns = (uint64_t)(1e9 / t->cfg.hz);
	t->clk_tck = sysconf(_SC_CLK_TCK);
	if (t->clk_tck <= 0)
		t->clk_tck = 100;
	if ((err = split_names(t)) < 0)
		return err;
	t->event_rl = (struct pl__ratelimit)PL_RATELIMIT_INIT(1000);
	t->scfg.blkio_ms = t->cfg.blkio_stall_ms;
	t->scfg.dstate_ms = t->cfg.dstate_stall_ms;
	t->scfg.interval_ms = 1000.0 / t->cfg.hz;
	return 0;
}

/* --proc-root, and whether it is the kernel's /proc, a recording, or
 * another tree read like /proc. */
static int open_root(struct pl_tracer *t)
{
	struct statfs sfs;

	t->rootfd = pl__procdir_open(AT_FDCWD, t->cfg.proc_root);
	if (t->rootfd < 0) {
		int err = t->rootfd;

		pl__log_warnc(-err, "--proc-root %s", t->cfg.proc_root);
		return err;
	}
	t->live = fstatfs(t->rootfd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
	t->seq = !t->live && is_dir_at(t->rootfd, "0000/.perflink-time");
	return 0;
}

static int init_readers(struct pl_tracer *t)
{
	struct pl_tprocs_cfg pcfg;
	int err;

	pcfg.watch = t->watch;
	pcfg.nwatch = t->nwatch;
	pcfg.track_writers = t->cfg.track_writers;
	pcfg.stat_every_tick = t->cfg.stat_every_tick;
	pcfg.clk_tck = t->clk_tck;
	pcfg.no_blkio = pl__probe_forced(PL_PROBE_DELAYACCT);
	pcfg.fd_budget = t->cfg.fd_budget;
	pcfg.interval_ms = 1000.0 / t->cfg.hz;
	if ((err = pl__tprocs_init(&t->procs, &pcfg)) < 0)
		return err;
	return pl__tsys_init(&t->sys, t->cfg.disks);
}

/* A recording: the ticks read the snapshots from 0000 on, so only what
 * the first one has is looked at here, for the config line. */
static int first_snapshot(struct pl_tracer *t, struct pl_tsys_sample *first)
{
	int err;

	t->snapfd = pl__procdir_open(t->rootfd, "0000");
	if (t->snapfd < 0) {
		err = t->snapfd;
		pl__log_warnc(-err, "%s/0000", t->cfg.proc_root);
		return err;
	}
	if ((err = pl__tsys_check_disks(&t->sys, t->snapfd)) < 0) {
		close(t->snapfd);
		t->snapfd = -1;
		return err;
	}
	delayacct_setup(t, t->snapfd);
	first->have_psi_io = !pl__probe_forced(PL_PROBE_PSI) &&
			     is_dir_at(t->snapfd, "pressure/io");
	first->have_psi_mem = !pl__probe_forced(PL_PROBE_PSI) &&
			      is_dir_at(t->snapfd, "pressure/memory");
	close(t->snapfd);
	t->snapfd = -1;
	return 0;
}

/* The Python tool's baseline: the first tick's deltas count from here. */
static int live_baseline(struct pl_tracer *t, struct pl_tsys_sample *first)
{
	int err;

	if ((err = pl__tsys_check_disks(&t->sys, t->rootfd)) < 0)
		return err;
	delayacct_setup(t, t->rootfd);
	if ((err = pl__tprocs_set_root(&t->procs, t->rootfd, t->live)) < 0) {
		pl__log_warnc(-err, "--proc-root %s", t->cfg.proc_root);
		return err;
	}
	pl__tsys_read(&t->sys, t->rootfd, t->live, first);
	return 0;
}

/* The CSV with its header, the events file with its config line. */
/* Every output is opened before any is written: one that cannot be opened
 * leaves the others as they were (a file this call created is removed),
 * not a CSV with a header and no events file. */
static int open_outputs(struct pl_tracer *t, const struct pl_tsys_sample *first)
{
	bool csv_created, events_created;
	int err;

	if ((err = open_csv(t, &csv_created)) < 0)
		return err;
	if ((err = pl__tevents_open(t, &events_created)) < 0) {
		fclose(t->csv);
		t->csv = NULL;
		if (csv_created)
			unlink(t->cfg.out_path);
		return err;
	}
	if ((err = write_csv_header(t)) < 0)
		return err;
	if ((err = pl__truncate_to(t->events_fd, 0)) < 0) {
		pl__log_warnc(-err, "cannot write %s", t->events_path);
		return err;
	}
	return pl__tevents_config(t, (double)pl__wall_ns() / 1e9, (double)pl__mono_ns() / 1e9,
				  first);
}

int pl__tracer_open(struct pl_tracer **out, const struct pl_tracer_config *cfg)
{
	struct pl_tracer *t = calloc(1, sizeof(*t));
	struct pl_tsys_sample first;
	int err;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	init_closable(t);
	if ((err = copy_config(&t->cfg, cfg)) < 0)
		goto fail;
	if ((err = check_config(&t->cfg)) < 0)
		goto fail;
	if ((err = derive_settings(t)) < 0)
		goto fail;
	if ((err = open_root(t)) < 0)
		goto fail;
	if ((err = init_readers(t)) < 0)
		goto fail;
	memset(&first, 0, sizeof(first));
	err = t->seq ? first_snapshot(t, &first) : live_baseline(t, &first);
	if (err < 0)
		goto fail;
	if ((err = open_outputs(t, &first)) < 0)
		goto fail;
	*out = t;
	return 0;
fail:
	pl__tracer_close(t);
	return err;
}

uint64_t pl__tracer_interval_ns(const struct pl_tracer *t)
{
	return t->interval_ns;
}

bool pl__tracer_replaying(const struct pl_tracer *t)
{
	return t->seq;
}

static int next_snapshot(struct pl_tracer *t, double *wall, double *mono)
{
	char name[32];
	int fd, err;

	snap_name(name, sizeof(name), t->snap_next);
	if (!is_dir_at(t->rootfd, name))
		return -ENODATA;
	fd = pl__procdir_open(t->rootfd, name);
	if (fd < 0)
		return fd;
	if ((err = read_snap_time(fd, wall, mono)) < 0) {
		pl__log_warnc(-err, "%s/%s/.perflink-time: expected \"wall mono\" seconds",
			      t->cfg.proc_root, name);
		close(fd);
		return -EINVAL;
	}
	if (t->snapfd >= 0)
		close(t->snapfd);
	t->snapfd = fd;
	t->snap_next++;
	return pl__tprocs_set_root(&t->procs, fd, false);
}

/* The Python tool's rule: only rows that carry signal (writing, blocked,
 * or in D). */
static bool wants_row(const struct pl_tproc *p)
{
	const struct pl_csv_base *b = &p->csv;

	if (!b->now)
		return false;
	return (double)b->d_wchar / 1024.0 > 4 || (double)b->d_wbytes / 1024.0 > 4 ||
	       b->d_blk_ms > 5 || p->state == 'D';
}

static int cmp_pid(const void *a, const void *b, void *ctx)
{
	const struct pl_tproc *v = ctx;
	int pa = v[*(const size_t *)a].pid, pb = v[*(const size_t *)b].pid;

	return (pa > pb) - (pa < pb);
}

static int write_line(struct pl_tracer *t, int len)
{
	if (len < 0)
		return len;
	if (fwrite(t->line, 1, (size_t)len, t->csv) != (size_t)len)
		return errno ? -errno : -EIO;
	t->csv_tick_bytes += (off_t)len;
	return 0;
}

static int write_rows(struct pl_tracer *t, double wall, double mono,
		      const struct pl_tsys_sample *s)
{
	struct pl_tprocs *tp = &t->procs;
	struct pl_csv_row row;
	struct pl_csv_sys sys;
	size_t i, nrows = 0;
	int err;

	if (tp->n > t->row_cap) {
		size_t ncap = tp->cap;
		size_t *ni = realloc(t->row_idx, ncap * sizeof(*ni));

		if (!ni)
			return -ENOMEM;
		t->row_idx = ni;
		t->row_cap = ncap;
	}
	/* a row needs a sample used this tick: a process read this tick */
	for (size_t k = 0; k < tp->n_touched; k++) {
		if (wants_row(&tp->v[tp->touched[k]]))
			t->row_idx[nrows++] = tp->touched[k];
	}
	/* The Python tool lists /proc, which is in pid order. */
	if (nrows > 1)
		qsort_r(t->row_idx, nrows, sizeof(*t->row_idx), cmp_pid, tp->v);
	row.wall = wall;
	row.mono = mono;
	row.disk_d_write_kb = s->disk_d_write_kb;
	row.disk_d_busy_ms = s->disk_d_busy_ms;
	for (i = 0; i < nrows; i++) {
		const struct pl_tproc *p = &tp->v[t->row_idx[i]];

		row.label = p->label >= 0 ? t->watch[p->label] : p->comm;
		row.pid = p->pid;
		row.state = p->state;
		row.d_wchar_kb = (double)p->csv.d_wchar / 1024.0;
		row.d_wbytes_kb = (double)p->csv.d_wbytes / 1024.0;
		row.d_blkio_ms = p->csv.d_blk_ms;
		if ((err = write_line(t, pl__csv_format_row(t->line, sizeof(t->line), &row))) < 0)
			return err;
		t->rows++;
	}
	sys.wall = wall;
	sys.mono = mono;
	sys.d_compact = s->d_compact;
	sys.d_alloc = s->d_alloc;
	sys.d_majflt = s->d_majflt;
	sys.dirty_kb = s->dirty_kb;
	sys.writeback_kb = s->writeback_kb;
	sys.memfree_kb = s->memfree_kb;
	sys.memavail_kb = s->memavail_kb;
	if ((err = write_line(t, pl__csv_format_sys(t->line, sizeof(t->line), &sys))) < 0)
		return err;
	t->rows++;
	return 0;
}

static void remember_sys(struct pl_tracer *t, double mono, const struct pl_tsys_sample *s)
{
	struct pl_stall_sys h;

	memset(&h, 0, sizeof(h));
	h.tick = t->tick;
	h.mono = mono;
	h.d_compact = s->d_compact;
	h.d_alloc = s->d_alloc;
	h.d_scan_direct = s->d_scan_direct;
	h.d_scan_cgroup = s->d_scan_cgroup;
	h.have_disk = s->have_disk;
	h.disk_busy_ms = s->disk_d_busy_ms;
	h.disk_write_kb = s->disk_d_write_kb;
	h.dirty_kb = s->dirty_kb;
	h.writeback_kb = s->writeback_kb;
	h.nr_dirty_kb = s->nr_dirty_kb;
	h.nr_writeback_kb = s->nr_writeback_kb;
	h.bg_thresh_kb = s->bg_thresh_kb;
	h.thresh_kb = s->thresh_kb;
	h.thresh_estimated = s->thresh_estimated;
	h.written_kb = s->written_kb;
	h.have_psi_io = s->have_psi_io;
	h.have_psi_mem = s->have_psi_mem;
	h.psi_io = s->psi_io;
	h.psi_mem = s->psi_mem;
	pl__stall_history_put(&t->hist, &h);
}

const char *pl__tracer_phase_name(enum pl_tracer_phase ph)
{
	static const char *const names[PL_TPHASE_N] = {
		[PL_TPHASE_SYSTEM] = "system", [PL_TPHASE_PROCESSES] = "processes",
		[PL_TPHASE_OUTPUT] = "output", [PL_TPHASE_EVENTS] = "events",
	};

	return (unsigned)ph < PL_TPHASE_N ? names[ph] : "?";
}

/* --cost-split: the phase from *t0 to now, over the ticks after the first
 * (which reads every process: setting up, not a tick's cost). */
static void phase_done(struct pl_tracer *t, enum pl_tracer_phase ph, uint64_t *t0, uint64_t items)
{
	uint64_t now;

	if (!t->cfg.cost_split)
		return;
	now = pl__mono_ns();
	if (t->tick > 1) {
		t->phase[ph].ns += now - *t0;
		t->phase[ph].items += items;
	}
	*t0 = now;
}

int pl__tracer_tick(struct pl_tracer *t)
{
	uint64_t t0 = pl__mono_ns(), c0 = pl__thread_cpu_ns(), tp0 = t0, t1, c1;
	struct pl_tsys_sample s;
	struct pl_tprocs_hint hint;
	double wall = 0, mono = 0, ms;
	int rootfd = t->rootfd, err;
	bool keep = t->live;

	t->tick_cpu0_ns = c0;
	if (t->seq) {
		if ((err = next_snapshot(t, &wall, &mono)) < 0)
			return err;
		rootfd = t->snapfd;
		keep = false;
	} else {
		wall = (double)pl__wall_ns() / 1e9;
		mono = (double)t0 / 1e9;
	}
	t->tick++;
	t->procs.now_ms = mono * 1000.0;
	pl__tsys_read(&t->sys, rootfd, keep, &s);
	phase_done(t, PL_TPHASE_SYSTEM, &tp0, 1);
	hint.maybe_blocked = s.maybe_blocked;
	hint.procs_blocked = s.procs_blocked;
	hint.dirtied_bytes = s.dirtied_bytes;
	if ((err = pl__tprocs_tick(&t->procs, t->tick, s.last_pid, &hint)) < 0) {
		pl__log_warnc(-err, "%s: cannot list processes", t->cfg.proc_root);
		return err;
	}
	phase_done(t, PL_TPHASE_PROCESSES, &tp0, t->procs.n_touched);
	pl__tbaseline_tick(&t->procs);
	if ((err = write_rows(t, wall, mono, &s)) < 0) {
		pl__log_warnc(-err, "cannot write %s", t->cfg.out_path);
		csv_back_to_whole(t);
		return err;
	}
	remember_sys(t, mono, &s);
	phase_done(t, PL_TPHASE_OUTPUT, &tp0, 0);
	if ((err = pl__tevents_tick(t, wall, mono)) < 0)
		return err;
	phase_done(t, PL_TPHASE_EVENTS, &tp0, 1);
	if (fflush(t->csv) == EOF) {
		err = errno ? -errno : -EIO;
		pl__log_warnc(-err, "cannot write %s", t->cfg.out_path);
		csv_back_to_whole(t);
		return err;
	}
	/* counted, not asked for with an fstat: one syscall less a tick */
	if (t->csv_whole >= 0)
		t->csv_whole += t->csv_tick_bytes;
	t->csv_tick_bytes = 0;
	phase_done(t, PL_TPHASE_OUTPUT, &tp0, 1);
	c1 = pl__thread_cpu_ns();
	t1 = pl__mono_ns();
	if (t->cfg.cost_split && t->tick > 1) {
		t->cost_ticks++;
		t->cost_cpu_ns += c1 - c0;
	}
	ms = (double)(c1 - c0) / 1e6;
	t->sampler_ms_last = ms;
	pl__qhist_add(&t->sampler, ms);
	pl__qhist_add(&t->wall, (double)(t1 - t0) / 1e6);
	return 0;
}

void pl__tracer_get_stats(const struct pl_tracer *t, struct pl_tracer_stats *out)
{
	const struct pl_tprocs *tp = &t->procs;

	memset(out, 0, sizeof(*out));
	out->ticks = t->tick;
	out->rows = t->rows;
	out->stall_events = t->events;
	out->processes = tp->n;
	out->sampler_ms_last = t->sampler_ms_last;
	out->sampler_ms_p50 = pl__qhist_quantile(&t->sampler, 0.5);
	out->sampler_ms_p99 = pl__qhist_quantile(&t->sampler, 0.99);
	out->sampler_ms_max = t->sampler.max_ms;
	out->tick_wall_ms_p50 = pl__qhist_quantile(&t->wall, 0.5);
	out->tick_wall_ms_p99 = pl__qhist_quantile(&t->wall, 0.99);
	out->tick_wall_ms_max = t->wall.max_ms;
	out->read_errors = tp->read_errors;
	out->io_denied = tp->io_denied;
	out->pid_reuses = tp->pid_reuses;
	out->exits = tp->exits;
	out->stat_reads = tp->stat_reads;
	out->io_reads = tp->io_reads;
	out->schedstat_reads = tp->schedstat_reads;
	out->dir_scans = tp->dir_scans;
	out->wchan_reads = tp->wchan_reads;
	out->full_sweeps = tp->full_sweeps;
	out->dirty_sweeps = tp->dirty_sweeps;
	out->probes = tp->probes;
	out->kept_fds = (uint64_t)tp->fds_open;
	out->fd_budget = tp->fd_budget > 0 ? (uint64_t)tp->fd_budget : 0;
	out->cost_split = t->cfg.cost_split;
	out->cost_ticks = t->cost_ticks;
	out->tick_cpu_ns = t->cost_cpu_ns;
	memcpy(out->phase, t->phase, sizeof(out->phase));
}

int pl__tracer_hand_over_delayacct(struct pl_tracer *t)
{
	int fd;

	if (!t || !t->delayacct_restore)
		return -1;
	if ((fd = openat(t->rootfd, "sys/kernel/task_delayacct", O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	t->delayacct_restore = false;
	return fd;
}

bool pl__tracer_turned_delayacct_on(const struct pl_tracer *t)
{
	return t && t->delayacct_restore;
}

void pl__tracer_close(struct pl_tracer *t)
{
	if (!t)
		return;
	if (t->csv) {
		if (fclose(t->csv) == EOF)
			pl__log_warn("cannot write %s", t->cfg.out_path);
		t->csv = NULL;
	}
	free(t->csv_buf);
	pl__tevents_close(t);
	if (t->delayacct_restore) {
		int err = set_delayacct(t->rootfd, '0');

		if (err < 0)
			pl__log_warnc(-err, "cannot turn kernel.task_delayacct back off");
	}
	pl__tprocs_free(&t->procs);
	pl__tsys_free(&t->sys);
	pl__json_free(&t->json);
	if (t->snapfd >= 0)
		close(t->snapfd);
	if (t->rootfd >= 0)
		close(t->rootfd);
	free(t->row_idx);
	free(t->watch);
	free(t->names_buf);
	pl__tracer_config_free(&t->cfg);
	free(t);
}
