/* Preloaded after libperflink-preload.so, this library's constructor runs
 * before the shim's: its calls reach the shim's hooks while the shim is not
 * initialised yet. It checks their results and says so on stderr. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

__attribute__((constructor)) static void early_calls(void)
{
	int p[2], avail = -1, ok = 0, i, fd, r, e;

	if (pipe(p) < 0 || write(p[1], "abc", 3) != 3)
		return;
	for (i = 0; i < 5; i++)
		ok += ioctl(p[0], FIONREAD, &avail) == 0 && avail == 3;
	fd = open("/dev/null", O_RDONLY);
	r = ioctl(fd, FIONREAD, &avail);
	e = errno;
	fprintf(stderr, "early: FIONREAD 3 x%d, /dev/null %s, close %s\n", ok,
		r == -1 && e == ENOTTY ? "ENOTTY" : "wrong",
		close(fd) == 0 && close(p[0]) == 0 && close(p[1]) == 0 ? "ok" : "failed");
}
