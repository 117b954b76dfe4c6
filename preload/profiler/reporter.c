/* The frame counter and the reporter thread's life.
 *
 * Why a thread rather than reporting on the thread that completed the
 * frame: that thread is the target's capture or encode loop. A report
 * resolves call sites with dladdr, which takes the dynamic loader's lock
 * (the target may hold it: a hook can run inside dl_iterate_phdr callbacks
 * or a signal handler that interrupted dlopen), and appends to a file,
 * which can block for as long as writeback takes. Both would land inside
 * the very frame times being measured, or deadlock. An async-signal-safe
 * formatter with a non-blocking write would avoid the lock but not the
 * stall (O_NONBLOCK means nothing to regular files) and could not name the
 * sites. So the hook only counts and wakes a futex, and the thread does
 * the rest.
 *
 * The thread is created by the constructor (before main, when the process
 * has one thread and holds no lock) and again in a fork child, from the
 * atfork child handler: glibc and musl reinitialise their allocator and
 * loader locks before child handlers run, so creating a thread there cannot
 * wait on a lock some other parent thread held at fork. It blocks every
 * signal, so the target's handlers never run on it. */
#include "reporter.h"
#include "diag.h"
#include "events.h"
#include "profile.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define REPORTER_STACK_BYTES (256 * 1024)
#define DRAIN_TIMEOUT_S 3
/* With per-call events on, the thread also wakes this often to send them:
 * 8192 events (the default ring) last 100 ms at 82,000 calls a second. */
#define EVENTS_DRAIN_MS 100

static uint32_t interval_frames = PL_INTERVAL_DEFAULT;
static uint32_t frames;      /* atomic: completed frames since start (or fork) */
static uint32_t report_want; /* atomic futex word: reports due */
static uint32_t report_done; /* atomic futex word: reports written */

static long futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
	return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

void pl__report_frame_completed(void)
{
	/* acq_rel: the thread that completes the interval's last frame passes
	 * every other thread's records (made before their frames) on to the
	 * reporter through report_want */
	uint32_t n = __atomic_add_fetch(&frames, 1, __ATOMIC_ACQ_REL);

	if (n % interval_frames != 0)
		return;
	__atomic_add_fetch(&report_want, 1, __ATOMIC_RELEASE);
	futex(&report_want, FUTEX_WAKE_PRIVATE, 1, NULL);
}

uint32_t pl__report_frames(void)
{
	return __atomic_load_n(&frames, __ATOMIC_RELAXED);
}

static void *reporter_main(void *unused)
{
	uint32_t done = __atomic_load_n(&report_done, __ATOMIC_RELAXED);

	const struct timespec events_tick = { 0, EVENTS_DRAIN_MS * 1000000L };
	bool events = __atomic_load_n(&pl__events_on, __ATOMIC_ACQUIRE);

	(void)unused;
	for (;;) {
		uint32_t want = __atomic_load_n(&report_want, __ATOMIC_ACQUIRE);

		if (events)
			pl__events_send();
		if (want == done) {
			/* EINTR, EAGAIN (the word moved) and the events' timeout
			 * all mean: look again */
			futex(&report_want, FUTEX_WAIT_PRIVATE, want, events ? &events_tick : NULL);
			continue;
		}
		/* requests that piled up while a report was written make one report */
		pl__report_write();
		done = want;
		__atomic_store_n(&report_done, done, __ATOMIC_RELEASE);
		futex(&report_done, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
	}
	return NULL;
}

static int start_thread(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t tid;
	int r;

	r = pthread_attr_init(&attr);
	if (r != 0)
		return -r;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, REPORTER_STACK_BYTES);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&tid, &attr, reporter_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r != 0)
		return -r;
#ifdef __GLIBC__
	pthread_setname_np(tid, "perflink-report");
#endif
	return 0;
}

int pl__reporter_start(const struct pl_settings *s)
{
	int r;

	interval_frames = s->interval_frames;
	pl__report_out_init(s, interval_frames);
	r = start_thread();
	if (r < 0)
		pl__diag("cannot start the reporter thread (error %d); profiling stays off", -r);
	return r;
}

void pl__reporter_fork_child(void)
{
	int r;

	__atomic_store_n(&frames, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&report_want, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&report_done, 0, __ATOMIC_RELAXED);
	pl__report_out_fork_child();
	pl__events_out_fork_child();
	r = start_thread();
	if (r < 0) {
		pl__diag("cannot start the reporter thread after fork (error %d); "
			 "profiling is off in pid %d", -r, (int)getpid());
		pl__profile_on = 0;
	}
}

void pl__reporter_drain(void)
{
	struct timespec deadline, now, left;
	uint32_t done;

	if (clock_gettime(CLOCK_MONOTONIC, &deadline) != 0)
		return;
	deadline.tv_sec += DRAIN_TIMEOUT_S;
	for (;;) {
		done = __atomic_load_n(&report_done, __ATOMIC_ACQUIRE);
		if (done == __atomic_load_n(&report_want, __ATOMIC_ACQUIRE))
			return;
		if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
			return;
		left.tv_sec = deadline.tv_sec - now.tv_sec;
		left.tv_nsec = deadline.tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0) {
			left.tv_nsec += 1000000000L;
			left.tv_sec--;
		}
		if (left.tv_sec < 0)
			return;
		futex(&report_done, FUTEX_WAIT_PRIVATE, done, &left);
	}
}
