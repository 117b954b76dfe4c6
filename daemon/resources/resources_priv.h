/* The resource sampler's internals, shared between its files:
 *   resources.c         lifecycle, the tick, output
 *   resources_read.c    /proc file access: kept fds within a budget, one
 *                       shared read buffer, the injected-failure seam
 *   resources_select.c  which processes are sampled (pids, names, trees)
 *   resources_proc.c    reading one process and its threads
 *   resources_system.c  the header's facts and the system memory counters
 *   resources_json.c    building the lines
 */
#ifndef PL_DAEMON_RESOURCES_PRIV_H
#define PL_DAEMON_RESOURCES_PRIV_H

#include "json_writer.h"
#include "log.h"
#include "proc_parse.h"
#include "proc_parse_mem.h"
#include "procfile.h"
#include "resources.h"

#include <stddef.h>
#include <sys/types.h>

/* Bounds on hostile or pathological input: a process with more threads, or
 * more chosen processes, than this is sampled in part and says so. */
#define PL_RES_MAX_THREADS 4096
#define PL_RES_MAX_PROCS 4096

/* Why a process is sampled (bits). */
enum {
	PL_RES_BY_PID = 1u << 0,
	PL_RES_BY_NAME = 1u << 1,
	PL_RES_BY_TREE = 1u << 2, /* a root or one of its descendants */
};

struct pl_res_thread {
	int tid;
	uint64_t starttime_ticks; /* 0 until first read */
	/* Kept fds; their buffers stay NULL (reads go to the shared buffer). */
	struct pl_procfile stat, schedstat, status;
	/* This tick's reading. */
	bool ok;
	struct pl_pid_stat st;
	bool has_sched, has_status;
	struct pl_schedstat sched;
	struct pl_pid_status status_v;
};

struct pl_res_proc {
	int pid;
	uint64_t starttime_ticks;
	unsigned why; /* PL_RES_BY_* */
	int dirfd;    /* PID's directory under the root, or -1 (fd budget) */
	struct pl_procfile stat, status;
	struct pl_res_thread *threads; /* sorted by tid */
	size_t n_threads, cap_threads;
	bool pss_warned; /* the PSS read error was logged once */

	/* This tick's reading. */
	struct pl_pid_stat st;
	bool has_status;
	struct pl_pid_status status_v;
	unsigned threads_listed, threads_gone;
	bool threads_truncated;
	int threads_err;        /* reading the task dir failed: -errno */
	bool pss_read;          /* PSS was due for this process this tick */
	int pss_err;            /* -errno, 0 when pss holds a reading */
	struct pl_smaps_sum pss;
	double pss_ms;
};

/* A process that left between two lines. */
struct pl_res_gone {
	int pid;
	uint64_t starttime_ticks;
	char comm[PL_COMM_MAX];
	const char *why; /* "exited", "exited mid-read", "pid reused" */
};

/* A process the scan found that is not chosen: what it was last seen as.
 * dir_ino is its /proc directory's inode: on the live /proc a new process
 * under a reused pid gets a new inode, so an unchanged (pid, inode) is the
 * same process and its ppid need not be read again (a process that is not
 * in a tree cannot be reparented into one: an orphan goes to a subreaper
 * among its own ancestors). Its comm can change (exec, prctl), so with
 * --names it is re-read each scan through a kept fd of PID/comm. */
struct pl_res_seen {
	int pid, ppid;
	uint64_t dir_ino;
	uint64_t starttime_ticks;
	bool taken;
	char comm[PL_COMM_MAX];
	struct pl_procfile comm_file;
};

/* One entry of the root's listing. */
struct pl_res_dirent {
	int pid;
	uint64_t ino;
};

struct pl_res_root {
	int pid;
	bool include_self; /* false: descendants only */
	bool known;        /* starttime_ticks holds the identity seen first */
	bool gone;
	uint64_t starttime_ticks;
};

/* Injected failures for tests: called before each file read with the pid,
 * the tid (0 for the process's own files) and the file name ("stat",
 * "status", "schedstat", "smaps_rollup", "smaps", "task"); a negative errno
 * returned replaces the read. */
typedef int (*pl_res_fault_fn)(void *ctx, int pid, int tid, const char *file);

struct pl_resources {
	struct pl_resources_config cfg; /* strings are the sampler's copies */
	int root_fd;
	int out_fd; /* -1: no file */

	/* selection */
	int *want_pids;
	size_t n_want_pids;
	char **names;
	size_t n_names;
	struct pl_res_root *roots;
	size_t n_roots;
	int *missing_pids; /* --pids that did not exist at the first tick */
	size_t n_missing_pids;
	bool pids_resolved;
	struct pl_res_proc **procs; /* sorted by pid */
	size_t n_procs, cap_procs;
	struct pl_res_gone *gone; /* this tick's */
	size_t n_gone, cap_gone;
	bool procs_capped_warned;
	struct pl_res_seen *seen; /* sorted by pid, kept between scans */
	size_t n_seen, cap_seen;
	struct pl_res_dirent *listing; /* the last scan's, reused */
	size_t cap_listing;
	int *tids; /* a task listing, kept between ticks */
	size_t cap_tids;

