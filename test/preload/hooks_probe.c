/* Calls every function the shim interposes, on real files, pipes, memfds
 * and (when the kernel gives one) a dma-buf, and prints what each returned:
 * the result, errno, and what the call did (data read back, modes, flags).
 * The tests run it without the shim, with the shim dormant and with the
 * stage profiler active, and require the three outputs to be identical.
 *
 * Only fd numbers the program chooses itself are printed: others may
 * differ between runs without anything being wrong.
 *
 * Usage: hooks_probe DIR [frames N]
 *   DIR: an empty directory to create files in; frames: N more FIONREADs on
 *   a pipe at the end, so that an active profiler has frames to report. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>

/* musl declares ioctl(int, int, ...): a request above INT_MAX is passed as
 * the int it becomes there (as in real_ioctls.h) */
#ifdef __GLIBC__
#define REQ(r) (r)
#else
#define REQ(r) ((int)(r))
#endif

#ifdef __GLIBC__
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
#endif

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1u << 2)
#endif

static const char *dir;

/* Symbolic names for the errnos these calls give (strerrorname_np is
 * glibc 2.32+ only). */
static const char *errname(int e)
{
	static char other[16];

	switch (e) {
	case ENOENT: return "ENOENT";
	case EBADF: return "EBADF";
	case EINVAL: return "EINVAL";
	case ENOTTY: return "ENOTTY";
	case EAGAIN: return "EAGAIN";
	case EISDIR: return "EISDIR";
	case ENOTDIR: return "ENOTDIR";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EEXIST: return "EEXIST";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOSYS: return "ENOSYS";
	default:
		snprintf(other, sizeof(other), "E%d", e);
		return other;
	}
}
static char path_buf[4096];

static const char *path(const char *name)
{
	snprintf(path_buf, sizeof(path_buf), "%s/%s", dir, name);
	return path_buf;
}

/* "what: ret errno" with the symbolic errno; fds shown as "fd". */
static void show(const char *what, long ret, int err, int is_fd)
{
	if (ret < 0)
		printf("%s: -1 %s\n", what, errname(err));
	else if (is_fd)
		printf("%s: fd\n", what);
	else
		printf("%s: %ld\n", what, ret);
}

#define CALL(what, expr, is_fd)                   \
	__extension__({                           \
		long r_;                          \
		errno = 0;                        \
		r_ = (long)(expr);                \
		show(what, r_, errno, is_fd);     \
		r_;                               \
	})

static void show_file(const char *what, int fd)
{
	char buf[64];
	ssize_t n;
	struct stat st;

	if (fd < 0)
		return;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	if (fstat(fd, &st) == 0)
		printf("  %s: mode %04o, %zd bytes '%s'\n", what, (unsigned)(st.st_mode & 07777), n,
		       buf);
}

static void show_cloexec(const char *what, int fd)
{
	int flags = fcntl(fd, F_GETFD);

	if (flags < 0)
		printf("  %s: not open (%s)\n", what, errname(errno));
	else
		printf("  %s: open, cloexec %d\n", what, !!(flags & FD_CLOEXEC));
}

/* errno must survive a successful call, as libc leaves it. */
static void errno_kept(const char *what, int ok)
{
	printf("  %s keeps errno: %s (errno %d)\n", what, ok ? "yes" : "no", errno);
}

