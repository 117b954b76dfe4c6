/* See procs_find.h. loadavg's last pid says whether any task was created
 * since the last tick: while it stays the same, nothing is looked for. Up
 * to PROBE_MAX new pids are looked up one by one (on a live /proc of this
 * pid namespace, whose pids loadavg gives; under churn most are gone
 * already, one failed clock read each); anything else is a scan of the
 * whole directory, as is every RESCAN_TICKS-th tick. */
#include "procs_find.h"
#include "procs_read.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RESCAN_TICKS 50
#define PROBE_MAX 256

/* An entry as getdents64 gives it (the C library declares no such type for
 * the raw system call). */
struct proc_dirent {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* A /proc entry's pid, or -1 for a name that is none ("self", "sys"). */
static int pid_of_name(const char *name)
{
	long v = 0;

	if (*name < '1' || *name > '9')
		return -1;
	for (; *name; name++) {
		if (*name < '0' || *name > '9' || v > INT_MAX / 10)
			return -1;
		v = v * 10 + (*name - '0');
	}
	return (int)v;
}

/* A pid found by a scan or a probe: added if new. A known one is left as it
 * was on a live /proc, whose kept fds tell when it is gone; in a recorded
 * tree it is marked seen, and the scan drops those it did not list. The
 * hash must be current. 0 or -errno. */
static int consider(struct pl_tprocs *tp, int pid, uint64_t tick, bool born)
{
	long at = pl__tprocs_lookup(tp, pid);
	int err;

	if (at >= 0) {
		if (!tp->kept)
			tp->v[at].seen_tick = tick;
		return 0;
	}
	if (2 * (tp->n + 1) > tp->hcap) {
		if ((err = pl__tprocs_rehash(tp)) < 0)
			return err;
		at = pl__tprocs_lookup(tp, pid);
	}
	err = pl__tproc_add(tp, pid, tick, born);
	if (err > 0)
		tp->hash[-at - 1] = (int32_t)tp->n;
	return err < 0 ? err : 0;
}

/* The pids handed out in (from, to]. Threads take pids too; add refuses
 * them. */
static int probe(struct pl_tprocs *tp, uint64_t from, uint64_t to, uint64_t tick)
{
	int err;

	tp->probes++;
	if ((err = pl__tprocs_rehash(tp)) < 0)
		return err;
	for (uint64_t pid = from + 1; pid <= to && err == 0; pid++)
		err = consider(tp, (int)pid, tick, true);
	return err;
}

static int scan(struct pl_tprocs *tp, uint64_t tick)
{
	int err;

	tp->dir_scans++;
	if ((err = pl__tprocs_rehash(tp)) < 0)
		return err;
	if (lseek(tp->scanfd, 0, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		long n;

		do
			n = syscall(SYS_getdents64, tp->scanfd, tp->dents, tp->dents_cap);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		for (size_t off = 0; off + sizeof(struct proc_dirent) <= (size_t)n;) {
			const struct proc_dirent *d = (const void *)(tp->dents + off);
			int pid;

			if (d->d_reclen == 0)
				return -EIO;
			off += d->d_reclen;
			pid = pid_of_name(d->d_name);
			if (pid > 0 && (err = consider(tp, pid, tick, false)) < 0)
				return err;
		}
	}
	/* a recorded tree has no kept fds to fail: what is not listed is gone */
	if (!tp->kept) {
		for (size_t i = 0; i < tp->n;) {
			if (tp->v[i].seen_tick != tick)
				pl__tprocs_drop(tp, i, tick);
			else
				i++;
		}
	}
	tp->scan_tick = tick;
	return 0;
}

int pl__find_new_pids(struct pl_tprocs *tp, uint64_t tick, uint64_t last_pid)
{
	bool need_scan = !tp->kept || tp->scan_tick == 0 || last_pid == 0 || !tp->have_last_pid ||
			 last_pid != tp->last_pid || tick >= tp->scan_tick + RESCAN_TICKS;
	int err = 0;

	if (need_scan && tp->kept && tp->scan_tick && tp->have_last_pid && tp->own_pid_ns &&
	    last_pid > tp->last_pid && last_pid - tp->last_pid <= PROBE_MAX &&
	    tick < tp->scan_tick + RESCAN_TICKS) {
		err = probe(tp, tp->last_pid, last_pid, tick);
		tp->last_pid = last_pid;
		return err < 0 ? err : 0;
	}
	tp->last_pid = last_pid;
	tp->have_last_pid = last_pid != 0;
	if (need_scan)
		err = scan(tp, tick);
	return err < 0 ? err : 0;
}

/* A child started by vfork (or posix_spawn) leaves its parent in D until it
 * execs or exits, a wait that shows in neither PSI nor procs_blocked. So
 * the parent of a process added this tick is read now, unless it was
 * already or the child has exec'd (its comm is no longer the parent's);
 * found in D, it is read every tick while it stays there. Only on a live
 * root, where the hash is current after the adds. */
void pl__find_read_new_parents(struct pl_tprocs *tp, uint64_t tick)
{
	for (size_t k = 0; k < tp->n_new_children; k++) {
		long c = pl__tprocs_lookup(tp, tp->new_children[k]), at;
		struct pl_tproc *p;

		if (c < 0 || (at = pl__tprocs_lookup(tp, tp->v[c].ppid)) < 0)
			continue;
		p = &tp->v[at];
		if (p->seen_tick == tick || strcmp(p->comm, tp->v[c].comm) != 0)
			continue;
		pl__tproc_reread(tp, p, tick);
	}
}