	/* files */
	struct pl_procfile buf; /* the one read buffer (fd unused) */
	struct pl_procfile meminfo, vmstat, buddyinfo;
	char *smaps_buf;
	size_t smaps_buf_len;
	long fds_kept, fds_budget;

	/* facts recorded in the header */
	bool header_written;
	bool smaps_rollup;
	char kernel_release[128];

	/* timing */
	uint64_t interval_ns, pss_interval_ns;
	uint64_t next_pss_mono_ns; /* 0: at the first tick */
	uint64_t seq;

	struct pl_json json;
	struct pl_resources_stats stats;
	struct pl__ratelimit rl_read;
	pl_res_fault_fn fault;
	void *fault_ctx;
};

/* resources.c: the test seam. */
void pl__resources_set_fault(struct pl_resources *r, pl_res_fault_fn fn, void *ctx);

/* resources_read.c */
/* Read a file of process p (t NULL) or of its thread t into r->buf.buf,
 * keeping pf's fd open when the budget allows. Returns the length or
 * -errno; -ENOENT or -ESRCH mean the file or the task is gone. */
ssize_t pl__res_read(struct pl_resources *r, struct pl_res_proc *p, struct pl_res_thread *t,
		     struct pl_procfile *pf, const char *name);
/* Read a file relative to the root into r->buf.buf (meminfo, sysctls, a
 * candidate's stat), keeping pf open when pf is not NULL and the budget
 * allows. */
ssize_t pl__res_read_root(struct pl_resources *r, struct pl_procfile *pf, const char *rel);
/* Open PID's directory under the root, counted against the budget: the fd,
 * -EMFILE when the budget is spent (paths then go through the root), or
 * another -errno when the process is gone. */
int pl__res_open_piddir(struct pl_resources *r, int pid);
/* Build "task/TID/name" or "name" relative to p's directory; returns that
 * directory's fd (the root when p has none, with "PID/" in front). */
int pl__res_path(const struct pl_res_proc *p, const struct pl_res_thread *t, const char *name,
		 char *path, size_t len, int root_fd);
void pl__res_close_file(struct pl_resources *r, struct pl_procfile *pf);
void pl__res_close_fd(struct pl_resources *r, int *fd);
/* The injected failure for (pid, tid, name), or 0. */
int pl__res_fault(struct pl_resources *r, int pid, int tid, const char *name);
/* A read error that is not an exit: counted and logged at most once a
 * second. */
void pl__res_read_error(struct pl_resources *r, int err, int pid, const char *what);

/* resources_select.c */
/* Parse --pids and --names and find the --pids processes. 0 or -EINVAL. */
int pl__res_select_init(struct pl_resources *r);
void pl__res_select_free(struct pl_resources *r);
/* Refresh the chosen set: re-read each chosen process's stat (dropping the
 * ones that left into r->gone), then find new ones. After it, each
 * process's st holds this tick's stat. */
void pl__res_select(struct pl_resources *r);
/* Record that p left (why: a string literal) and free it; p must have been
 * removed from r->procs already. */
void pl__res_proc_gone(struct pl_resources *r, struct pl_res_proc *p, const char *why);
void pl__res_proc_free(struct pl_resources *r, struct pl_res_proc *p);

/* resources_proc.c */
/* Read status, threads and (pss_due) PSS of p. Returns 0, or -ESRCH when
 * the process left during the reads (its numbers must not be used). */
int pl__res_proc_sample(struct pl_resources *r, struct pl_res_proc *p, bool pss_due);
void pl__res_threads_free(struct pl_resources *r, struct pl_res_proc *p);

/* resources_system.c */
/* Probe what the kernel offers (smaps_rollup, the release). */
void pl__res_probe(struct pl_resources *r);
/* The header's facts and the sysctls, into r->json. */
void pl__res_emit_header_facts(struct pl_resources *r);
/* meminfo, vmstat and buddyinfo, into r->json. */
void pl__res_emit_system(struct pl_resources *r);

/* resources_json.c */
/* A comm or other kernel string as a JSON string: invalid UTF-8 becomes '?'. */
void pl__res_json_text(struct pl_json *j, const char *key, const char *text);
void pl__res_emit_proc(struct pl_resources *r, const struct pl_res_proc *p);
void pl__res_emit_gone(struct pl_resources *r);
void pl__res_emit_selection(struct pl_resources *r);

#endif
