/* Which device each file descriptor is, as far as the stage rules care:
 * one 32-bit word per fd in a fixed table indexed by fd, updated with
 * atomic operations by the open/close/dup hooks, never allocated.
 *
 * A word holds the set of device patterns (stages.h) the fd's path matches
 * and a CLASSIFIED bit. An fd the hooks did not see open (inherited across
 * exec, opened by fopen inside libc, opened before the shim was active, or
 * through a symlink no pattern names) is classified on its first ioctl
 * whose request some pattern-bound rule names, from /proc/self/fd: one
 * readlink per fd, ever. fds at or above PL_FD_MAX are classified on every
 * such call instead.
 *
 * Closes the hooks cannot see (inside fclose, or a raw syscall) leave a
 * word behind; a later fd with that number that is opened without the open
 * hooks (socket, pipe) inherits it until it is closed. Only rules with a
 * device pattern are affected, and only for request codes that fd is
 * actually sent.
 *
 * All functions are async-signal-safe and leave errno alone. */
#ifndef PL_PRELOAD_FDTAB_H
#define PL_PRELOAD_FDTAB_H

#include <stdbool.h>
#include <stdint.h>

#define PL_FD_MAX 8192
#define PL_FD_CLASSIFIED (1u << 31)
#define PL_FD_COMPRESSED (1u << 30) /* V4L2 capture queue carries a bitstream */
#define PL_FD_PATTERNS ((1u << 28) - 1)

/* The open hooks: fd was just opened as path (NULL when unknown). */
void pl__fd_opened(int fd, const char *path);
/* Before close: the number is about to be free. */
void pl__fd_closed(int fd);
void pl__fd_closed_range(unsigned int first, unsigned int last);
/* After dup/dup2/dup3: to refers to what from refers to. */
void pl__fd_copied(int from, int to);

/* The patterns fd's device matches (classifying it first if needed). */
uint32_t pl__fd_patterns(int fd);

void pl__fd_set_flag(int fd, uint32_t flag, bool on);
bool pl__fd_has_flag(int fd, uint32_t flag);

/* Which wait stage (stages.h: 1 + its index, 0 none) a thread waiting on
 * fd in poll, select or epoll is waiting for. An fd learns it from its
 * first successful call of a dequeue or wait stage that has a companion
 * (a frame-boundary stage's companion wins over another's), so the wait
 * before a device's first dequeue is not timed; the copies of the fd made
 * with dup, dup2 or dup3 (the same open file) learn it with it, and it
 * with them. An epoll fd has the wait
 * stage of the staged fds registered with it: epoll_ctl tells which (one
 * epoll set per fd is remembered, the last it was added to; a set closed
 * while its members stay open leaves them pointing at its number).
 * Updated with relaxed atomics: two threads changing the same entries at
 * once may leave an epoll set's count off by one, which costs a wait timed
 * or not, never a wrong result to the target. */
void pl__fd_learn_wait(int fd, unsigned wait_stage, bool boundary);
unsigned pl__fd_wait_stage(int fd);
/* Whether any fd has learnt a wait stage yet: until one has, no wait is
 * looked at. */
bool pl__fd_waits_known(void);
/* After a successful EPOLL_CTL_ADD or EPOLL_CTL_DEL of fd to/from epfd. */
void pl__fd_epoll_added(int epfd, int fd);
void pl__fd_epoll_removed(int epfd, int fd);

#endif
