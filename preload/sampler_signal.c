/* The sampling timer and its signal handler.
 *
 * Clock: the render thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID's
 * per-thread form), not CLOCK_MONOTONIC. A CPU-time timer fires only while
 * the thread runs, so the signal never lands in one of its blocking calls:
 * a wall-clock timer would make the target's poll, epoll_wait, nanosleep
 * and the driver waits inside a swap return EINTR (SA_RESTART does not
 * restart those), changing the program it measures. The shares are then
 * shares of the render thread's CPU time, which is what one optimises;
 * time blocked in the swap shows in render_stats (frame_ms against fps),
 * CPU spent inside the swap (a driver spinning, copying) as idle samples.
 * The timer is per thread (SIGEV_THREAD_ID), so other busy threads do not
 * bias it the way process-wide ITIMER_PROF does.
 *
 * Handler: libunwind from the signal's context (unw_init_local2 with
 * UNW_INIT_SIGNAL_FRAME: the first frame is the interrupted pc, not a
 * return address), per-thread caching, no names (dladdr and symbol lookup
 * take the loader's lock and may read files), straight into the ring.
 * Where libunwind's context is not the kernel's ucontext_t (32-bit ARM,
 * others), the handler takes its own context and steps out through the
 * signal frame instead. */
#include "sampler.h"
#include "diag.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

#if defined(__x86_64__) || defined(__i386__)
#define UC_IS_UNW_CONTEXT 1
#else
#define UC_IS_UNW_CONTEXT 0
#endif

/* Marks our timer's signals: any other sender's are ignored. */
#define COOKIE 0x504c5331

static timer_t timer;
static bool armed;

static void unwind_into(struct pl_stack_sample *s, void *uc)
{
	unw_cursor_t c;
	unw_word_t ip;
	uint32_t n = 0;

#if UC_IS_UNW_CONTEXT
	if (unw_init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
		goto done;
#else
	unw_context_t ctx;

	(void)uc;
	if (unw_getcontext(&ctx) < 0 || unw_init_local(&c, &ctx) < 0)
		goto done;
	/* skip this handler's own frames and the sigreturn trampoline: libunwind
	 * flags the frame it reached through the signal frame, which is the
	 * interrupted pc (checked on x86-64 by forcing this path) */
	while (unw_is_signal_frame(&c) <= 0) {
		if (unw_step(&c) <= 0)
			goto done;
	}
#endif
	do {
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		s->ip[n++] = (uintptr_t)ip;
	} while (n < PL_STACK_DEPTH && unw_step(&c) > 0);
done:
	s->depth = n;
}

static void handler(int sig, siginfo_t *info, void *uc)
{
	int saved_errno = errno;
	struct pl_stack_sample *s;

	(void)sig;
	if (info->si_code != SI_TIMER || info->si_value.sival_int != COOKIE)
		return;
	s = pl__ring_claim();
	if (s) {
		s->idle = pl__in_swap != 0;
		unwind_into(s, uc);
		pl__ring_commit();
	}
	errno = saved_errno;
}

int pl__signal_init(void)
{
	unw_context_t ctx;
	unw_cursor_t c;

	/* the global cache locks; the per-thread one does not */
	if (unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD) < 0)
		return -EINVAL;
	/* first use initialises libunwind under a mutex: do it here */
	if (unw_getcontext(&ctx) < 0 || unw_init_local(&c, &ctx) < 0)
		return -EINVAL;
	while (unw_step(&c) > 0)
		;
	return 0;
}

void pl__sampler_thread_warm(void)
{
	unw_context_t ctx;
	unw_cursor_t c;

	if (unw_getcontext(&ctx) < 0 || unw_init_local(&c, &ctx) < 0)
		return;
	while (unw_step(&c) > 0)
		;
}

bool pl__signal_intact(int signo)
{
	struct sigaction cur;

	if (sigaction(signo, NULL, &cur) < 0)
		return false;
	return (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == handler;
}

int pl__signal_arm(pid_t tid, int signo, uint32_t hz)
{
	struct sigaction old, sa;
	struct sigevent sev;
	struct itimerspec its;
	long period_ns = 1000000000L / (long)hz;
	/* the thread's CPU clock, as pthread_getcpuclockid builds it */
	clockid_t clock = (clockid_t)((~(unsigned int)tid << 3) | 6u);

	if (sigaction(signo, NULL, &old) < 0)
		return -errno;
	if (!pl__signal_intact(signo)) {
		if ((old.sa_flags & SA_SIGINFO) ||
		    (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN))
			return -EBUSY;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = handler;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(signo, &sa, NULL) < 0)
			return -errno;
	}
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = signo;
	sev.sigev_value.sival_int = COOKIE;
	sev.sigev_notify_thread_id = tid;
	if (timer_create(clock, &sev, &timer) < 0)
		return -errno;
	its.it_interval.tv_sec = period_ns / 1000000000L;
	its.it_interval.tv_nsec = period_ns % 1000000000L;
	its.it_value = its.it_interval;
	if (timer_settime(timer, 0, &its, NULL) < 0) {
		int e = errno;

		timer_delete(timer);
		return -e;
	}
	armed = true;
	return 0;
}

/* The handler stays installed: a signal already pending would otherwise
 * meet the default action, which for SIGPROF ends the process. */
void pl__signal_disarm(void)
{
	if (armed)
		timer_delete(timer);
	armed = false;
}
