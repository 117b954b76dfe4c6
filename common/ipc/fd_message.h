/* A message on a unix socket with at most one descriptor attached
 * (SCM_RIGHTS): how perflinkd's welcome carries the producer's memory.
 * More descriptors than one do not fit the control buffer, so the kernel
 * installs none of them past the first: a hostile sender cannot fill the
 * receiver's descriptor table. */
#ifndef PL_COMMON_IPC_FD_MESSAGE_H
#define PL_COMMON_IPC_FD_MESSAGE_H

#include <stddef.h>
#include <sys/types.h>

/* Receive one message of up to len bytes into buf (recvmsg flags, e.g.
 * MSG_CMSG_CLOEXEC); *fd is the descriptor that came with it, or -1. The
 * message's length, or -errno; EINTR is retried here. */
ssize_t pl__recv_fd_message(int sock, void *buf, size_t len, int flags, int *fd);

#endif
