/* Per-thread statistics slots and their merge. */
#include "stats.h"
#include "events.h"

#include <errno.h>
#include <stddef.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { SLOT_FREE, SLOT_OWNED };

struct slot {
	uint32_t state; /* atomic: SLOT_FREE or SLOT_OWNED */
	uint32_t seq;   /* atomic: odd while the owner writes */
	int32_t tid;
	uint64_t site_overflow_calls;
	struct pl_stage_stats stage[PL_MAX_STAGES];
	struct pl_site_stats site[PL_MAX_SITES];
};

/* PL_MAX_THREADS of them, mapped when profiling starts (pl__stats_init):
 * 0.9 MiB that would otherwise be .bss, which a process start pays for
 * even untouched (dormant.h). atomic: set before profiling is on. */
static struct slot *slots;
static uint32_t slots_high;    /* atomic: slots below this index were ever used */
static uint32_t dropped_calls; /* atomic */

/* initial-exec: the TLS block of a preloaded library is static, so an
 * access never calls into the loader (which may allocate or lock) */
static __thread struct slot *tls_slot __attribute__((tls_model("initial-exec")));
static __thread int tls_busy __attribute__((tls_model("initial-exec")));
/* After a failed claim, calls to skip before scanning the slots again. */
static __thread uint32_t tls_claim_backoff __attribute__((tls_model("initial-exec")));

/* Reporter-private: what exited threads left behind. */
static struct pl_snapshot retired;

