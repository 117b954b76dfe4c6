/* The fd → device-class table. */
#include "fdtab.h"
#include "diag.h"
#include "stages.h"

#include <errno.h>
#include <unistd.h>

static uint32_t fd_word[PL_FD_MAX];

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
	if (fd >= 0 && fd < PL_FD_MAX)
		__atomic_store_n(&fd_word[fd], 0, __ATOMIC_RELAXED);
}

void pl__fd_closed_range(unsigned int first, unsigned int last)
{
	unsigned int fd;

	for (fd = first; fd <= last && fd < PL_FD_MAX; fd++)
		__atomic_store_n(&fd_word[fd], 0, __ATOMIC_RELAXED);
}

void pl__fd_copied(int from, int to)
{
	uint32_t word = 0;

	if (to < 0 || to >= PL_FD_MAX)
		return;
	if (from >= 0 && from < PL_FD_MAX)
		word = __atomic_load_n(&fd_word[from], __ATOMIC_RELAXED);
	__atomic_store_n(&fd_word[to], word, __ATOMIC_RELAXED);
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
