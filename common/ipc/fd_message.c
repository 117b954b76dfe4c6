/* See fd_message.h. */
#include "fd_message.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

ssize_t pl__recv_fd_message(int sock, void *buf, size_t len, int flags, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(sock, &mh, flags);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(fd, CMSG_DATA(cm), sizeof(int));
	return n;
}
