/* The D watch (dstate_watch.h): which of its two ways is taken, and the
 * switch watch itself, a BPF program of 19 instructions assembled here (no
 * compiler for BPF is needed to build perflink) and the reader of its ring
 * buffer. The scan is dstate_scan.c.
 *
 * The program runs at every context switch of the machine, so it is kept to
 * the least: sched_switch's fourth argument is the state the task leaves
 * the CPU in; D is TASK_UNINTERRUPTIBLE (2) without TASK_NOLOAD (0x400, an
 * idle kernel thread, shown as I), whatever else is set (TASK_KILLABLE
 * shows as D too). At the tracepoint the current task is still the one
 * switched out, so its tgid and pid are bpf_get_current_pid_tgid's; only a
 * leader is noted, as /proc/PID/stat shows the leader's state. Its cost is
 * not the tracer's CPU time but the switching tasks': bench/tracer_cost.sh
 * adds the kernel's count of it (pl__dwatch_run_ns, which itself adds two
 * clock reads a run) to perflink's, 40-75 us a tick on the shared test VM
 * at load average 4. */
#include "dstate_watch.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpf_asm.h"
#include "clock.h"
#include "log.h"
#include "dstate_scan.h"
#include "probe.h"

#define RING_BYTES (64 << 10) /* 4096 notes: a tick of a busy fsync loop is ~100 */
#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_NOLOAD 0x400
#define PID_NS_INIT_INO 0xEFFFFFFCu /* PROC_PID_INIT_INO */
/* What the switch watch adds to a context switch: a pipe ping-pong between
 * two processes on one core of the test VM took 5,250-5,590 ns a round
 * trip with it against 4,990-5,110 without (the raw tracepoint's dispatch
 * and a retpoline call, not the program's 4 instructions). Where a call is
 * cheaper (no retpolines) the scan is taken a little early, no more. */
#define SWITCH_COST_NS 130
/* Hysteresis: the scan as soon as the switch watch would cost half again
 * as much; the switch watch again only when it would have cost under half
 * as much at CALM_STEERS steers in a row. A dd-and-fsync load switches in
 * bursts (its rounds), and each change costs 100-250 us of CPU (a
 * tracepoint attached or detached), and an attach soon after a detach
 * waits a grace period (8-16 ms here). */
#define TO_SCAN_NUM 3
#define TO_SCAN_DEN 2
#define TO_SWITCH_NUM 1
#define TO_SWITCH_DEN 2
#define CALM_STEERS 3
/* With the switch watch, one scan every this many steers keeps the scans'
 * cost current (a first one, just after start, costs several times what
 * the next do); its pids go with the notes. */
#define REFRESH_STEERS 5
#define SCAN_TIMED_EVERY 4

/* The program, for the ring buffer map_fd. */
static size_t assemble(struct bpf_insn *p, int map_fd)
{
	size_t n = 0;

	p[n++] = pl__insn(BPF_ALU64 | BPF_MOV | BPF_X, 6, 1, 0, 0);      /* r6 = ctx (u64 args[]) */
	p[n++] = pl__insn(BPF_LDX | BPF_MEM | BPF_DW, 2, 6, 3 * 8, 0);   /* r2 = prev_state */
	p[n++] = pl__insn(BPF_ALU64 | BPF_AND | BPF_K, 2, 0, 0, TASK_UNINTERRUPTIBLE | TASK_NOLOAD);
	p[n++] = pl__insn(BPF_JMP | BPF_JNE | BPF_K, 2, 0, 13, TASK_UNINTERRUPTIBLE); /* not D: out */
	p[n++] = pl__insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_pid_tgid);
	p[n++] = pl__insn(BPF_ALU64 | BPF_MOV | BPF_X, 1, 0, 0, 0);
	p[n++] = pl__insn(BPF_ALU64 | BPF_RSH | BPF_K, 1, 0, 0, 32);     /* r1 = tgid */
	p[n++] = pl__insn(BPF_ALU | BPF_MOV | BPF_X, 0, 0, 0, 0);        /* w0 = pid (zero-extends) */
	p[n++] = pl__insn(BPF_JMP | BPF_JNE | BPF_X, 0, 1, 8, 0);        /* not a leader: out */
	p[n++] = pl__insn(BPF_STX | BPF_MEM | BPF_DW, 10, 1, -8, 0);     /* the note: the tgid */
	p[n++] = pl__insn(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, map_fd);
	p[n++] = pl__insn(0, 0, 0, 0, 0);                                /* ld_imm64's upper half */
	p[n++] = pl__insn(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
	p[n++] = pl__insn(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -8);
	p[n++] = pl__insn(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 8);
	p[n++] = pl__insn(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, BPF_RB_NO_WAKEUP); /* never polled */
	/* full: the note is lost, which the reader sees by the ring's fill */
	p[n++] = pl__insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_output);
	p[n++] = pl__insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);     /* out: */
	p[n++] = pl__insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return n;
}

