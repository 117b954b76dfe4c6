/* READY=1 and STOPPING=1 reach a real socket at a path and in the abstract
 * namespace, as systemd sets $NOTIFY_SOCKET; bad addresses are errors, an
 * unset variable is not. */
#include "notify.h"
#include "tap.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h> /* struct timeval: glibc brings it with sys/socket.h, musl does not */
#include <sys/un.h>
#include <unistd.h>

/* Bind a datagram socket at name ('@' for abstract). */
static int listener(const char *name)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", name);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name) + 1);
	if (name[0] == '@') {
		sun.sun_path[0] = '\0';
		len--;
	}
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, len) < 0)
		return -1;
	return fd;
}

static const char *receive(int fd)
{
	static char buf[256];
	struct timeval tv = { 1, 0 };
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

int main(void)
{
	char dir[] = "/tmp/pl-test-notify-XXXXXX";
	char path[128], abstract[64], longname[200];
	int fd, afd;

	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/notify", dir);
	snprintf(abstract, sizeof(abstract), "@pl-test-notify-%ld", (long)getpid());

	fd = listener(path);
	TAP_OK(fd >= 0, "listening at %s", path);
	TAP_OK(pl__notify_send(path, "READY=1") == 0, "sent to a path");
	TAP_EQ_STR(receive(fd), "READY=1", "READY=1 arrived");

	setenv("NOTIFY_SOCKET", path, 1);
	TAP_EQ_U64(pl__notify("STOPPING=1"), 1, "pl__notify reads $NOTIFY_SOCKET and says sent");
	TAP_EQ_STR(receive(fd), "STOPPING=1", "STOPPING=1 arrived");

	afd = listener(abstract);
	TAP_OK(afd >= 0, "listening at %s", abstract);
	setenv("NOTIFY_SOCKET", abstract, 1);
	TAP_EQ_U64(pl__notify("READY=1"), 1, "sent to an abstract socket");
	TAP_EQ_STR(receive(afd), "READY=1", "it arrived there");

	unsetenv("NOTIFY_SOCKET");
	TAP_EQ_U64(pl__notify("READY=1"), 0, "unset: nothing to do, no error");
	setenv("NOTIFY_SOCKET", "", 1);
	TAP_EQ_U64(pl__notify("READY=1"), 0, "empty: nothing to do");

	TAP_OK(pl__notify_send("relative/path", "READY=1") == -EAFNOSUPPORT,
	       "a relative path is refused");
	TAP_OK(pl__notify_send("vsock:2:1234", "READY=1") == -EAFNOSUPPORT, "vsock is refused");
	memset(longname, 'x', sizeof(longname) - 1);
	longname[0] = '/';
	longname[sizeof(longname) - 1] = '\0';
	TAP_OK(pl__notify_send(longname, "READY=1") == -ENAMETOOLONG, "too long a path");
	TAP_OK(pl__notify_send("@", "READY=1") == -EINVAL, "an empty abstract name");
	snprintf(longname, sizeof(longname), "%s/nobody", dir);
	TAP_OK(pl__notify_send(longname, "READY=1") == -ENOENT, "nobody there: -ENOENT");

	{
		int i, ret = 0;

		/* A receiver that never reads: the queue fills, and then the
		 * sender must get -EAGAIN instead of blocking the daemon. */
		for (i = 0; i < 100000 && ret == 0; i++)
			ret = pl__notify_send(path, "STATUS=filling");
		TAP_OK(ret == -EAGAIN, "a full receiver gives -EAGAIN after %d datagrams", i);
	}

	close(fd);
	close(afd);
	unlink(path);
	rmdir(dir);
	return tap_done();
}
