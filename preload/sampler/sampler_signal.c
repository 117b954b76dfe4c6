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

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* aarch64 and MIPS too (libunwind's unw_tdep_context_t is ucontext_t there):
 * walking out through the handler instead records the sigreturn
 * trampoline as the innermost frame on aarch64 (libunwind flags the
 * trampoline itself as the signal frame) and needs unwind tables in this
 * library on MIPS, where gcc emits none for C by default
 * (test/cross/sampler_chain measures both). */
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__mips__)
#define UC_IS_UNW_CONTEXT 1
#else
#define UC_IS_UNW_CONTEXT 0
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

/* The dynamic loader's code, found once at set-up. While a thread runs it
 * inside dlopen or dlclose it may hold the loader's (recursive) lock with
 * an object already unmapped but still listed; libunwind's lookup
 * (dl_iterate_phdr) from a handler on that same thread takes the lock
 * again and reads the unmapped headers: SIGSEGV. Other threads are kept
 * out by the lock, so only the sampled thread's own loader code matters:
 * such a sample keeps its pc and is not walked. */
#define LOADER_RANGES 4
static uintptr_t loader_lo[LOADER_RANGES], loader_hi[LOADER_RANGES];
static int n_loader;

static int find_loader(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t base = *(const uintptr_t *)arg;
	int i;

	(void)size;
	if (info->dlpi_addr != base)
		return 0;
	for (i = 0; i < info->dlpi_phnum && n_loader < LOADER_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		loader_lo[n_loader] = base + ph->p_vaddr;
		loader_hi[n_loader++] = base + ph->p_vaddr + ph->p_memsz;
	}
	return 1;
}

/* glibc's dl_load_write_lock: dl_iterate_phdr takes it, and libunwind
 * calls dl_iterate_phdr from the handler when its cache misses. Taken by
 * the interrupted thread itself (a signal between acquiring it and
 * recording the owner), the recursive lock waits for ever: a soak hung
 * there. Held by another thread, that thread may be freeing memory inside
 * dlclose and wait for a malloc lock the interrupted thread holds. So a
 * sample taken while the lock word is set is not walked. The lock is not
 * exported: it is the one mutex in ld.so's _rtld_global that this thread
 * owns inside a dl_iterate_phdr callback and not outside it. NULL where
 * it cannot be found so (then only the loader-code check below holds). */
static const int *write_lock_word;

struct lock_find {
	const int *lo;
	size_t n_ints;
	int tid;
	const int *found[4];
	int n;
};

/* pthread_mutex_t begins __lock, __count, __owner on every glibc ABI */
static void owned_mutexes(struct lock_find *f)
{
	size_t i;

	f->n = 0;
	for (i = 0; i + 3 <= f->n_ints; i++) {
		const int *m = f->lo + i;

		if (m[2] == f->tid && m[0] != 0 && m[1] >= 1 && f->n < 4)
			f->found[f->n++] = m;
	}
}

static int lock_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	owned_mutexes(arg);
	return 1;
}

static void find_write_lock(void)
{
#ifdef __GLIBC__
	struct lock_find outside, inside;
	const ElfW(Sym) *sym = NULL;
	void *g = dlsym(RTLD_DEFAULT, "_rtld_global");
	Dl_info di;
	int i, k;

	if (!g || !dladdr1(g, &di, (void **)&sym, RTLD_DL_SYMENT) || !sym || sym->st_size < 64)
		return;
	memset(&outside, 0, sizeof(outside));
	outside.lo = g;
	outside.n_ints = (size_t)sym->st_size / sizeof(int);
	outside.tid = (int)syscall(SYS_gettid);
	inside = outside;
	owned_mutexes(&outside);
	dl_iterate_phdr(lock_cb, &inside);
	for (i = 0; i < inside.n; i++) {
		for (k = 0; k < outside.n && outside.found[k] != inside.found[i]; k++)
			;
		if (k == outside.n) {
			if (write_lock_word)
				return; /* two candidates: trust neither */
			write_lock_word = inside.found[i];
		}
	}
#endif
}

static bool in_loader(uintptr_t pc)
{
	int i;

	for (i = 0; i < n_loader; i++) {
		if (pc >= loader_lo[i] && pc < loader_hi[i])
			return true;
	}
	return false;
}

/* A walk that libunwind cannot finish (no unwind information, a JIT
 * frame, a corrupt frame pointer) keeps the frames found so far and is
 * marked cut short: counted in the report, never retried, never fatal. */
static void unwind_into(struct pl_stack_sample *s, void *uc)
{
	unw_cursor_t c;
	unw_word_t ip;
	uint32_t n = 0;
	int step = 0;

	s->cut_short = 1;
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
	if (unw_get_reg(&c, UNW_REG_IP, &ip) == 0 &&
	    (in_loader((uintptr_t)ip) ||
	     (write_lock_word && __atomic_load_n(write_lock_word, __ATOMIC_RELAXED) != 0))) {
		s->ip[n++] = (uintptr_t)ip;
		goto done; /* cut short: see find_loader, write_lock_word */
	}
	do {
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		s->ip[n++] = (uintptr_t)ip;
	} while (n < PL_STACK_DEPTH && (step = unw_step(&c)) > 0);
	/* A full buffer is a deep stack, not a failure. libunwind also says 0
	 * ("outermost") when its frame-pointer guess for a pc without unwind
	 * information fails; at a real outermost frame (_start, clone, whose
	 * entries mark the return address undefined) it clears the pc, after
	 * a failed guess the pc stays. */
	if (step == 0 && n > 0)
		s->cut_short = unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip != 0;
	else
		s->cut_short = step < 0 || n == 0;
done:
	s->depth = n;
}

static void handler(int sig, siginfo_t *info, void *uc)
{
	int saved_errno = errno;
	struct pl_stack_sample *s;

	(void)sig;
	if (!IS_TIMER(info->si_code) || info->si_value.sival_int != COOKIE)
		return;
	s = pl__ring_claim();
	if (s) {
		s->idle = pl__in_swap_now() != 0;
		unwind_into(s, uc);
		pl__ring_commit();
	}
	errno = saved_errno;
}

int pl__signal_init(void)
{
	unw_context_t ctx;
	unw_cursor_t c;

#ifdef __GLIBC__
	/* musl's loader is libc itself, and its dlclose unmaps nothing */
	{
		uintptr_t base = (uintptr_t)getauxval(AT_BASE);

		if (base)
			dl_iterate_phdr(find_loader, &base);
	}
	find_write_lock();
	if (!write_lock_word)
		pl__diag("the loader's lock is not found: samples taken while another thread "
			 "loads or unloads a library may stall");
#endif
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