/* The program sees pids of the initial pid namespace only. */
static bool in_init_pid_ns(void)
{
	char link[64];
	ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);
	char want[32];

	if (n <= 0)
		return false;
	link[n] = '\0';
	snprintf(want, sizeof(want), "pid:[%u]", PID_NS_INIT_INO);
	return strcmp(link, want) == 0;
}

static int load_switch(struct pl_dwatch *w)
{
	struct bpf_insn prog[24];
	union bpf_attr a;
	size_t n = assemble(prog, w->map_fd);

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT;
	a.insns = (uint64_t)(uintptr_t)prog;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)"GPL"; /* none of its helpers asks for it */
	memcpy(a.prog_name, "pl_dstate", sizeof("pl_dstate"));
	w->prog_fd = (int)pl__sys_bpf(BPF_PROG_LOAD, &a);
	return w->prog_fd < 0 ? -errno : 0;
}

static int attach_switch(struct pl_dwatch *w)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.raw_tracepoint.name = (uint64_t)(uintptr_t)"sched_switch";
	a.raw_tracepoint.prog_fd = (uint32_t)w->prog_fd;
	/* EINVAL before 5.18: the tracepoint had no fourth argument */
	w->link_fd = (int)pl__sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &a);
	return w->link_fd < 0 ? -errno : 0;
}

/* Closing the link detaches the program; the program and ring stay. */
static void detach_switch(struct pl_dwatch *w)
{
	if (w->link_fd >= 0)
		close(w->link_fd);
	w->link_fd = -1;
}

static int map_ring(struct pl_dwatch *w)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_RINGBUF;
	a.max_entries = RING_BYTES;
	w->map_fd = (int)pl__sys_bpf(BPF_MAP_CREATE, &a);
	if (w->map_fd < 0)
		return -errno;
	w->page = (size_t)sysconf(_SC_PAGESIZE);
	w->size = RING_BYTES;
	w->cons_page = mmap(NULL, w->page, PROT_READ | PROT_WRITE, MAP_SHARED, w->map_fd, 0);
	if (w->cons_page == MAP_FAILED) {
		w->cons_page = NULL;
		return -errno;
	}
	/* the data is mapped twice in a row, so a note never wraps */
	w->prod_pages = mmap(NULL, w->page + 2 * w->size, PROT_READ, MAP_SHARED, w->map_fd,
			     (off_t)w->page);
	if (w->prod_pages == MAP_FAILED) {
		w->prod_pages = NULL;
		return -errno;
	}
	return 0;
}

/* One scan, its cost kept (a running mean, for pl__dwatch_steer): of each
 * one run beside the switch watch (to measure is what it is for), and of
 * every fourth one run in its stead: the thread's CPU clock is a system
 * call, 1-4 us a read on the test VM when cold, and a steer comes every 10
 * ticks. */
static ssize_t scan(struct pl_dwatch *w, int *out, size_t cap, bool *overflow)
{
	bool timed = w->kind != PL_DWATCH_SCAN || w->scans % SCAN_TIMED_EVERY == 0;
	uint64_t t0 = timed ? pl__thread_cpu_ns() : 0;
	bool walked = true;
	ssize_t n = pl__dscan_read(&w->scan, w->cand, w->n_cand, w->ran_pids, w->n_ran, w->ran, out,
				   cap, overflow, &walked);

	if (timed) {
		uint64_t d = pl__thread_cpu_ns() - t0;

		w->scan_ns = w->scan_ns ? (3 * w->scan_ns + d) / 4 : d;
	}
	w->scans++;
	w->walks += n >= 0 && walked;
	w->ran_valid = n >= 0 && w->scan.ran_check;
	return n;
}

void pl__dwatch_ran_pids(struct pl_dwatch *w, const int *pids, size_t n)
{
	if (n > PL_DSCAN_RAN_MAX)
		n = PL_DSCAN_RAN_MAX;
	if (n > 0)
		memcpy(w->ran_pids, pids, n * sizeof(*pids));
	w->n_ran = n;
}

ssize_t pl__dwatch_list_leaders(struct pl_dwatch *w, int *out, size_t cap, bool *overflow)
{
	*overflow = false;
	if (!w->on || w->scan.prog_fd < 0)
		return -ENOSYS;
	return pl__dscan_list_all(&w->scan, out, cap, overflow);
}

