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
 * Handler: it copies the registers and the top of the stack into the ring
 * (sampler_capture.c) and returns; the sampler thread walks the copy
 * (sampler_unwind.c). Nothing in it takes a lock, allocates, or reads
 * memory that may not be mapped, whatever the interrupted thread was
 * doing: inside dlopen or dlclose, holding malloc's lock, on a stack of
 * its own. */
#include "sampler.h"
#include "diag.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* qemu-user (7.2) hands a MIPS guest the host's SI_TIMER (-2; a MIPS
 * kernel says -3): without this no sample is taken there. The cookie still
 * tells our timer's signals from any other. */
#if defined(__mips__)
#define IS_TIMER(code) ((code) == SI_TIMER || (code) == -2)
#else
#define IS_TIMER(code) ((code) == SI_TIMER)
#endif

/* Marks our timer's signals: any other sender's are ignored. */
#define COOKIE 0x504c5331

static timer_t timer;
static bool armed;

static void handler(int sig, siginfo_t *info, void *uc)
{
	int saved_errno = errno;
	struct pl_raw_sample *s;

	(void)sig;
	if (!IS_TIMER(info->si_code) || info->si_value.sival_int != COOKIE)
		return;
	s = pl__ring_claim();
	if (s) {
		s->idle = pl__in_swap_now() != 0;
		pl__capture(s, uc);
		if (pl__ring_commit())
			pl__sampler_thread_wake();
	}
	errno = saved_errno;
}

int pl__signal_init(void)
{
	pl__capture_init();
	return pl__unwind_init();
}

void pl__sampler_thread_warm(void)
{
	pl__capture_thread_bounds();
}

bool pl__signal_intact(int signo)
{
	struct sigaction cur;

	if (sigaction(signo, NULL, &cur) < 0)
		return false;
	return (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == handler;
}

long pl__signal_period_ns(uint32_t hz)
{
	return 1000000000L / (long)hz;
}

int pl__signal_arm(pid_t tid, int signo, uint32_t hz)
{
	struct sigaction old, sa;
	struct sigevent sev;
	struct itimerspec its;
	long period_ns = pl__signal_period_ns(hz);
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
