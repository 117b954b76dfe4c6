/* See own_fds.h. */
#include "own_fds.h"
#include "dormant.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1u << 1)
#endif

/* A handful at most: the connection to perflinkd, one at a time. */
#define OWN_MAX 4

static atomic_int own[OWN_MAX] = { -1, -1, -1, -1 };
static atomic_uint count PL_DORMANT_STATE; /* slots in use: 0 keeps the hooks to one load */

void pl__own_fd_watch(int fd, bool mine)
{
	if (fd < 0)
		return;
	for (int i = 0; i < OWN_MAX; i++) {
		int expected = mine ? -1 : fd;

		if (atomic_compare_exchange_strong(&own[i], &expected, mine ? fd : -1)) {
			if (mine)
				atomic_fetch_add(&count, 1);
			else
				atomic_fetch_sub(&count, 1);
			return;
		}
	}
}

bool pl__own_fd(int fd)
{
	if (fd < 0 || atomic_load_explicit(&count, memory_order_acquire) == 0)
		return false;
	for (int i = 0; i < OWN_MAX; i++)
		if (atomic_load(&own[i]) == fd)
			return true;
	return false;
}

bool pl__own_fd_in(unsigned int first, unsigned int last)
{
	if (atomic_load_explicit(&count, memory_order_acquire) == 0)
		return false;
	for (int i = 0; i < OWN_MAX; i++) {
		int fd = atomic_load(&own[i]);

		if (fd >= 0 && (unsigned int)fd >= first && (unsigned int)fd <= last)
			return true;
	}
	return false;
}

/* The lowest own fd in [from, last], or -1. */
static int next_own(unsigned int from, unsigned int last)
{
	int best = -1;

	for (int i = 0; i < OWN_MAX; i++) {
		int fd = atomic_load(&own[i]);

		if (fd >= 0 && (unsigned int)fd >= from && (unsigned int)fd <= last &&
		    (best < 0 || fd < best))
			best = fd;
	}
	return best;
}

int pl__own_fds_close_range(unsigned int first, unsigned int last, int flags,
			    int (*real)(unsigned int, unsigned int, int))
{
	unsigned int from = first;
	int ret = 0;

	while (from <= last) {
		int skip = next_own(from, last);
		unsigned int to = skip < 0 ? last : (unsigned int)skip - 1;

		if (skip < 0 || (unsigned int)skip > from) {
			if (real(from, to, flags) < 0 && ret == 0)
				ret = -errno;
			flags &= ~(int)CLOSE_RANGE_UNSHARE;
		}
		if (skip < 0 || (unsigned int)skip == ~0u)
			break;
		from = (unsigned int)skip + 1;
	}
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return 0;
}
