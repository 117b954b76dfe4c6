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

#endif
