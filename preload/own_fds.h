/* The descriptors the preload library holds in its target (the connection
 * to perflinkd). Daemons and sandboxes close every descriptor they did not
 * open (close_range, closefrom, a close loop) and then take the numbers
 * back; if the shim's were among them, the shim would then send into, or
 * close, one of the target's. So the close hooks leave these alone: close
 * of one says EBADF, as for a number not open, and close_range and
 * closefrom close everything around them. dup2 or dup3 onto one is the
 * target's to do: the number is then forgotten here, and the shim finds
 * its connection gone (pl__producer_still_ours).
 *
 * Lock-free and async-signal-safe: the hooks run in any thread. */
#ifndef PL_PRELOAD_OWN_FDS_H
#define PL_PRELOAD_OWN_FDS_H

#include <stdbool.h>

/* fd is the shim's from now on (mine), or no longer (before it closes it). */
void pl__own_fd_watch(int fd, bool mine);
bool pl__own_fd(int fd);
/* Whether any own fd lies in [first, last]: the one branch the close hooks
 * take when there is nothing to protect. */
bool pl__own_fd_in(unsigned int first, unsigned int last);
/* close_range around the own fds: calls real on each stretch between them
 * (CLOSE_RANGE_UNSHARE on the first only; the table is then the target's
 * own). The first failure, or 0. */
int pl__own_fds_close_range(unsigned int first, unsigned int last, int flags,
			    int (*real)(unsigned int, unsigned int, int));

#endif
