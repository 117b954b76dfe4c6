/* The fd → device-class table. */
#include "fdtab.h"
#include "diag.h"
#include "stages.h"

#include <errno.h>
#include <unistd.h>

static uint32_t fd_word[PL_FD_MAX];
/* The wait state (fdtab.h): the fd's wait stage; for an fd in an epoll
 * set, 1 + that set's fd; for an epoll fd, how many of its members have a
 * wait stage (and fd_wait holds the latest one's). */
static uint8_t fd_wait[PL_FD_MAX];
static uint16_t fd_epoll_set[PL_FD_MAX];
static uint8_t fd_staged_members[PL_FD_MAX];
/* Copies of one open file (dup, dup2, dup3) are one family, so that a wait
 * stage learnt on one is known on all: GStreamer's v4l2src polls the fd it
 * opened and dequeues on a dup of it. 0: no copy made; ids are never
 * reused, so that a number closed and taken again joins no old family. */
static uint32_t fd_family[PL_FD_MAX];
static uint32_t last_family;
static bool waits_known;

static bool in_table(int fd) { return fd >= 0 && fd < PL_FD_MAX; }

/* epfd gained (+1) or lost (-1) a member whose wait stage is stage. */
static void epoll_member_staged(int epfd, int delta, unsigned stage)
{
	uint8_t n = __atomic_load_n(&fd_staged_members[epfd], __ATOMIC_RELAXED);

	if (delta > 0) {
		if (n < UINT8_MAX)
			__atomic_store_n(&fd_staged_members[epfd], (uint8_t)(n + 1),
					 __ATOMIC_RELAXED);
		__atomic_store_n(&fd_wait[epfd], (uint8_t)stage, __ATOMIC_RELAXED);
		return;
	}
	if (n == 0)
		return;
	__atomic_store_n(&fd_staged_members[epfd], (uint8_t)(n - 1), __ATOMIC_RELAXED);
	if (n == 1)
		__atomic_store_n(&fd_wait[epfd], 0, __ATOMIC_RELAXED);
}

/* The number fd is being reused or freed: forget its wait state, and take
 * it out of the epoll set it was in (the kernel does, once the file is
 * closed). */
static void forget_wait(int fd)
{
	uint16_t set = __atomic_load_n(&fd_epoll_set[fd], __ATOMIC_RELAXED);
	uint8_t stage = __atomic_load_n(&fd_wait[fd], __ATOMIC_RELAXED);

	if (set && stage && in_table(set - 1))
		epoll_member_staged(set - 1, -1, stage);
	__atomic_store_n(&fd_epoll_set[fd], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fd_wait[fd], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fd_staged_members[fd], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fd_family[fd], 0, __ATOMIC_RELAXED);
}

static uint32_t match_patterns(const char *path)
{
	uint32_t mask = 0;
	unsigned i;

	for (i = 0; i < pl__stages.n_patterns; i++) {
		if (pl__glob_match(pl__stages.pattern[i], path))
			mask |= 1u << i;
	}
	return mask;
}