bool pl__dwatch_walk_run(const struct pl_dwatch *w, size_t i, uint64_t *run_ns, uint64_t *pcount)
{
	return w->scan.prog_fd >= 0 && pl__dscan_walk_run(&w->scan, i, run_ns, pcount);
}

void pl__dwatch_candidates(struct pl_dwatch *w, const int *pids, size_t n)
{
	if (n > PL_DSCAN_CAND_MAX)
		n = PL_DSCAN_CAND_MAX + 1; /* more than the gate checks: the walk */
	else if (n > 0)
		memcpy(w->cand, pids, n * sizeof(*pids));
	w->n_cand = n;
}

const char *pl__dwatch_kind_name(const struct pl_dwatch *w)
{
	return w->kind == PL_DWATCH_SCAN ? "scan" : w->kind == PL_DWATCH_SWITCH ? "switch" : "off";
}

/* The scan, checked with one run, which also gives its first cost. */
static int open_scan(struct pl_dwatch *w)
{
	int probe[4];
	bool overflow;
	ssize_t n;
	int err;

	if (pl__probe_forced(PL_PROBE_TASK_ITER))
		return -ENOSYS;
	if ((err = pl__dscan_open(&w->scan)) < 0)
		return err;
	if ((n = scan(w, probe, 4, &overflow)) < 0)
		return (int)n;
	/* that first one costs more than those at a tick do (cold, just
	 * after the BTF was read; one run back to back costs less): the
	 * first steer asks for a scan at a tick to measure */
	w->since_scan = REFRESH_STEERS - 1;
	return 0;
}

static int open_switch(struct pl_dwatch *w, bool timed)
{
	int err;

	if ((err = map_ring(w)) < 0 || (err = load_switch(w)) < 0 || (err = attach_switch(w)) < 0)
		return err;
	if (timed) {
		union bpf_attr a;

		memset(&a, 0, sizeof(a));
		a.enable_stats.type = BPF_STATS_RUN_TIME;
		w->stats_fd = (int)pl__sys_bpf(BPF_ENABLE_STATS, &a); /* -1: untimed */
	}
	return 0;
}

static void close_switch(struct pl_dwatch *w)
{
	/* the link first: closing it detaches the program */
	int *fds[] = { &w->link_fd, &w->prog_fd, &w->map_fd, &w->stats_fd };

	if (w->prod_pages)
		munmap(w->prod_pages, w->page + 2 * w->size);
	if (w->cons_page)
		munmap(w->cons_page, w->page);
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	w->prod_pages = w->cons_page = NULL;
}

int pl__dwatch_open(struct pl_dwatch *w, bool timed)
{
	int err, scan_err = -ENOSYS;

	memset(w, 0, sizeof(*w));
	w->map_fd = w->prog_fd = w->link_fd = w->stats_fd = -1;
	pl__dscan_init(&w->scan);
	if (pl__probe_forced(PL_PROBE_SCHED_BPF)) {
		err = -ENOSYS;
	} else if (!in_init_pid_ns()) {
		err = -EXDEV;
	} else {
		if ((scan_err = open_scan(w)) < 0) {
			pl__dscan_close(&w->scan);
			pl__probe_absent(PL_PROBE_TASK_ITER, false,
					 "no BPF scan of the process list (%s): the D watch is the one "
					 "on sched_switch alone, which costs every context switch",
					 strerror(-scan_err));
		} else {
			pl__probe_present(PL_PROBE_TASK_ITER);
		}
		/* the switch watch first where there are both: it costs less
		 * until the machine switches often (pl__dwatch_steer) */
		if ((err = open_switch(w, timed)) == 0) {
			w->kind = PL_DWATCH_SWITCH;
		} else {
			close_switch(w);
			if (scan_err == 0)
				w->kind = PL_DWATCH_SCAN;
		}
		if (w->kind != PL_DWATCH_OFF) {
			w->on = true;
			pl__probe_present(PL_PROBE_SCHED_BPF);
			return 0;
		}
	}
	pl__dwatch_close(w);
	pl__probe_absent(PL_PROBE_SCHED_BPF, false,
			 "no BPF watch of D states (%s): sleeping processes are read in turns, "
			 "a D state that is no I/O wait within a second",
			 err == -EXDEV ? "not in the initial pid namespace" : strerror(-err));
	return err;
}

void pl__dwatch_close(struct pl_dwatch *w)
{
	close_switch(w);
	pl__dscan_close(&w->scan);
	w->on = false;
	w->kind = PL_DWATCH_OFF;
}

