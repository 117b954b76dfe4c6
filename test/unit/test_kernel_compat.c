/* The probe registry (common/probe.h) and the fallbacks in
 * common/kernel_compat.h on this machine's kernel: each fallback forced
 * through PERFLINK_PROBE_FAIL must give a descriptor that works the same way
 * (shared pages between two mappings; a non-blocking, close-on-exec counter)
 * and must be reported once, on stderr, with the probe's name. */
#include "kernel_compat.h"
#include "log.h"
#include "probe.h"
#include "stderr_capture.h"
#include "probe_force.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Two mappings of fd see each other's writes: what a ring needs. */
static int shares_pages(int fd, size_t size)
{
	unsigned char *a, *b;
	int ok;

	a = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	b = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (a == MAP_FAILED || b == MAP_FAILED)
		return 0;
	a[size - 1] = 0x5a;
	b[0] = 0xa5;
	ok = b[size - 1] == 0x5a && a[0] == 0xa5;
	munmap(a, size);
	munmap(b, size);
	return ok;
}

static int fd_link_has(int fd, const char *what)
{
	char p[64], target[512];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	n = readlink(p, target, sizeof(target) - 1);
	if (n < 0)
		return 0;
	target[n] = '\0';
	return strstr(target, what) != NULL;
}

static void test_shm(void)
{
	const size_t size = 3 * 4096 + 100;
	struct stat st;
	struct stderr_capture cap;
	int fd, fd2;
	const char *out;

	probe_force(NULL);
	fd = pl__shm_fd_create("ring", size);
	TAP_OK(fd >= 0, "shm fd with the kernel's memfd (%d)", fd);
	if (fd >= 0) {
		TAP_OK(fstat(fd, &st) == 0 && (size_t)st.st_size == size, "sized to %zu bytes",
		       size);
		TAP_OK(shares_pages(fd, size), "two mappings share pages");
		TAP_OK(fcntl(fd, F_GETFD) & FD_CLOEXEC, "close-on-exec");
		if (pl__probe_state(PL_PROBE_MEMFD) == PL_PROBE_PRESENT)
			TAP_OK(fd_link_has(fd, "memfd:ring"), "it is a memfd named ring");
		else
			TAP_SKIP("this kernel has no memfd_create");
		close(fd);
	}

	probe_force("memfd");
	capture_begin(&cap);
	fd = pl__shm_fd_create("ring/../x", size);
	fd2 = pl__shm_fd_create("ring", 4096);
	out = capture_end(&cap);
	TAP_OK(fd >= 0 && fd2 >= 0, "forced absent: still a descriptor (%d, %d)", fd, fd2);
	if (fd >= 0) {
		TAP_OK(fstat(fd, &st) == 0 && (size_t)st.st_size == size && st.st_nlink == 0,
		       "an unlinked file of %zu bytes", size);
		TAP_OK(shares_pages(fd, size), "whose mappings share pages");
		TAP_OK(fcntl(fd, F_GETFD) & FD_CLOEXEC, "close-on-exec");
		TAP_OK(!fd_link_has(fd, "memfd:") && fd_link_has(fd, "perflink-ring____x-"),
		       "not a memfd; the label is made safe for a file name");
		close(fd);
	}
	if (fd2 >= 0)
		close(fd2);
	TAP_EQ_U64(count_of(out, "memfd: memfd_create unavailable"), 1,
		   "reported once for two fallbacks");
	TAP_OK(strstr(out, "forced by PERFLINK_PROBE_FAIL") != NULL, "says it was forced");
	TAP_OK(pl__probe_state(PL_PROBE_MEMFD) == PL_PROBE_ABSENT, "registry: memfd absent");
	TAP_OK(strstr(pl__probe_message(PL_PROBE_MEMFD), "is an unlinked file in /") != NULL,
	       "registry keeps the message: %s", pl__probe_message(PL_PROBE_MEMFD));

	/* No tmpfs: $TMPDIR serves when /dev/shm is missing or full; here
	 * only checked to be used when /dev/shm fails, so point TMPDIR at a
	 * folder that does not exist and see /dev/shm or /tmp take over. */
	probe_force("memfd");
	setenv("TMPDIR", "/nonexistent-perflink-dir", 1);
	capture_begin(&cap);
	fd = pl__shm_fd_create("t", 4096);
	out = capture_end(&cap);
	unsetenv("TMPDIR");
	TAP_OK(fd >= 0, "a missing $TMPDIR is passed over");
	if (fd >= 0)
		close(fd);

	/* Only where size_t can exceed off_t: on 32-bit, SIZE_MAX is a 4 GiB
	 * sparse file that tmpfs allows. */
	if ((uintmax_t)SIZE_MAX > (uintmax_t)INT64_MAX) {
		errno = 1234;
		probe_force(NULL);
		fd = pl__shm_fd_create("big", SIZE_MAX);
		TAP_OK(fd == -EFBIG, "a size past off_t is -EFBIG (%d)", fd);
		TAP_EQ_U64(errno, 1234, "errno left alone");
		if (fd >= 0)
			close(fd);
	} else {
		TAP_SKIP("size_t fits off_t here");
		TAP_SKIP("size_t fits off_t here");
	}
}