/* The fd's target as /proc shows it; "" when /proc is not there. */
static uint32_t classify_from_proc(int fd)
{
	char link[32], target[PL_PATTERN_MAX + 1];
	int saved_errno = errno;
	ssize_t n;

	pl__fmt(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	errno = saved_errno;
	/* a target longer than any pattern can hold matches only wildcards
	 * that the truncated text matches as well: treat it as unknown */
	if (n <= 0 || n >= (ssize_t)sizeof(target) - 1)
		return 0;
	target[n] = '\0';
	return match_patterns(target);
}

void pl__fd_opened(int fd, const char *path)
{
	uint32_t word = 0;

	if (fd < 0 || fd >= PL_FD_MAX)
		return;
	forget_wait(fd);
	/* an absolute path that matches is enough; otherwise leave the fd
	 * unclassified and let /proc say where it leads if it ever matters */
	if (path && path[0] == '/' && pl__stages.n_patterns) {
		uint32_t mask = match_patterns(path);

		if (mask)
			word = PL_FD_CLASSIFIED | mask;
	}
	__atomic_store_n(&fd_word[fd], word, __ATOMIC_RELAXED);
}

void pl__fd_closed(int fd)
{
	if (!in_table(fd))
		return;
	__atomic_store_n(&fd_word[fd], 0, __ATOMIC_RELAXED);
	forget_wait(fd);
}

void pl__fd_closed_range(unsigned int first, unsigned int last)
{
	unsigned int fd;

	for (fd = first; fd <= last && fd < PL_FD_MAX; fd++)
		pl__fd_closed((int)fd);
}

void pl__fd_copied(int from, int to)
{
	uint32_t word = 0, family = 0;
	uint8_t stage = 0;

	if (!in_table(to))
		return;
	if (in_table(from)) {
		word = __atomic_load_n(&fd_word[from], __ATOMIC_RELAXED);
		stage = __atomic_load_n(&fd_wait[from], __ATOMIC_RELAXED);
		family = __atomic_load_n(&fd_family[from], __ATOMIC_RELAXED);
		if (!family) {
			family = __atomic_add_fetch(&last_family, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&fd_family[from], family, __ATOMIC_RELAXED);
		}
	}
	__atomic_store_n(&fd_word[to], word, __ATOMIC_RELAXED);
	/* the copy is the same device, in no epoll set of its own */
	forget_wait(to);
	__atomic_store_n(&fd_wait[to], stage, __ATOMIC_RELAXED);
	__atomic_store_n(&fd_family[to], family, __ATOMIC_RELAXED);
}

uint32_t pl__fd_patterns(int fd)
{
	uint32_t word, mask;

	if (fd < 0)
		return 0;
	if (fd >= PL_FD_MAX)
		return classify_from_proc(fd);
	word = __atomic_load_n(&fd_word[fd], __ATOMIC_RELAXED);
	if (word & PL_FD_CLASSIFIED)
		return word & PL_FD_PATTERNS;
	mask = classify_from_proc(fd);
	/* or, not store: a flag set meanwhile by another thread survives */
	__atomic_fetch_or(&fd_word[fd], PL_FD_CLASSIFIED | mask, __ATOMIC_RELAXED);
	return mask;
}

void pl__fd_set_flag(int fd, uint32_t flag, bool on)
{
	if (fd < 0 || fd >= PL_FD_MAX)
		return;
	if (on)
		__atomic_fetch_or(&fd_word[fd], flag, __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(&fd_word[fd], ~flag, __ATOMIC_RELAXED);
}

bool pl__fd_has_flag(int fd, uint32_t flag)
{
	if (fd < 0 || fd >= PL_FD_MAX)
		return false;
	return (__atomic_load_n(&fd_word[fd], __ATOMIC_RELAXED) & flag) != 0;
}

/* One fd learns; false when it knew already (or cannot). */
static bool learn_one(int fd, unsigned wait_stage, bool boundary)
{
	uint8_t old;
	uint16_t set;

	old = __atomic_load_n(&fd_wait[fd], __ATOMIC_RELAXED);
	if (old == wait_stage || (old && !boundary))
		return false; /* the hot path: known already */
	__atomic_store_n(&fd_wait[fd], (uint8_t)wait_stage, __ATOMIC_RELAXED);
	__atomic_store_n(&waits_known, true, __ATOMIC_RELAXED);
	set = __atomic_load_n(&fd_epoll_set[fd], __ATOMIC_RELAXED);
	if (!set || !in_table(set - 1))
		return true;
	if (old)
		__atomic_store_n(&fd_wait[set - 1], (uint8_t)wait_stage, __ATOMIC_RELAXED);
	else
		epoll_member_staged(set - 1, +1, wait_stage);
	return true;
}

void pl__fd_learn_wait(int fd, unsigned wait_stage, bool boundary)
{
	uint32_t family;
	int other;

	if (!in_table(fd) || wait_stage == 0 || wait_stage > UINT8_MAX)
		return;
	if (!learn_one(fd, wait_stage, boundary))
		return;
	/* once per fd and stage learnt: the table is read whole, only then */
	family = __atomic_load_n(&fd_family[fd], __ATOMIC_RELAXED);
	if (!family)
		return;
	for (other = 0; other < PL_FD_MAX; other++) {
		if (other != fd && __atomic_load_n(&fd_family[other], __ATOMIC_RELAXED) == family)
			learn_one(other, wait_stage, boundary);
	}
}

bool pl__fd_waits_known(void)
{
	return __atomic_load_n(&waits_known, __ATOMIC_RELAXED);
}

unsigned pl__fd_wait_stage(int fd)
{
	return in_table(fd) ? __atomic_load_n(&fd_wait[fd], __ATOMIC_RELAXED) : 0;
}

void pl__fd_epoll_added(int epfd, int fd)
{
	uint8_t stage;

	if (!in_table(epfd) || !in_table(fd))
		return;
	/* in one set at a time, as far as this table knows */
	if (__atomic_load_n(&fd_epoll_set[fd], __ATOMIC_RELAXED))
		pl__fd_epoll_removed(__atomic_load_n(&fd_epoll_set[fd], __ATOMIC_RELAXED) - 1, fd);
	__atomic_store_n(&fd_epoll_set[fd], (uint16_t)(epfd + 1), __ATOMIC_RELAXED);
	stage = __atomic_load_n(&fd_wait[fd], __ATOMIC_RELAXED);
	if (stage)
		epoll_member_staged(epfd, +1, stage);
}

void pl__fd_epoll_removed(int epfd, int fd)
{
	uint8_t stage;

	if (!in_table(epfd) || !in_table(fd) ||
	    __atomic_load_n(&fd_epoll_set[fd], __ATOMIC_RELAXED) != epfd + 1)
		return;
	__atomic_store_n(&fd_epoll_set[fd], 0, __ATOMIC_RELAXED);
	stage = __atomic_load_n(&fd_wait[fd], __ATOMIC_RELAXED);
	if (stage)
		epoll_member_staged(epfd, -1, stage);
}
