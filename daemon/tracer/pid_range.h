/* The live processes among a range of pids, from one getdents64 of /proc
 * started at the first of them, instead of one lookup per pid.
 *
 * Under churn most pids handed out between two ticks are gone by the tick
 * (a shell loop's `sh -c true`): looking each up costs a failed clock read
 * (~0.35 us on the test VM, 40 us a tick at 1,100 new pids a second),
 * while /proc's directory lists only the live thread-group leaders, in pid
 * order, from any position. A position is the pid plus an offset the kernel
 * keeps to itself (the entries before the pids: 258 since Linux 3.17, 257
 * before), so it is learnt from a scan's own entries, where each entry's
 * d_off is the next one's position, and checked at every use: a listing
 * that starts at or below the range's first pid means it was wrong, and the
 * caller looks the pids up one by one again. */
#ifndef PL_DAEMON_TRACER_PID_RANGE_H
#define PL_DAEMON_TRACER_PID_RANGE_H

#include <stdbool.h>
#include <stdint.h>

/* An entry as getdents64 gives it (linux_dirent64: the C library declares
 * no such type for the raw system call). */
struct pl_dirent64 {
	uint64_t d_ino;
	int64_t d_off;         /* the next entry's position */
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* A /proc entry's pid, or -1 for a name that is none ("self", "sys"). */
int pl__pid_of_name(const char *name);

struct pl_pid_range {
	int64_t pos_offset;   /* a pid's directory position less the pid */
	unsigned agreeing;    /* consecutive entries of a scan that agree on it */
	bool wrong;           /* disagreed, or a listing showed it wrong: unused */
	int prev_pid;         /* the scan's previous entry, when a pid */
	int64_t prev_next_pos;
};

/* Learning from a scan: call at its start, then for each entry in order
 * with its pid (0 for an entry that is no pid) and its d_off. */
void pl__pid_range_scan_start(struct pl_pid_range *r);
void pl__pid_range_learn(struct pl_pid_range *r, int pid, int64_t d_off);

/* Whether positions are known: two pairs of a scan agreed, none disagreed. */
bool pl__pid_range_usable(const struct pl_pid_range *r);

/* Calls found(ctx, pid) for each live thread-group leader with a pid in
 * (from, to], in pid order, listing dirfd (an fd of the procfs root of the
 * caller's pid namespace, shared with scans: its position is moved). 0, the
 * first error found returned, or -ENOTSUP when positions are not known,
 * the listing showed them wrong (nothing was passed to found then) or a
 * read of the directory failed (found may have had some of the range). */
int pl__pid_range_list(struct pl_pid_range *r, int dirfd, uint64_t from, uint64_t to,
		       int (*found)(void *ctx, int pid), void *ctx);

#endif