static void probe_open(void)
{
	int fd, dfd;

	CALL("open missing", open(path("missing"), O_RDONLY), 1);
	fd = (int)CALL("open O_CREAT 0640", open(path("a"), O_CREAT | O_WRONLY, 0640), 1);
	if (fd >= 0) {
		printf("  write: %zd\n", write(fd, "hello", 5));
		show_file("a", fd);
		CALL("close", close(fd), 0);
		CALL("close again", close(fd), 0);
	}
	fd = (int)CALL("open64", open64(path("a"), O_RDONLY), 1);
	show_file("a via open64", fd);
	close(fd);
	fd = (int)CALL("openat AT_FDCWD", openat(AT_FDCWD, path("a"), O_RDONLY), 1);
	show_file("a via openat", fd);
	close(fd);
	dfd = (int)CALL("open dir", open(dir, O_RDONLY | O_DIRECTORY), 1);
	fd = (int)CALL("openat dirfd", openat(dfd, "a", O_RDONLY), 1);
	show_file("a via openat dirfd", fd);
	close(fd);
	fd = (int)CALL("openat64 dirfd O_CREAT", openat64(dfd, "b", O_CREAT | O_RDWR, 0600), 1);
	show_file("b", fd);
	close(fd);
	CALL("openat dirfd missing", openat(dfd, "missing", O_RDONLY), 1);
	CALL("openat bad dirfd", openat(-5, "a", O_RDONLY), 1);
#ifdef __GLIBC__
	fd = (int)CALL("__open_2", __open_2(path("a"), O_RDONLY), 1);
	close(fd);
	fd = (int)CALL("__open64_2", __open64_2(path("a"), O_RDONLY), 1);
	close(fd);
	fd = (int)CALL("__openat_2", __openat_2(dfd, "a", O_RDONLY), 1);
	close(fd);
	fd = (int)CALL("__openat64_2", __openat64_2(dfd, "a", O_RDONLY), 1);
	close(fd);
	CALL("__open_2 missing", __open_2(path("missing"), O_RDONLY), 1);
#endif
	fd = (int)CALL("creat 0600", creat(path("c"), 0600), 1);
	show_file("c", fd);
	close(fd);
	fd = (int)CALL("creat64 0644", creat64(path("d"), 0644), 1);
	show_file("d", fd);
	close(fd);
	fd = (int)CALL("open O_TMPFILE", open(dir, O_TMPFILE | O_RDWR, 0600), 1);
	if (fd >= 0)
		close(fd);
	close(dfd);

	errno = 4242;
	fd = open(path("a"), O_RDONLY);
	errno_kept("open", errno == 4242);
	errno = 4242;
	errno_kept("close", close(fd) == 0 && errno == 4242);
}

static void probe_dup(void)
{
	int fd = open(path("a"), O_RDONLY), d;
	char c;

	d = (int)CALL("dup", dup(fd), 1);
	printf("  read via dup: %zd\n", read(d, &c, 1));
	printf("  offset via the original: %ld\n", (long)lseek(fd, 0, SEEK_CUR));
	close(d);
	CALL("dup bad", dup(-1), 1);
	CALL("dup2 to 100", dup2(fd, 100), 0);
	show_cloexec("100", 100);
	CALL("dup2 to itself", dup2(100, 100), 0);
	CALL("dup2 bad", dup2(-1, 101), 0);
	CALL("dup2 to -1", dup2(fd, -1), 0);
	CALL("dup3 to 101 O_CLOEXEC", dup3(fd, 101, O_CLOEXEC), 0);
	show_cloexec("101", 101);
	CALL("dup3 to itself", dup3(101, 101, 0), 0);
	CALL("dup3 bad flags", dup3(fd, 102, 12345), 0);
	errno = 4242;
	d = dup(fd);
	errno_kept("dup", d >= 0 && errno == 4242);
	close(d);
#ifdef PL_HAVE_CLOSE_RANGE
	CALL("close_range cloexec 100..101", close_range(100, 101, CLOSE_RANGE_CLOEXEC), 0);
	show_cloexec("100", 100);
	CALL("close_range 100..101", close_range(100, 101, 0), 0);
	show_cloexec("100", 100);
	show_cloexec("101", 101);
	CALL("close_range bad", close_range(5, 4, 0), 0);
#else
	close(100);
	close(101);
#endif
#ifdef PL_HAVE_CLOSEFROM
	dup2(fd, 200);
	dup2(fd, 201);
	closefrom(200);
	printf("closefrom 200\n");
	show_cloexec("200", 200);
	show_cloexec("201", 201);
#endif
	close(fd);
}