int pl__stats_init(void)
{
	void *p = mmap(NULL, PL_MAX_THREADS * sizeof(struct slot), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	__atomic_store_n(&slots, (struct slot *)p, __ATOMIC_RELEASE);
	return 0;
}

static struct slot *claim_slot(void)
{
	struct slot *slots_now = __atomic_load_n(&slots, __ATOMIC_ACQUIRE);
	uint32_t i, high;

	for (i = 0; slots_now && i < PL_MAX_THREADS; i++) {
		uint32_t expect = SLOT_FREE;

		if (!__atomic_compare_exchange_n(&slots_now[i].state, &expect, SLOT_OWNED, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		slots_now[i].tid = (int32_t)syscall(SYS_gettid);
		high = __atomic_load_n(&slots_high, __ATOMIC_RELAXED);
		while (high < i + 1 &&
		       !__atomic_compare_exchange_n(&slots_high, &high, i + 1, true,
						    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
		return &slots_now[i];
	}
	return NULL;
}

static void add_site(struct slot *sl, const struct pl_sample *s)
{
	unsigned h = (unsigned)((s->site >> 2) ^ (s->site >> 11) ^ s->stage) % PL_MAX_SITES;
	unsigned i;

	for (i = 0; i < PL_MAX_SITES; i++, h = (h + 1) % PL_MAX_SITES) {
		struct pl_site_stats *e = &sl->site[h];

		if (e->addr == 0) {
			e->addr = s->site;
			e->stage = s->stage;
		} else if (e->addr != s->site || e->stage != s->stage) {
			continue;
		}
		e->calls++;
		e->wall_total_ns += s->wall_ns;
		e->cpu_total_ns += s->cpu_ns;
		e->bytes += s->cache_bytes;
		return;
	}
	sl->site_overflow_calls++;
}

void pl__stats_record(const struct pl_sample *s)
{
	struct pl_stage_stats *st;
	struct slot *sl;
	uint32_t seq;

	/* a hook in a signal handler that interrupted this thread's update */
	if (__atomic_load_n(&tls_busy, __ATOMIC_RELAXED)) {
		__atomic_fetch_add(&dropped_calls, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_store_n(&tls_busy, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);

	sl = tls_slot;
	if (!sl && tls_claim_backoff == 0) {
		sl = claim_slot();
		tls_slot = sl;
		if (!sl)
			tls_claim_backoff = 1024;
	} else if (!sl) {
		tls_claim_backoff--;
	}
	if (!sl || s->stage >= PL_MAX_STAGES) {
		__atomic_fetch_add(&dropped_calls, 1, __ATOMIC_RELAXED);
		goto out;
	}

	seq = __atomic_load_n(&sl->seq, __ATOMIC_RELAXED);
	__atomic_store_n(&sl->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);

	st = &sl->stage[s->stage];
	st->calls++;
	if (s->ret < 0) {
		if (s->err == EAGAIN)
			st->eagain++;
		else if (s->err == ENODATA)
			st->enodata++;
		else if (s->err == EINTR)
			st->eintr++;
		else
			st->errors++;
	}
	st->wall_total_ns += s->wall_ns;
	if (s->wall_ns > st->wall_max_ns)
		st->wall_max_ns = s->wall_ns;
	st->cpu_total_ns += s->cpu_ns;
	if (s->cpu_ns > st->cpu_max_ns)
		st->cpu_max_ns = s->cpu_ns;
	st->cache_bytes += s->cache_bytes;
	st->stream_bytes += s->stream_bytes;
	if (s->site)
		add_site(sl, s);

	__atomic_store_n(&sl->seq, seq + 2, __ATOMIC_RELEASE);
	if (__atomic_load_n(&pl__events_on, __ATOMIC_RELAXED))
		pl__events_record(s, (uint32_t)sl->tid);
out:
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&tls_busy, 0, __ATOMIC_RELAXED);
}

static void add_stage(struct pl_stage_stats *to, const struct pl_stage_stats *from)
{
	to->calls += from->calls;
	to->errors += from->errors;
	to->eagain += from->eagain;
	to->enodata += from->enodata;
	to->eintr += from->eintr;
	to->wall_total_ns += from->wall_total_ns;
	if (from->wall_max_ns > to->wall_max_ns)
		to->wall_max_ns = from->wall_max_ns;
	to->cpu_total_ns += from->cpu_total_ns;
	if (from->cpu_max_ns > to->cpu_max_ns)
		to->cpu_max_ns = from->cpu_max_ns;
	to->cache_bytes += from->cache_bytes;
	to->stream_bytes += from->stream_bytes;
}

static void merge_site(struct pl_snapshot *to, const struct pl_site_stats *e)
{
	unsigned i;

	for (i = 0; i < to->n_sites; i++) {
		if (to->site[i].addr == e->addr && to->site[i].stage == e->stage)
			break;
	}
	if (i == to->n_sites) {
		if (to->n_sites == PL_MAX_MERGED_SITES) {
			to->site_overflow_calls += e->calls;
			return;
		}
		to->site[i] = *e;
		to->site[i].calls = to->site[i].wall_total_ns = 0;
		to->site[i].cpu_total_ns = to->site[i].bytes = 0;
		to->n_sites++;
	}
	to->site[i].calls += e->calls;
	to->site[i].wall_total_ns += e->wall_total_ns;
	to->site[i].cpu_total_ns += e->cpu_total_ns;
	to->site[i].bytes += e->bytes;
}

static void merge_slot(struct pl_snapshot *to, const struct slot *sl)
{
	unsigned i;

	for (i = 0; i < PL_MAX_STAGES; i++)
		add_stage(&to->stage[i], &sl->stage[i]);
	for (i = 0; i < PL_MAX_SITES; i++) {
		if (sl->site[i].addr)
			merge_site(to, &sl->site[i]);
	}
	to->site_overflow_calls += sl->site_overflow_calls;
}

static int thread_alive(int32_t tid)
{
	return syscall(SYS_tgkill, getpid(), tid, 0) == 0 || errno != ESRCH;
}

/* Copy a slot consistently. Returns 0, or -ESRCH when its owner died in the
 * middle of an update (the copy is then not to be trusted). */
static int read_slot(struct slot *sl, struct slot *copy)
{
	unsigned tries = 0;

	for (;;) {
		uint32_t s1 = __atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE), s2;

		if (!(s1 & 1)) {
			memcpy(copy, sl, sizeof(*copy));
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			s2 = __atomic_load_n(&sl->seq, __ATOMIC_RELAXED);
			if (s1 == s2)
				return 0;
		} else if (!thread_alive(sl->tid)) {
			memcpy(copy, sl, sizeof(*copy));
			return -ESRCH;
		}
		/* the writer was preempted inside its few-instruction update */
		if (++tries < 100) {
			sched_yield();
		} else {
			struct timespec ms = { 0, 1000000 };

			nanosleep(&ms, NULL);
		}
	}
}

void pl__stats_collect(struct pl_snapshot *out)
{
	static struct slot copy; /* the reporter is one thread */
	uint32_t i, high = __atomic_load_n(&slots_high, __ATOMIC_ACQUIRE);
	unsigned live = 0;

	*out = retired;
	for (i = 0; i < high; i++) {
		struct slot *sl = &slots[i];
		int dead;

		if (__atomic_load_n(&sl->state, __ATOMIC_ACQUIRE) != SLOT_OWNED)
			continue;
		dead = !thread_alive(sl->tid);
		if (read_slot(sl, &copy) < 0) {
			unsigned k;

			for (k = 0; k < PL_MAX_STAGES; k++)
				out->dropped_calls += copy.stage[k].calls;
		} else if (dead) {
			merge_slot(&retired, &copy);
			merge_slot(out, &copy);
		} else {
			merge_slot(out, &copy);
			live++;
		}
		if (dead) {
			memset((char *)sl + offsetof(struct slot, seq), 0,
			       sizeof(*sl) - offsetof(struct slot, seq));
			__atomic_store_n(&sl->state, SLOT_FREE, __ATOMIC_RELEASE);
		}
	}
	out->live_threads = live;
	out->dropped_calls += __atomic_load_n(&dropped_calls, __ATOMIC_RELAXED);
}

void pl__stats_reset_after_fork(void)
{
	uint32_t high = __atomic_load_n(&slots_high, __ATOMIC_RELAXED);

	if (slots)
		memset(slots, 0, high * sizeof(slots[0]));
	slots_high = 0;
	dropped_calls = 0;
	memset(&retired, 0, sizeof(retired));
	tls_slot = NULL;
	tls_busy = 0;
	tls_claim_backoff = 0;
}
