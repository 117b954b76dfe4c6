/* Timing of poll, select and epoll waits on staged descriptors (waits.h). */
#include "waits.h"
#include "clock.h"
#include "fdtab.h"
#include "stats.h"
#include "user_read.h"

#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <string.h>

/* What the set holds, read without trusting the pointer: a bad one is the
 * kernel's to refuse with EFAULT. Where process_vm_readv is missing
 * (qemu-user, a seccomp filter) it is read directly, as libc's own
 * fortified checks do. */
static bool read_set(void *dst, const void *src, size_t len)
{
	int r = pl__user_read(dst, src, len);

	if (r == -ENOSYS) {
		memcpy(dst, src, len);
		return true;
	}
	return r == 0;
}

#define POLLFD_CHUNK 32

unsigned pl__waits_in_pollfds(const struct pollfd *fds, nfds_t n)
{
	struct pollfd chunk[POLLFD_CHUNK];
	nfds_t i, k, got;

	if (!fds || !pl__fd_waits_known())
		return 0;
	for (i = 0; i < n; i += got) {
		got = n - i < POLLFD_CHUNK ? n - i : POLLFD_CHUNK;
		if (!read_set(chunk, fds + i, got * sizeof(*fds)))
			return 0;
		for (k = 0; k < got; k++) {
			unsigned w = pl__fd_wait_stage(chunk[k].fd); /* 0 for a negative fd */

			if (w)
				return w;
		}
	}
	return 0;
}

/* fd_set is a bit array in words of unsigned long, bit fd % bits of word
 * fd / bits, in glibc and musl alike: read the words nfds needs and look up
 * only the descriptors that are set. */
#define SET_BITS (CHAR_BIT * sizeof(unsigned long))
#define SET_WORDS (FD_SETSIZE / SET_BITS)

static unsigned waits_in_fdset(int nfds, const fd_set *set)
{
	unsigned long word[SET_WORDS];
	unsigned i, words = ((unsigned)nfds + SET_BITS - 1) / SET_BITS;

	if (!set || !read_set(word, set, words * sizeof(word[0])))
		return 0;
	for (i = 0; i < words; i++) {
		unsigned long bits = word[i];

		while (bits) {
			int fd = (int)(i * SET_BITS) + __builtin_ctzl(bits);
			unsigned w;

			bits &= bits - 1;
			if (fd >= nfds)
				break;
			w = pl__fd_wait_stage(fd);
			if (w)
				return w;
		}
	}
	return 0;
}

unsigned pl__waits_in_fdsets(int nfds, const fd_set *r, const fd_set *w, const fd_set *e)
{
	unsigned stage;

	if (nfds <= 0 || !pl__fd_waits_known())
		return 0;
	if (nfds > FD_SETSIZE)
		nfds = FD_SETSIZE; /* the C library's sets hold no more */
	stage = waits_in_fdset(nfds, r);
	if (!stage)
		stage = waits_in_fdset(nfds, w);
	if (!stage)
		stage = waits_in_fdset(nfds, e);
	return stage;
}

/* The CPU interval nests inside the wall interval, as around an ioctl. */
void pl__wait_begin(struct pl_wait_clock *c)
{
	int saved_errno = errno;

	c->wall0 = pl__mono_ns();
	c->cpu0 = pl__thread_cpu_ns();
	errno = saved_errno;
}

void pl__wait_end(unsigned wait_stage, const struct pl_wait_clock *c, int ret, int err)
{
	uint64_t cpu1 = pl__thread_cpu_ns(), wall1 = pl__mono_ns();
	struct pl_sample s;

	memset(&s, 0, sizeof(s));
	s.stage = wait_stage - 1;
	s.start_ns = c->wall0;
	s.ret = ret;
	s.err = err;
	s.wall_ns = wall1 > c->wall0 ? wall1 - c->wall0 : 0;
	s.cpu_ns = cpu1 > c->cpu0 ? cpu1 - c->cpu0 : 0;
	pl__stats_record(&s);
	errno = err;
}
