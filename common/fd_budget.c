/* See fd_budget.h. */
#include "fd_budget.h"

#include <sys/resource.h>

long pl__fd_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		struct rlimit want = { rl.rlim_max, rl.rlim_max };

		if (want.rlim_cur == RLIM_INFINITY || want.rlim_cur > 1u << 20)
			want.rlim_cur = 1u << 20;
		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			rl.rlim_cur = want.rlim_cur;
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1u << 20)
		rl.rlim_cur = 1u << 20;
	return rl.rlim_cur > PL_FD_RESERVE ? (long)rl.rlim_cur - PL_FD_RESERVE : 0;
}
