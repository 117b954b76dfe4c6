/* pid_range.h on the live /proc: the positions learnt from a scan's own
 * entries, the live processes of a range listed from there (children the
 * test forks, some of them reaped before), and a wrong position or a scan
 * that disagrees refused, so that the tracer looks the pids up instead. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pid_range.h"
#include "tap.h"

#define CHILDREN 12

/* What the tracer's scan does: every entry of the directory, in order. */
static void learn_from_scan(struct pl_pid_range *r, int dirfd)
{
	static char buf[32768];
	long n;

	pl__pid_range_scan_start(r);
	lseek(dirfd, 0, SEEK_SET);
	while ((n = syscall(SYS_getdents64, dirfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			const struct pl_dirent64 *d = (const void *)(buf + off);
			int pid = pl__pid_of_name(d->d_name);

			pl__pid_range_learn(r, pid > 0 ? pid : 0, d->d_off);
			off += d->d_reclen;
		}
	}
}

struct listed {
	int pids[4096];
	size_t n;
};

static int note_pid(void *ctx, int pid)
{
	struct listed *l = ctx;

	if (l->n < sizeof(l->pids) / sizeof(l->pids[0]))
		l->pids[l->n++] = pid;
	return 0;
}

static bool has(const struct listed *l, int pid)
{
	for (size_t i = 0; i < l->n; i++) {
		if (l->pids[i] == pid)
			return true;
	}
	return false;
}

int main(void)
{
	struct pl_pid_range r, bad;
	static struct listed l;
	int dirfd, kids[CHILDREN], hold[2], lo = 0, hi = 0, err;
	bool all_live = true, none_reaped = true, in_range = true, in_order = true;

	/* meson's exe wrapper (qemu-user) lists the host's /proc: the
	 * positions are the host kernel's, which is what this test is about */
	dirfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0 || pipe(hold))
		return 99;
	memset(&r, 0, sizeof(r));
	TAP_OK(!pl__pid_range_usable(&r) &&
		       pl__pid_range_list(&r, dirfd, 1, 2, note_pid, &l) == -ENOTSUP,
	       "nothing learnt: no listing");
	learn_from_scan(&r, dirfd);
	TAP_OK(pl__pid_range_usable(&r) && (r.pos_offset == 258 || r.pos_offset == 257),
	       "a scan of /proc teaches a pid's position: the pid plus %lld (%u pairs agreed)",
	       (long long)r.pos_offset, r.agreeing);

	/* children asleep on a pipe; every other one reaped at once */
	for (int i = 0; i < CHILDREN; i++) {
		char c;

		kids[i] = fork();
		if (kids[i] == 0) {
			close(hold[1]);
			_exit(read(hold[0], &c, 1) < 0);
		}
		if (kids[i] < 0)
			return 99;
		if (i % 2 == 1) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
		lo = i == 0 || kids[i] < lo ? kids[i] : lo;
		hi = kids[i] > hi ? kids[i] : hi;
	}
	err = pl__pid_range_list(&r, dirfd, (uint64_t)lo - 1, (uint64_t)hi, note_pid, &l);
	for (int i = 0; i < CHILDREN; i++) {
		if (i % 2 == 0)
			all_live &= has(&l, kids[i]);
		else
			none_reaped &= !has(&l, kids[i]);
	}
	for (size_t i = 0; i < l.n; i++) {
		in_range &= l.pids[i] >= lo && l.pids[i] <= hi;
		in_order &= i == 0 || l.pids[i] > l.pids[i - 1];
	}
	TAP_OK(err == 0, "the range of the children's pids, %d to %d, listed (%d)", lo, hi, err);
	TAP_OK(all_live, "every child alive is listed (%zu listed)", l.n);
	TAP_OK(none_reaped, "no child reaped before is");
	TAP_OK(in_range && in_order, "nothing outside the range, in pid order");

	l.n = 0;
	TAP_OK(pl__pid_range_list(&r, dirfd, (uint64_t)hi, (uint64_t)hi, note_pid, &l) == 0 &&
		       l.n == 0,
	       "an empty range lists nothing (%zu)", l.n);

	/* a position that is off: the listing starts at a live pid that is not
	 * after the range's first, which it sees, and gives up */
	bad = r;
	bad.pos_offset -= 4;
	l.n = 0;
	TAP_OK(pl__pid_range_list(&bad, dirfd, (uint64_t)kids[0], (uint64_t)hi, note_pid, &l) ==
			       -ENOTSUP && l.n == 0 && !pl__pid_range_usable(&bad),
	       "a wrong position is seen at the first entry, nothing is passed on, and it is "
	       "not used again");

	/* a scan whose entries disagree (as a kernel that numbered otherwise
	 * would give): not learnt */
	memset(&bad, 0, sizeof(bad));
	pl__pid_range_scan_start(&bad);
	pl__pid_range_learn(&bad, 10, 270);
	pl__pid_range_learn(&bad, 12, 271);
	pl__pid_range_learn(&bad, 13, 300);
	pl__pid_range_learn(&bad, 14, 301);
	TAP_OK(!pl__pid_range_usable(&bad), "entries that disagree on the position: not used");

	close(hold[1]);
	for (int i = 0; i < CHILDREN; i += 2)
		waitpid(kids[i], NULL, 0);
	close(dirfd);
	return tap_done();
}
