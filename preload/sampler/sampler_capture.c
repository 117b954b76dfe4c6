/* The handler's part of a sample: the interrupted registers and a copy of
 * the top of the stack, taken so that it cannot fault and takes no lock.
 * The walk happens later on the sampler thread (sampler_unwind.c), as
 * perf's DWARF call graphs and simpleperf do it: a handler that walks the
 * live stack itself reads whatever the frames point at, and its unwinder
 * looks modules up under the loader's lock (the deadlock class of
 * gperftools #1188 and #1583).
 *
 * Two ways to copy, both unable to fault:
 * - from the render thread's own stack, between the interrupted sp and the
 *   top of the stack that pthread_getattr_np gave on that thread: memory a
 *   running thread's stack always has mapped; no system call;
 * - anywhere else (a thread found by name, which never ran our code
 *   before; a coroutine's stack): process_vm_readv on ourselves, which
 *   stops with a short count at the first page not mapped instead of
 *   faulting. Not under qemu-user (ENOSYS) nor under a seccomp filter
 *   that refuses it: such a sample keeps its pc alone and is cut short. */
#include "sampler.h"

#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>

#define PAGE_GUESS 4096u /* split points only: any page size >= this works */

/* The render thread's stack: written on that thread before the timer is
 * armed on it (pl__capture_thread_bounds), cleared when it changes;
 * read by the handler on the same thread. */
static pthread_t bounds_thread; /* atomic */
static uintptr_t bounds_lo, bounds_hi; /* atomic */
static bool vm_readv_works;

void pl__capture_init(void)
{
	unsigned char probe[64], copy[sizeof(probe)];
	struct iovec local = { copy, sizeof(copy) }, remote = { probe, sizeof(probe) };

	memset(probe, 0x5a, sizeof(probe));
	vm_readv_works = process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
				 (ssize_t)sizeof(probe) &&
			 memcmp(probe, copy, sizeof(probe)) == 0;
}

void pl__capture_thread_bounds(void)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0 && size > 0) {
		/* cleared first: the handler never pairs a thread with another's bounds */
		__atomic_store_n(&bounds_thread, (pthread_t)0, __ATOMIC_RELEASE);
		__atomic_store_n(&bounds_lo, (uintptr_t)addr, __ATOMIC_RELAXED);
		__atomic_store_n(&bounds_hi, (uintptr_t)addr + size, __ATOMIC_RELAXED);
		__atomic_store_n(&bounds_thread, pthread_self(), __ATOMIC_RELEASE);
	}
	pthread_attr_destroy(&attr);
}

void pl__capture_forget_bounds(void)
{
	__atomic_store_n(&bounds_thread, (pthread_t)0, __ATOMIC_RELEASE);
}

/* process_vm_readv in page-sized pieces: a short count then ends exactly
 * where the mapped memory does, whatever granularity the kernel keeps. */
static size_t read_unmapped_safe(unsigned char *to, uintptr_t from, size_t len)
{
	struct iovec local = { to, len }, remote[PL_STACK_COPY_BYTES / PAGE_GUESS + 1];
	uintptr_t at = from, end = from + len;
	int n = 0;
	ssize_t got;

	while (at < end && n < (int)(sizeof(remote) / sizeof(remote[0]))) {
		uintptr_t next = (at / PAGE_GUESS + 1) * PAGE_GUESS;

		if (next > end || next < at)
			next = end;
		remote[n].iov_base = (void *)at;
		remote[n++].iov_len = next - at;
		at = next;
	}
	local.iov_len = at - from;
	got = process_vm_readv(getpid(), &local, 1, remote, (unsigned long)n, 0);
	return got > 0 ? (size_t)got : 0;
}

void pl__capture(struct pl_raw_sample *s, const void *ucontext)
{
	uintptr_t sp, lo, hi;
	size_t len;

	struct timespec now;

	/* clock_gettime is async-signal-safe (a vDSO read) */
	s->mono_ns = clock_gettime(CLOCK_MONOTONIC, &now) == 0
			     ? (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec
			     : 0;
	/* a system call, async-signal-safe; the samples' thread for the host's
	 * timeline, whatever happens to the thread before they are drained */
	s->tid = (int32_t)syscall(SYS_gettid);
	pl__regs_capture(s->regs, ucontext);
	sp = pl__regs_sp(s->regs);
	s->stack_start = sp;
	s->stack_len = 0;
	s->stack_unknown = 0;
	if (__atomic_load_n(&bounds_thread, __ATOMIC_ACQUIRE) == pthread_self()) {
		lo = __atomic_load_n(&bounds_lo, __ATOMIC_RELAXED);
		hi = __atomic_load_n(&bounds_hi, __ATOMIC_RELAXED);
		if (sp >= lo && sp < hi) {
			len = hi - sp < PL_STACK_COPY_BYTES ? hi - sp : PL_STACK_COPY_BYTES;
			memcpy(s->stack, (const void *)sp, len);
			s->stack_len = (uint32_t)len;
			return;
		}
	}
	if (vm_readv_works && sp != 0) {
		len = (uintptr_t)-1 - sp < PL_STACK_COPY_BYTES ? (uintptr_t)-1 - sp
							       : PL_STACK_COPY_BYTES;
		s->stack_len = (uint32_t)read_unmapped_safe(s->stack, sp, len);
		if (s->stack_len > 0)
			return;
	}
	s->stack_unknown = 1;
}
