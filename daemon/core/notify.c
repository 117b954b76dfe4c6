/* See notify.h. */
#include "notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int make_address(const char *address, struct sockaddr_un *sun, socklen_t *len)
{
	size_t n = strlen(address);

	if (address[0] != '/' && address[0] != '@')
		return address[0] == '\0' ? -EINVAL : -EAFNOSUPPORT;
	/* A path needs its terminating NUL inside sun_path; an abstract name
	 * is counted by the length and needs none. */
	if (n >= sizeof(sun->sun_path) + (address[0] == '@'))
		return -ENAMETOOLONG;
	if (n < 2)
		return -EINVAL;
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, address, n);
	if (address[0] == '@') {
		sun->sun_path[0] = '\0';
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	} else {
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	}
	return 0;
}

int pl__notify_send(const char *address, const char *state)
{
	struct sockaddr_un sun;
	socklen_t len;
	ssize_t n;
	int fd, ret;

	ret = make_address(address, &sun, &len);
	if (ret < 0)
		return ret;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	do
		n = sendto(fd, state, strlen(state), MSG_NOSIGNAL | MSG_DONTWAIT,
			   (const struct sockaddr *)&sun, len);
	while (n < 0 && errno == EINTR);
	ret = n < 0 ? -errno : (size_t)n == strlen(state) ? 0 : -EMSGSIZE;
	close(fd);
	return ret;
}

int pl__notify(const char *state)
{
	const char *address = getenv("NOTIFY_SOCKET");
	int ret;

	if (!address || !*address)
		return 0;
	ret = pl__notify_send(address, state);
	return ret < 0 ? ret : 1;
}
