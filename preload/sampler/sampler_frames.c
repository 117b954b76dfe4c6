/* The render thread and its frame times, from the swap hooks.
 *
 * Render time is measured from a swap's return to the next swap's entry:
 * the work the thread did for the frame, not the wait for vsync inside
 * the swap (a renderer's own RenderSummary times the same span). */
#include "dormant.h"
#include "sampler.h"

#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int pl__sampler_on PL_DORMANT_STATE; /* read by the dlsym hook in every process */
__thread int pl__in_swap __attribute__((tls_model("initial-exec")));

/* 0: not yet asked; else the thread's tid. initial-exec: no allocation. */
static __thread pid_t my_tid __attribute__((tls_model("initial-exec")));
static __thread int warmed __attribute__((tls_model("initial-exec")));
_Static_assert(__GCC_ATOMIC_LONG_LOCK_FREE == 2 && __GCC_ATOMIC_INT_LOCK_FREE == 2 &&
		       sizeof(pid_t) == sizeof(int),
	       "the swap hooks need lock-free atomics");

static __thread uint64_t last_exit_ns __attribute__((tls_model("initial-exec")));

static pid_t render_tid;      /* atomic */
static bool by_name;          /* set before the sampler starts */
/* pointer-sized: lock-free on 32-bit targets too (sampler_ring.c) */
static unsigned long frames;    /* atomic */
static unsigned long render_us; /* atomic */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int pl__in_swap_now(void)
{
	return pl__in_swap;
}

bool pl__sampler_is_on(void)
{
	return __atomic_load_n(&pl__sampler_on, __ATOMIC_ACQUIRE) != 0;
}

void pl__sampler_set_on(bool on)
{
	__atomic_store_n(&pl__sampler_on, on ? 1 : 0, __ATOMIC_RELEASE);
}

void pl__frames_init(const char *thread_name)
{
	by_name = thread_name && thread_name[0];
}

pid_t pl__render_tid(void)
{
	return __atomic_load_n(&render_tid, __ATOMIC_ACQUIRE);
}

void pl__render_tid_set(pid_t tid)
{
	__atomic_store_n(&render_tid, tid, __ATOMIC_RELEASE);
}

void pl__frames_read(unsigned long *f, unsigned long *us)
{
	*f = __atomic_load_n(&frames, __ATOMIC_RELAXED);
	*us = __atomic_load_n(&render_us, __ATOMIC_RELAXED);
}

static bool on_render_thread(void)
{
	pid_t r;

	if (my_tid == 0)
		my_tid = (pid_t)syscall(SYS_gettid);
	r = __atomic_load_n(&render_tid, __ATOMIC_ACQUIRE);
	if (r == 0 && !by_name) {
		pid_t zero = 0;

		if (__atomic_compare_exchange_n(&render_tid, &zero, my_tid, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			r = my_tid;
		else
			r = zero;
	}
	return r == my_tid;
}

void pl__sampler_swap_enter(void)
{
	pl__in_swap = 1;
	if (!on_render_thread())
		return;
	if (!warmed) {
		warmed = 1;
		pl__sampler_thread_warm();
		pl__sampler_thread_wake();
	}
	if (last_exit_ns != 0) {
		__atomic_add_fetch(&render_us, (unsigned long)((now_ns() - last_exit_ns) / 1000u),
				   __ATOMIC_RELAXED);
		__atomic_add_fetch(&frames, 1, __ATOMIC_RELAXED);
	}
}

void pl__sampler_swap_exit(void)
{
	pl__in_swap = 0;
	if (my_tid != 0 && my_tid == __atomic_load_n(&render_tid, __ATOMIC_RELAXED))
		last_exit_ns = now_ns();
}