bool pl__dwatch_steerable(const struct pl_dwatch *w)
{
	return w->on && w->scan.prog_fd >= 0 && w->prog_fd >= 0;
}

void pl__dwatch_steer(struct pl_dwatch *w, uint64_t switches, uint64_t ticks)
{
	uint64_t switch_ns;

	if (w->on && w->kind == PL_DWATCH_SWITCH) {
		w->attached_switches += switches;
		w->attached_ticks += ticks;
	}
	if (!pl__dwatch_steerable(w) || ticks == 0)
		return;
	switch_ns = switches / ticks * SWITCH_COST_NS;
	if (w->kind == PL_DWATCH_SWITCH && ++w->since_scan >= REFRESH_STEERS) {
		w->scan_next = true;
		w->since_scan = 0;
	}
	if (w->kind == PL_DWATCH_SWITCH &&
	    switch_ns * TO_SCAN_DEN > w->scan_ns * TO_SCAN_NUM) {
		detach_switch(w);
		w->kind = PL_DWATCH_SCAN;
		w->steers++;
	} else if (w->kind == PL_DWATCH_SCAN) {
		w->calm = switch_ns * TO_SWITCH_DEN < w->scan_ns * TO_SWITCH_NUM ? w->calm + 1 : 0;
		if (w->calm >= CALM_STEERS && attach_switch(w) == 0) {
			/* what went into D before the attach is in no note: the
			 * next drain scans as well */
			w->kind = PL_DWATCH_SWITCH;
			w->scan_next = true;
			w->steers++;
			w->calm = 0;
			w->since_scan = 0;
		}
	}
}

/* The ring's notes, from cons up to what the program has written. */
static size_t drain_ring(struct pl_dwatch *w, int *out, size_t cap, bool *overflow)
{
	_Atomic uint64_t *cons_pos = w->cons_page, *prod_pos = w->prod_pages;
	const unsigned char *data = (const unsigned char *)w->prod_pages + w->page;
	uint64_t cons, prod;
	size_t n = 0;

	cons = atomic_load_explicit(cons_pos, memory_order_acquire);
	prod = atomic_load_explicit(prod_pos, memory_order_acquire);
	/* within two notes of full: one may have been refused */
	if (prod - cons > w->size - 2 * (BPF_RINGBUF_HDR_SZ + 8))
		*overflow = true;
	while (cons < prod) {
		const _Atomic uint32_t *hdr = (const void *)(data + (cons & (w->size - 1)));
		uint32_t len = atomic_load_explicit(hdr, memory_order_acquire);
		uint64_t note;

		if (len & BPF_RINGBUF_BUSY_BIT)
			break; /* being written: the next drain takes it */
		if (!(len & BPF_RINGBUF_DISCARD_BIT) && (len & 0x3fffffffu) == sizeof(note)) {
			memcpy(&note, (const unsigned char *)hdr + BPF_RINGBUF_HDR_SZ, sizeof(note));
			if (n > 0 && out[n - 1] == (int)note)
				; /* the same process again: one read answers both */
			else if (n < cap)
				out[n++] = (int)note;
			else
				*overflow = true;
		}
		cons += (BPF_RINGBUF_HDR_SZ + (len & 0x3fffffffu) + 7) & ~(uint64_t)7;
	}
	atomic_store_explicit(cons_pos, cons, memory_order_release);
	return n;
}

size_t pl__dwatch_drain(struct pl_dwatch *w, int *out, size_t cap, bool *overflow)
{
	size_t n = 0;

	*overflow = false;
	w->ran_valid = false;
	if (!w->on)
		return 0;
	if (w->kind == PL_DWATCH_SWITCH) {
		n = drain_ring(w, out, cap, overflow);
	} else if (w->cons_page) {
		/* notes left from before the change to the scan */
		_Atomic uint64_t *cons_pos = w->cons_page, *prod_pos = w->prod_pages;

		atomic_store_explicit(cons_pos, atomic_load_explicit(prod_pos, memory_order_acquire),
				      memory_order_release);
	}
	if (w->kind == PL_DWATCH_SCAN || w->scan_next) {
		bool more = false;
		ssize_t got;

		w->scan_next = false;
		got = scan(w, out + n, cap - n, &more);
		if (got < 0 || more)
			*overflow = true; /* read them all this tick */
		if (got > 0)
			n += (size_t)got;
	}
	return n;
}

uint64_t pl__dwatch_run_ns(const struct pl_dwatch *w)
{
	struct bpf_prog_info info;
	union bpf_attr a;

	if (w->stats_fd < 0 || w->prog_fd < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)w->prog_fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	if (pl__sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a) < 0)
		return 0;
	return info.run_time_ns;
}