static void test_eventfd(void)
{
	uint64_t v = 0;
	struct stderr_capture cap;
	int fd, fd2;
	const char *out;

	for (int forced = 0; forced < 2; forced++) {
		probe_force(forced ? "eventfd_flags" : NULL);
		capture_begin(&cap);
		fd = pl__eventfd_create(3);
		fd2 = pl__eventfd_create(0);
		out = capture_end(&cap);
		TAP_OK(fd >= 0 && fd2 >= 0, "%s: eventfd created", forced ? "forced" : "native");
		if (fd < 0 || fd2 < 0)
			continue;
		TAP_OK(fcntl(fd, F_GETFL) & O_NONBLOCK, "non-blocking");
		TAP_OK(fcntl(fd, F_GETFD) & FD_CLOEXEC, "close-on-exec");
		TAP_OK(read(fd, &v, sizeof(v)) == sizeof(v) && v == 3, "initial value 3 kept");
		TAP_OK(read(fd2, &v, sizeof(v)) < 0 && errno == EAGAIN,
		       "reading an empty one does not block");
		if (forced) {
			TAP_EQ_U64(count_of(out, "eventfd_flags: eventfd refuses"), 1,
				   "reported once for two");
			TAP_OK(pl__probe_state(PL_PROBE_EVENTFD_FLAGS) == PL_PROBE_ABSENT,
			       "registry: eventfd_flags absent");
		} else {
			TAP_OK(out[0] == '\0', "nothing reported when the kernel has it");
			TAP_OK(pl__probe_state(PL_PROBE_EVENTFD_FLAGS) == PL_PROBE_PRESENT,
			       "registry: eventfd_flags present");
		}
		close(fd);
		close(fd2);
	}
}

static void test_registry(void)
{
	struct stderr_capture cap;
	const char *out;

	probe_force(" psi ,bogus,, delayacct,ffs_aio,smaps_rollup ");
	capture_begin(&cap);
	TAP_OK(pl__probe_forced(PL_PROBE_PSI) && pl__probe_forced(PL_PROBE_DELAYACCT) &&
		       pl__probe_forced(PL_PROBE_FFS_AIO) && pl__probe_forced(PL_PROBE_SMAPS_ROLLUP),
	       "names with blanks around them are forced");
	TAP_OK(!pl__probe_forced(PL_PROBE_MEMFD) && !pl__probe_forced(PL_PROBE_EVENTFD_FLAGS),
	       "the others are not");
	out = capture_end(&cap);
	TAP_EQ_U64(count_of(out, "unknown probe 'bogus'"), 1, "an unknown name warned once");
	TAP_OK(!pl__probe_forced((enum pl_probe)PL_PROBE_COUNT), "out of range is not forced");
	TAP_EQ_STR(pl__probe_name((enum pl_probe)99), "?", "out of range has no name");

	probe_force("");
	TAP_OK(pl__probe_state(PL_PROBE_PSI) == PL_PROBE_UNKNOWN, "unknown before any probe");
	capture_begin(&cap);
	TAP_OK(pl__probe_absent(PL_PROBE_PSI, true, "gone %d", 1), "first report logs");
	TAP_OK(!pl__probe_absent(PL_PROBE_PSI, false, "gone %d", 2), "second does not");
	pl__probe_present(PL_PROBE_PSI);
	out = capture_end(&cap);
	TAP_OK(strstr(out, "warning: psi: gone 1\n") != NULL && !strstr(out, "gone 2"),
	       "one warning line");
	capture_diag(out);
	TAP_OK(pl__probe_state(PL_PROBE_PSI) == PL_PROBE_ABSENT, "present after absent stays absent");
	TAP_EQ_STR(pl__probe_message(PL_PROBE_PSI), "psi: gone 1", "message kept, not forced");
	TAP_EQ_STR(pl__probe_message(PL_PROBE_MEMFD), "", "no message for an unreported probe");

	{
		char longer[600];

		memset(longer, 'x', sizeof(longer) - 1);
		longer[sizeof(longer) - 1] = '\0';
		probe_force("ffs_aio");
		capture_begin(&cap);
		pl__probe_absent(PL_PROBE_FFS_AIO, false, "%s", longer);
		capture_end(&cap);
		out = pl__probe_message(PL_PROBE_FFS_AIO);
		TAP_OK(strlen(out) < 300 && strstr(out, "xxx (forced by PERFLINK_PROBE_FAIL)"),
		       "a long message is cut before the forced note");
	}
}

int main(void)
{
	pl__log_init("test", true, 0);
	test_registry();
	test_shm();
	test_eventfd();
	probe_force(NULL);
	return tap_done();
}
