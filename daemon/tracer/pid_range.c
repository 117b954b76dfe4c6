/* The live processes among a range of pids (pid_range.h). */
#include "pid_range.h"

#include <errno.h>
#include <limits.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel makes a dentry and an inode for every entry it lists, even the
 * one that no longer fits (5-10 us each for a new process on the test VM,
 * where a read costs 0.5): so the first read has room for one entry (a
 * 7-digit pid's takes 32 bytes) and each further read twice as much, up to
 * 16. The few pids of a tick that live take a read or two, and past the
 * range at most one read's entries are made for nothing, however many
 * processes live above it (pids wrapped). */
#define LIST_FIRST_BYTES 32
#define LIST_MAX_BYTES 512
#define AGREEING_NEEDED 2

void pl__pid_range_scan_start(struct pl_pid_range *r)
{
	r->prev_pid = 0;
}

void pl__pid_range_learn(struct pl_pid_range *r, int pid, int64_t d_off)
{
	if (r->wrong)
		return;
	if (pid > 0 && r->prev_pid > 0) {
		int64_t offset = r->prev_next_pos - pid;

		if (r->agreeing == 0 || offset == r->pos_offset) {
			r->pos_offset = offset;
			r->agreeing++;
		} else {
			r->wrong = true;
		}
	}
	r->prev_pid = pid;
	r->prev_next_pos = d_off;
}

bool pl__pid_range_usable(const struct pl_pid_range *r)
{
	return !r->wrong && r->agreeing >= AGREEING_NEEDED && r->pos_offset > 0;
}

int pl__pid_of_name(const char *name)
{
	long v = 0;

	if (*name < '1' || *name > '9')
		return -1;
	for (; *name; name++) {
		if (*name < '0' || *name > '9' || v > INT_MAX / 10)
			return -1;
		v = v * 10 + (*name - '0');
	}
	return v > INT_MAX ? -1 : (int)v;
}

int pl__pid_range_list(struct pl_pid_range *r, int dirfd, uint64_t from, uint64_t to,
		       int (*found)(void *ctx, int pid), void *ctx)
{
	_Alignas(8) char buf[LIST_MAX_BYTES];
	size_t want = LIST_FIRST_BYTES;
	int64_t pos;
	bool first = true;

	if (!pl__pid_range_usable(r) || from >= INT_MAX)
		return -ENOTSUP;
	pos = r->pos_offset + (int64_t)from + 1;
	if (lseek(dirfd, pos, SEEK_SET) != pos)
		return -ENOTSUP;
	for (;;) {
		long n;

		do
			n = syscall(SYS_getdents64, dirfd, buf, want);
		while (n < 0 && errno == EINTR);
		want = want * 2 < sizeof(buf) ? want * 2 : sizeof(buf);
		if (n < 0)
			return -ENOTSUP; /* the pids are looked up instead: the tick goes on */
		if (n == 0)
			return 0;
		for (size_t off = 0; off + sizeof(struct pl_dirent64) <= (size_t)n;) {
			const struct pl_dirent64 *d = (const void *)(buf + off);
			int pid, err;

			if (d->d_reclen == 0)
				return -EIO;
			off += d->d_reclen;
			pid = pl__pid_of_name(d->d_name);
			if (first && (pid <= 0 || (uint64_t)pid <= from)) {
				/* not where a pid after from would be */
				r->wrong = true;
				return -ENOTSUP;
			}
			first = false;
			if (pid <= 0)
				continue;
			if ((uint64_t)pid > to)
				return 0;
			if ((err = found(ctx, pid)) < 0)
				return err;
		}
	}
}
