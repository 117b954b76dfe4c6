/* The sampling clock and its signal handler.
 *
 * Clock: the render thread's own CPU time, not CLOCK_MONOTONIC. A CPU-time
 * clock fires only while the thread runs, so the signal never lands in one
 * of its blocking calls: a wall-clock timer would make the target's poll,
 * epoll_wait, nanosleep and the driver waits inside a swap return EINTR
 * (SA_RESTART does not restart those), changing the program it measures.
 * The shares are then shares of the render thread's CPU time, which is what
 * one optimises; time blocked in the swap shows in render_stats (frame_ms
 * against fps), CPU spent inside the swap (a driver spinning, copying) as
 * idle samples. The clock is the thread's own, so other busy threads do
 * not bias it the way process-wide ITIMER_PROF does.
 *
 * Which CPU-time clock: perf's task clock for the thread (a software event
 * whose overflow signals the thread through F_SETSIG), where the kernel
 * allows it; else a POSIX timer on the thread's CPU clock. The kernel
 * checks a POSIX CPU timer only at its scheduler tick, and only while the
 * thread runs: on a CPU other tasks want, the thread runs in slices that
 * end at a tick, and each slice after a wake-up starts where the frame
 * starts, so the samples gather at the ends of the first slices. Under
 * four busy loops a CPU, a renderer measuring its own split (hot_a 2/3 of
 * its busy time, hot_b 1/3, the swap 10%) was sampled 80/20 and 96% busy,
 * at a third of the rate; the task clock is an hrtimer on the thread's run
 * time and gave 60.5/30.0/9.4% against 60.3/30.6/9.1% measured, at the rate
 * asked. The task clock is not tried in a process under a seccomp filter,
 * which may kill it for the call; where kernel samples are refused
 * (perf_event_paranoid over 1, no CAP_PERFMON), it counts user time only.
 * The report's header says which clock it is (sampler_report.c).
 *
 * Handler: it copies the registers and the top of the stack into the ring
 * (sampler_capture.c) and returns; the sampler thread walks the copy
 * (sampler_unwind.c). Nothing in it takes a lock, allocates, or reads
 * memory that may not be mapped, whatever the interrupted thread was
 * doing: inside dlopen or dlclose, holding malloc's lock, on a stack of
 * its own. */
#include "sampler.h"
#include "diag.h"
#include "own_fds.h"
#include "real.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
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
/* the task clock's event while armed with it, else -1; read by the
 * handler (atomic): a signal from an event already closed is not ours */
static int task_clock_fd = -1;
static enum pl_sample_clock clock_in_use;

/* Our timer's signal, or our task clock's (F_SETSIG: si_code POLL_IN, or
 * POLL_HUP, si_fd the event's). */
static bool ours(const siginfo_t *info)
{
	int fd;

	if (IS_TIMER(info->si_code))
		return info->si_value.sival_int == COOKIE;
	fd = __atomic_load_n(&task_clock_fd, __ATOMIC_RELAXED);
	return fd >= 0 && (info->si_code == POLL_IN || info->si_code == POLL_HUP) &&
	       info->si_fd == fd;
}

static void handler(int sig, siginfo_t *info, void *uc)
{
	int saved_errno = errno;
	struct pl_raw_sample *s;

	(void)sig;
	if (!ours(info))
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

/* Whether a seccomp filter is on this process (/proc/self/status's
 * Seccomp: 2): one may kill it for a system call it does not allow, and
 * perf_event_open is one sandboxes leave out. Unknown (the file unread, or
 * cut at the buffer before the line) counts as yes. */
static bool seccomp_filtered(void)
{
	char buf[4096];
	const char *at;
	ssize_t n;
	int fd = pl__real.open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	pl__real.close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	at = strstr(buf, "\nSeccomp:");
	if (!at) /* a kernel without seccomp, unless the read was cut short */
		return (size_t)n == sizeof(buf) - 1;
	at += strlen("\nSeccomp:");
	while (*at == ' ' || *at == '\t')
		at++;
	return *at != '0';
}

static int open_task_clock(pid_t tid, long period_ns, bool kernel_too)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = (uint64_t)period_ns;
	a.wakeup_events = 1;
	/* counting from now: its overflows signal no one until O_ASYNC is
	 * set, and so no ioctl is needed (the profiler times the program's) */
	a.exclude_kernel = !kernel_too;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The event's fd is one of the shim's own (own_fds.h): a program that
 * closes every descriptor it did not open leaves it alone, and one that
 * takes its number with dup2 has it forgotten here, and not closed. */
static void close_task_clock(int fd)
{
	if (fd >= 0 && pl__own_fd(fd)) {
		pl__own_fd_watch(fd, false);
		pl__real.close(fd);
	}
}

/* tid's task clock, signalling tid with signo every period_ns of its run
 * time: 0, or -errno (nothing left open). */
static int arm_task_clock(pid_t tid, int signo, long period_ns)
{
	struct f_owner_ex owner = { F_OWNER_TID, tid };
	int fd = open_task_clock(tid, period_ns, true);
	int err;

	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		fd = open_task_clock(tid, period_ns, false);
		clock_in_use = PL_SAMPLE_CLOCK_TASK_USER;
	} else {
		clock_in_use = PL_SAMPLE_CLOCK_TASK;
	}
	if (fd < 0)
		return -errno;
	pl__own_fd_watch(fd, true);
	__atomic_store_n(&task_clock_fd, fd, __ATOMIC_RELAXED);
	if (fcntl(fd, F_SETSIG, signo) < 0 || fcntl(fd, F_SETOWN_EX, &owner) < 0 ||
	    fcntl(fd, F_SETFL, O_ASYNC) < 0) {
		err = errno;
		__atomic_store_n(&task_clock_fd, -1, __ATOMIC_RELAXED);
		close_task_clock(fd);
		return -err;
	}
	return 0;
}

int pl__signal_arm(pid_t tid, int signo, uint32_t hz, bool task_clock)
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
	if (task_clock && !seccomp_filtered() && arm_task_clock(tid, signo, period_ns) == 0) {
		armed = true;
		return 0;
	}
	clock_in_use = PL_SAMPLE_CLOCK_TIMER;
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
	int fd = __atomic_exchange_n(&task_clock_fd, -1, __ATOMIC_RELAXED);

	if (fd >= 0)
		close_task_clock(fd);
	else if (armed)
		timer_delete(timer);
	armed = false;
}

enum pl_sample_clock pl__signal_clock(void)
{
	return clock_in_use;
}

void pl__signal_fork_child(void)
{
	/* the parent's event, whose signals go to the parent's thread: let go
	 * of this copy, and of the timer, which fork does not copy */
	close_task_clock(__atomic_exchange_n(&task_clock_fd, -1, __ATOMIC_RELAXED));
	armed = false;
}