static void probe_ioctl(void)
{
	int p[2], avail = -1, fd, on = 1;
	struct termios t;
	char buf[8];

	if (pipe(p) < 0)
		return;
	printf("  write: %zd\n", write(p[1], "abc", 3));
	CALL("ioctl FIONREAD pipe", ioctl(p[0], FIONREAD, &avail), 0);
	printf("  bytes: %d\n", avail);
	errno = 4242;
	errno_kept("ioctl", ioctl(p[0], FIONREAD, &avail) == 0 && errno == 4242);
	CALL("ioctl TCGETS pipe", ioctl(p[0], TCGETS, &t), 0);
	CALL("ioctl FIONREAD bad fd", ioctl(-1, FIONREAD, &avail), 0);
	CALL("ioctl unknown request on pipe", ioctl(p[0], _IOR('q', 200, int), &avail), 0);
	CALL("ioctl FIONBIO pipe", ioctl(p[0], FIONBIO, &on), 0);
	printf("  read: %zd\n", read(p[0], buf, sizeof(buf)));
	CALL("read empty nonblocking pipe", read(p[0], buf, sizeof(buf)), 0);
	close(p[0]);
	close(p[1]);

	fd = (int)CALL("open /dev/null", open("/dev/null", O_RDWR), 1);
	CALL("ioctl FIONREAD /dev/null", ioctl(fd, FIONREAD, &avail), 0);
	CALL("ioctl TCGETS /dev/null", ioctl(fd, TCGETS, &t), 0);
	close(fd);

	fd = (int)CALL("memfd_create", memfd_create("probe", MFD_CLOEXEC), 1);
	if (fd >= 0) {
		printf("  write: %zd\n", write(fd, "xyz", 3));
		CALL("ioctl FIONREAD memfd", ioctl(fd, FIONREAD, &avail), 0);
		close(fd);
	}
}

/* The waits, on a pipe that a stage file may name as a device: once its
 * FIONREAD has succeeded, an active shim times waits on it (waits.h). The
 * last line says how many waits had the pipe in their set, for the tests
 * to compare with the stage's count. Every wait has a zero timeout. */
static void probe_waits(void)
{
	struct timespec zero_ts = { 0, 0 };
	struct epoll_event ev, got;
	struct timeval zero_tv;
	int p[2], avail, ep, on_device = 0;
	struct pollfd pf;
	sigset_t none;
	fd_set set;

	if (pipe(p) < 0)
		return;
	sigemptyset(&none);
	CALL("ioctl FIONREAD wait pipe", ioctl(p[0], FIONREAD, &avail), 0);
	pf.fd = p[0];
	pf.events = POLLIN;
	pf.revents = 0;
	CALL("poll empty pipe", poll(&pf, 1, 0), 0);
	printf("  revents: %d\n", pf.revents);
	on_device++;
	printf("  write: %zd\n", write(p[1], "w", 1));
	errno = 4242;
	errno_kept("poll", poll(&pf, 1, 0) == 1 && errno == 4242);
	on_device++;
	CALL("poll readable pipe", poll(&pf, 1, 0), 0);
	printf("  revents: %d\n", pf.revents);
	on_device++;
	CALL("ppoll readable pipe", ppoll(&pf, 1, &zero_ts, &none), 0);
	on_device++;
#ifdef __GLIBC__
	CALL("__poll_chk readable pipe", __poll_chk(&pf, 1, 0, sizeof(pf)), 0);
	on_device++;
#endif
	FD_ZERO(&set);
	FD_SET(p[0], &set);
	zero_tv.tv_sec = 0;
	zero_tv.tv_usec = 0;
	CALL("select readable pipe", select(p[0] + 1, &set, NULL, NULL, &zero_tv), 0);
	printf("  set: %d\n", FD_ISSET(p[0], &set) ? 1 : 0);
	on_device++;
	CALL("pselect readable pipe", pselect(p[0] + 1, &set, NULL, NULL, &zero_ts, &none), 0);
	on_device++;
	zero_tv.tv_sec = 0;
	zero_tv.tv_usec = 0;
	CALL("select bad nfds", select(-1, NULL, NULL, NULL, &zero_tv), 0);

	ep = (int)CALL("epoll_create1", epoll_create1(EPOLL_CLOEXEC), 1);
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u32 = 7;
	CALL("epoll_ctl ADD pipe", epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), 0);
	CALL("epoll_ctl ADD pipe again", epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), 0);
	memset(&got, 0, sizeof(got));
	CALL("epoll_wait readable pipe", epoll_wait(ep, &got, 1, 0), 0);
	printf("  data: %u\n", got.data.u32);
	on_device++;
	CALL("epoll_pwait readable pipe", epoll_pwait(ep, &got, 1, 0, &none), 0);
	on_device++;
#ifdef PL_HAVE_EPOLL_PWAIT2
	/* ENOSYS on kernels before 5.11: a call all the same */
	CALL("epoll_pwait2 readable pipe", epoll_pwait2(ep, &got, 1, &zero_ts, &none), 0);
	on_device++;
#endif
	CALL("epoll_ctl DEL pipe", epoll_ctl(ep, EPOLL_CTL_DEL, p[0], NULL), 0);
	CALL("epoll_wait after DEL", epoll_wait(ep, &got, 1, 0), 0);
	CALL("epoll_wait bad fd", epoll_wait(-1, &got, 1, 0), 0);
	close(ep);
	close(p[0]);
	close(p[1]);
	printf("waits on the device: %d\n", on_device);
}

/* A dma-buf from udmabuf (a memfd made into a dma-buf) or a dma-heap. */
static int make_dmabuf(void)
{
	long page = sysconf(_SC_PAGESIZE);
	int dev, mfd, buf = -1;

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev >= 0) {
		struct udmabuf_create create;

		mfd = memfd_create("probe-dmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
		if (mfd >= 0 && ftruncate(mfd, 4 * page) == 0 &&
		    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK) == 0) {
			memset(&create, 0, sizeof(create));
			create.memfd = (unsigned)mfd;
			create.size = (unsigned long long)(4 * page);
			buf = ioctl(dev, UDMABUF_CREATE, &create);
		}
		if (mfd >= 0)
			close(mfd);
		close(dev);
		if (buf >= 0)
			return buf;
	}
	dev = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	if (dev >= 0) {
		struct dma_heap_allocation_data alloc;

		memset(&alloc, 0, sizeof(alloc));
		alloc.len = (unsigned long long)(4 * page);
		alloc.fd_flags = O_RDWR | O_CLOEXEC;
		if (ioctl(dev, REQ(DMA_HEAP_IOCTL_ALLOC), &alloc) == 0)
			buf = (int)alloc.fd;
		close(dev);
	}
	return buf;
}

static void probe_dmabuf(void)
{
	struct dma_buf_sync sync;
	int buf = make_dmabuf();

	if (buf < 0) {
		printf("dmabuf: unavailable\n");
		return;
	}
	printf("dmabuf: available\n");
	memset(&sync, 0, sizeof(sync));
	sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW;
	CALL("DMA_BUF_IOCTL_SYNC start", ioctl(buf, DMA_BUF_IOCTL_SYNC, &sync), 0);
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
	CALL("DMA_BUF_IOCTL_SYNC end", ioctl(buf, DMA_BUF_IOCTL_SYNC, &sync), 0);
	sync.flags = 0xdead;
	CALL("DMA_BUF_IOCTL_SYNC bad flags", ioctl(buf, DMA_BUF_IOCTL_SYNC, &sync), 0);
	close(buf);
}

static void frames(int n)
{
	int p[2], avail, ok = 0, i;

	if (pipe(p) < 0 || write(p[1], "abc", 3) != 3)
		return;
	for (i = 0; i < n; i++)
		ok += ioctl(p[0], FIONREAD, &avail) == 0 && avail == 3;
	printf("frames: %d of %d\n", ok, n);
	close(p[0]);
	close(p[1]);
}

int main(int argc, char **argv)
{
	if (argc != 2 && !(argc == 4 && strcmp(argv[2], "frames") == 0)) {
		fprintf(stderr, "usage: hooks_probe DIR [frames N]\n");
		return 2;
	}
	dir = argv[1];
	umask(022);
	setvbuf(stdout, NULL, _IOLBF, 0);
	probe_open();
	probe_dup();
	probe_ioctl();
	probe_dmabuf();
	probe_waits();
	if (argc == 4)
		frames(atoi(argv[3]));
	return 0;
}
