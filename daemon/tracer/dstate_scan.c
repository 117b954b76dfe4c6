/* The D scan (dstate_watch.h): which thread group leaders are in D now,
 * asked of the kernel once a tick by one BPF program run, that walks the
 * process list with the kernel's open-coded task iterator (the kfuncs
 * bpf_iter_task_new/next/destroy, Linux 6.7) and writes the tgid of each
 * leader in D into an array map the tracer has mapped.
 *
 * Why not the sched_switch program: that one runs at every context switch
 * of the machine, ~130 ns each on the test VM (the raw tracepoint's
 * dispatch and a retpoline call, not its 4 instructions), which under a
 * dd-and-fsync load (15,000-24,000 switches a second) was 200-280 us a
 * tick, more than the rest of the tracer's tick. The scan costs what a
 * walk of the process list costs, a cache miss or two a process when it
 * runs once a tick (55-90 us at 290 processes on the test VM, 2 us when
 * run back to back), whatever the load, in the tracer's own CPU time. So
 * it is taken where it is the cheaper (dstate_watch.c, pl__dwatch_steer).
 *
 * What it gives up: a leader that went into D and out again between two
 * ticks is not named. The CSV's rows of unwatched processes are D states
 * at a tick (the Python tool's), and every D state that spans a tick is
 * seen, so a D state of 200 ms or more is, at 10 Hz; the writers read for
 * the bully's history are read whole (stat too), since their block-I/O
 * delay may have grown unseen (tracer_procs.c, io_tells_all).
 *
 * The gate: most ticks under a stall load, the leaders in D are the ones
 * the tracer already reads (a writer throttled in balance_dirty_pages, a
 * victim in its fsync). So a run first sums the runqueues' count of tasks
 * blocked in D (nr_uninterruptible, threads included, what the load
 * average counts) and looks up the candidates the caller gives (by pid,
 * bpf_task_from_pid): when those in D and off their CPU are as many as the
 * runqueues count, they are all there are, and the walk is skipped. On the
 * test VM under the bench's stall load, 87-93% of the runs: the d_watch
 * phase went from 58 to 23 us a tick (what is left is mostly the bpf(2)
 * call itself, ~15 us with cold caches, as an empty program's run costs).
 * What it gives up: a task shows D from the moment it sets its state, and
 * is counted blocked only once it is off its runqueue; one preempted in
 * between (a vfork parent, by the child it has just woken) is named at
 * the first run after it sleeps, the next tick at worst. The runqueues are
 * reached from a task (se.cfs_rq->tg->cfs_rq[cpu]->rq: a kernel with
 * CONFIG_FAIR_GROUP_SCHED), as their per-CPU symbol is given to BPF only
 * by kernels built with CONFIG_KALLSYMS_ALL, which the test VM's is not.
 * A kernel without them, or a verifier that refuses the gate, has the walk
 * every time. The same run reads, by pid, the run time of the leaders the
 * caller asks for (the watched ones, checked every tick for whether they
 * ran): a look-up each in a run already made, where a read of a process's
 * CPU clock is a system call. For the run time alone, asking for the others
 * a tick reads as well (those in their slice, the writers) cost more than
 * their clock reads saved: stall load, two builds in turn, 0.348 and 0.363
 * ms a tick against 0.322 and 0.319. With the fields of their stat and io
 * (dstate_fields.h), read only of those that ran since the caller's last
 * reading, it saves those two reads: the caller asks for the watched and
 * for the others it will read again (not those of a slice, whose tasks are
 * cold: ~1 us a look-up).
 *
 * The program is a syscall one (BPF_PROG_TYPE_SYSCALL), run on demand by
 * one bpf(BPF_PROG_TEST_RUN): a task iterator program would cost a new
 * file at each run (BPF_ITER_CREATE, a seq_file read, a close: 20-35 us a
 * tick under the stall load, measured with perf). Syscall programs sleep,
 * so the walk is inside bpf_rcu_read_lock/unlock (the iterator asks for
 * RCU). Offsets of the fields it reads (task_struct's __state and tgid)
 * and the kfuncs' ids come from the kernel's BTF (btf_find.h). */
#include "dstate_scan.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpf_asm.h"
#include "btf_find.h"
#include "dstate_fields.h"
#include "procfile.h"

#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_NOLOAD 0x400
#define ITER_STACK (-24) /* struct bpf_iter_task: 3 u64, 8-aligned */
#define READ_STACK (-32) /* what bpf_probe_read_kernel reads into */
#define SIGNAL_STACK (-40) /* a task's signal_struct, kept across two reads */
#define CFS_RQS_STACK (-48) /* the root group's runqueue per CPU (tg->cfs_rq) */
#define COUNT_STACK (-56)   /* the gate's second count, summed */
#define CPUS_MAX 1024    /* more possible CPUs: no gate */
/* The map's one value, in 32-bit words: how many named, whether there were
 * more, whether the list was walked (else the candidates in D are the
 * answer), how many candidates, the gate's two counts (for a look at the
 * map with bpftool), whether every leader is asked for, how many run times
 * to read, the candidates, the pids whose run time to read and what was
 * read (two u64 each), then the tgids named. */
#define W_COUNT 0
#define W_OVERFLOW 1
#define W_WALKED 2
#define W_NCAND 3
#define W_BLOCKED 4 /* the gate's count of tasks blocked in D, */
#define W_COUNTED 5 /* and of candidates blocked in D */
#define W_ALL 6     /* in: 1 names every leader, in D or not */
#define W_NRAN 7    /* in: how many leaders' run time to read */
#define W_CAND 8
#define W_RANPID (W_CAND + PL_DSCAN_CAND_MAX)
#define W_RAN (W_RANPID + PL_DSCAN_RAN_MAX) /* a record a leader (dstate_fields.h) */
#define REC_BYTES (8 * PL_REC_WORDS)
#define W_TGIDS (W_RAN + REC_BYTES / 4 * PL_DSCAN_RAN_MAX)
#define ROOM 4096
/* then, for each tgid named, its leader's run time and pcount (two u64:
 * the walk asked for every leader settles their slices, dstate_scan.h) */
#define W_RUNS (W_TGIDS + ROOM)
#define VALUE_SIZE (4 * W_RUNS + 16 * ROOM)
_Static_assert(4 * W_RUNS + 8 <= INT16_MAX, "a store's offset is 16 bits");

struct scan_btf {
	int k_new, k_next, k_destroy, k_lock, k_unlock;
	uint32_t state_off, tgid_off;
	/* the gate: */
	bool gate;
	int k_from_pid, k_release;
	uint32_t on_cpu_off;                       /* 0: none (a kernel without SMP) */
	uint32_t se_cfs_rq_off, cfs_rq_tg_off, tg_cfs_rq_off, cfs_rq_rq_off, nr_unint_off;
	uint32_t nr_unint_size;
	unsigned cpus;                             /* possible CPUs: tg->cfs_rq's length */
	/* the run-time read: */
	bool ran_check;
	uint32_t run_off, pcount_off;
	/* and the stat's and io's fields with it */
	bool fields;
	struct pl_dscan_layout layout;
};

/* nr_cpu_ids: one more than the last CPU of /sys/devices/system/cpu/possible
 * ("0-3", "0"), or 0. */
static unsigned possible_cpus(void)
{
	char buf[256];
	const char *last;
	ssize_t n;
	unsigned long v;
	char *end;
	int fd = open("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	last = buf;
	for (const char *c = buf; *c; c++) {
		if (*c == ',' || *c == '-')
			last = c + 1;
	}
	errno = 0;
	v = strtoul(last, &end, 10);
	if (errno || end == last || v >= CPUS_MAX)
		return 0;
	return (unsigned)v + 1;
}

/* The gate's types: the runqueues' count of tasks blocked in D, reached
 * from a task through its fair-class runqueue (se.cfs_rq), the group that
 * runqueue is of (tg: the root group, for the first CPU's idle task, where
 * the walk starts), the group's runqueue on each CPU (tg->cfs_rq[cpu]) and
 * the CPU's runqueue (->rq): a kernel with CONFIG_FAIR_GROUP_SCHED. The
 * per-CPU variable itself (runqueues) needs the kernel's symbols, which
 * kernels built without CONFIG_KALLSYMS_ALL (the test VM's) do not give a
 * BPF program. false: no gate, a walk every time. */
static bool find_gate_btf(const struct pl_btf *b, struct scan_btf *s, int task)
{
	uint32_t size;
	int cfs_rq = pl__btf_find(b, "cfs_rq", PL_BTF_STRUCT);
	int tg = pl__btf_find(b, "task_group", PL_BTF_STRUCT);
	int rq = pl__btf_find(b, "rq", PL_BTF_STRUCT);

	s->k_from_pid = pl__btf_find(b, "bpf_task_from_pid", PL_BTF_FUNC);
	s->k_release = pl__btf_find(b, "bpf_task_release", PL_BTF_FUNC);
	if (!pl__btf_member_sized(b, task, "on_cpu", 4, &s->on_cpu_off))
		s->on_cpu_off = 0;
	if (s->k_from_pid <= 0 || s->k_release <= 0 ||
	    !pl__btf_member_sized(b, task, "se.cfs_rq", sizeof(void *), &s->se_cfs_rq_off) ||
	    !pl__btf_member_sized(b, cfs_rq, "tg", sizeof(void *), &s->cfs_rq_tg_off) ||
	    !pl__btf_member_sized(b, tg, "cfs_rq", sizeof(void *), &s->tg_cfs_rq_off) ||
	    !pl__btf_member_sized(b, cfs_rq, "rq", sizeof(void *), &s->cfs_rq_rq_off) ||
	    pl__btf_member(b, rq, "nr_uninterruptible", &s->nr_unint_off, &size) < 0 ||
	    (size != 4 && size != 8))
		return false;
	s->nr_unint_size = size;
	/* the run time, with the gate's look-ups (CONFIG_SCHED_INFO) */
	s->ran_check = pl__btf_member_sized(b, task, "se.sum_exec_runtime", 8, &s->run_off) &&
		       pl__btf_member_sized(b, task, "sched_info.pcount", 8, &s->pcount_off);
	s->fields = s->ran_check && pl__dscan_fields_btf(b, task, &s->layout);
	return (s->cpus = possible_cpus()) > 0;
}

/* -ENOENT: a kernel without the task iterator kfuncs (before 6.7) or
 * whose types are not as this program reads them. Each name is looked up
 * once: a look-up walks the ~125,000 types of vmlinux. */
static int find_btf(struct scan_btf *s)
{
	struct pl_btf b;
	int err, task;

	memset(s, 0, sizeof(*s));
	if ((err = pl__btf_load(&b, "/sys/kernel/btf/vmlinux")) < 0)
		return err;
	s->k_new = pl__btf_find(&b, "bpf_iter_task_new", PL_BTF_FUNC);
	s->k_next = pl__btf_find(&b, "bpf_iter_task_next", PL_BTF_FUNC);
	s->k_destroy = pl__btf_find(&b, "bpf_iter_task_destroy", PL_BTF_FUNC);
	s->k_lock = pl__btf_find(&b, "bpf_rcu_read_lock", PL_BTF_FUNC);
	s->k_unlock = pl__btf_find(&b, "bpf_rcu_read_unlock", PL_BTF_FUNC);
	task = pl__btf_find(&b, "task_struct", PL_BTF_STRUCT);
	err = s->k_new > 0 && s->k_next > 0 && s->k_destroy > 0 && s->k_lock > 0 &&
			      s->k_unlock > 0 &&
			      pl__btf_member_sized(&b, task, "__state", 4, &s->state_off) &&
			      pl__btf_member_sized(&b, task, "tgid", 4, &s->tgid_off)
		      ? 0
		      : -ENOENT;
	if (err == 0)
		s->gate = find_gate_btf(&b, s, task);
	pl__btf_free(&b);
	return err;
}

static int16_t off16(uint32_t v)
{
	return v > INT16_MAX ? INT16_MAX : (int16_t)v; /* the verifier refuses a wrong one */
}

/* An assembler with forward and backward jumps to labels, patched at the
 * end. */
enum label {
	LOOP, ROOM_LEFT, DONE, CPU_LOOP, CPU_NEXT, CPU_DONE, CAND_LOOP, CAND_NEXT, RELEASE,
	CAND_DONE, NAME, RAN_LOOP, RAN_NEXT, RAN_DONE, RAN_FIELDS, RAN_RELEASE, CPU_LOOP2,
	CPU_NEXT2, CPU_DONE2, COUNT_MIN, N_LABELS
};
struct prog {
	struct bpf_insn insn[400];
	size_t n, n_jumps;
	size_t at[N_LABELS], jump_insn[40];
	enum label jump_to[40];
	bool cut;
};

#define PROG_ROOM (sizeof(((struct prog *)0)->insn) / sizeof(struct bpf_insn))
#define JUMPS_ROOM (sizeof(((struct prog *)0)->jump_insn) / sizeof(size_t))

/* Past the room, the program is cut (and refused at load: no exit). */
static void op(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	if (p->n < PROG_ROOM)
		p->insn[p->n++] = pl__insn(code, dst, src, off, imm);
	else
		p->cut = true;
}

/* A branch to a label: on dst against imm, or against register src with
 * BPF_X in code. */
static void branch(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int32_t imm,
		   enum label to)
{
	if (p->n_jumps == JUMPS_ROOM) {
		p->cut = true;
		return;
	}
	p->jump_insn[p->n_jumps] = p->n;
	p->jump_to[p->n_jumps++] = to;
	op(p, BPF_JMP | code, dst, src, 0, imm);
}

static void jump(struct prog *p, uint8_t code, uint8_t dst, int32_t imm, enum label to)
{
	branch(p, code, dst, 0, imm, to);
}

/* the same, comparing dst with register src */
static void jump_reg(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, enum label to)
{
	branch(p, code | BPF_X, dst, src, 0, to);
}

static void kfunc(struct prog *p, int id)
{
	op(p, BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, id);
}

/* r1 = the iterator on the stack */
static void iter_arg(struct prog *p)
{
	op(p, BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0);
	op(p, BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, ITER_STACK);
}

/* dst = the size bytes at kernel address src + add (0 where the read
 * faults), through bpf_probe_read_kernel: the pointers past the task are
 * not typed for a direct load (tg->cfs_rq is an array of pointers).
 * Clobbers r0-r5. */
static void kread(struct prog *p, uint8_t dst, uint8_t src, uint32_t add, uint32_t size)
{
	op(p, BPF_ALU64 | BPF_MOV | BPF_X, 3, src, 0, 0);
	op(p, BPF_ALU64 | BPF_ADD | BPF_K, 3, 0, 0, (int32_t)add);
	op(p, BPF_ST | BPF_MEM | BPF_DW, 10, 0, READ_STACK, 0);
	op(p, BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0);
	op(p, BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, READ_STACK);
	op(p, BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, (int32_t)size);
	op(p, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_probe_read_kernel);
	op(p, BPF_LDX | BPF_MEM | (size == 4 ? BPF_W : BPF_DW), dst, 10, READ_STACK, 0);
}

/* tgids[count] = register src, count + 1 into the value (r6): r3 holds the
 * count, checked under ROOM (which bounds the store for the verifier).
 * Clobbers r4. */
static void put_tgid(struct prog *p, uint8_t src)
{
	op(p, BPF_ALU64 | BPF_MOV | BPF_X, 4, 3, 0, 0);
	op(p, BPF_ALU64 | BPF_LSH | BPF_K, 4, 0, 0, 2);
	op(p, BPF_ALU64 | BPF_ADD | BPF_X, 4, 6, 0, 0);
	op(p, BPF_STX | BPF_MEM | BPF_W, 4, src, 4 * W_TGIDS, 0);
	op(p, BPF_ALU64 | BPF_ADD | BPF_K, 3, 0, 0, 1);
	op(p, BPF_STX | BPF_MEM | BPF_W, 6, 3, 4 * W_COUNT, 0);
}

/* A loop over pids given in the value (r6): label top here; done when r7
 * reaches max or the count at word n_word; else r1 = the pid at word
 * pids_word + r7. */
static void next_pid(struct prog *p, enum label top, int32_t max, int16_t n_word,
		     int16_t pids_word, enum label done)
{
	p->at[top] = p->n;
	jump(p, BPF_JGE | BPF_K, 7, max, done);
	op(p, BPF_LDX | BPF_MEM | BPF_W, 1, 6, (int16_t)(4 * n_word), 0);
	jump_reg(p, BPF_JGE, 7, 1, done);
	op(p, BPF_ALU64 | BPF_MOV | BPF_X, 1, 7, 0, 0);
	op(p, BPF_ALU64 | BPF_LSH | BPF_K, 1, 0, 0, 2);
	op(p, BPF_ALU64 | BPF_ADD | BPF_X, 1, 6, 0, 0);
	op(p, BPF_LDX | BPF_MEM | BPF_W, 1, 1, (int16_t)(4 * pids_word), 0);
}

/* r2 = the record of the leader at index r7 (less W_RAN, which the
 * stores add). */
static void rec_addr(struct prog *p, uint8_t reg)
{
	op(p, BPF_ALU64 | BPF_MOV | BPF_X, reg, 7, 0, 0);
	op(p, BPF_ALU64 | BPF_MUL | BPF_K, reg, 0, 0, REC_BYTES);
	op(p, BPF_ALU64 | BPF_ADD | BPF_X, reg, 6, 0, 0);
}

/* Store register src (size 4 or 8) at word (64-bit) w, plus 4 for the high
 * half, of the record of index r7. Clobbers r2. */
static void rec_store(struct prog *p, uint8_t src, int w, int half, uint32_t size)
{
	rec_addr(p, 2);
	op(p, BPF_STX | BPF_MEM | (size == 4 ? BPF_W : BPF_DW), 2, src,
	   (int16_t)(4 * W_RAN + 8 * w + 4 * half), 0);
}

/* size bytes at kernel address r(src) + add into the record's word w,
 * through bpf_probe_read_kernel (zeroed where it faults). Clobbers r0-r5. */
static void rec_read(struct prog *p, int w, uint8_t src, uint32_t add, uint32_t size)
{
	op(p, BPF_ALU64 | BPF_MOV | BPF_X, 3, src, 0, 0);
	op(p, BPF_ALU64 | BPF_ADD | BPF_K, 3, 0, 0, (int32_t)add);
	rec_addr(p, 1);
	op(p, BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, 4 * W_RAN + 8 * w);
	op(p, BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, (int32_t)size);
	op(p, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_probe_read_kernel);
}

/* With the run time, what the leader's stat and io would say (the task in
 * r8): its state, flags, ids, start, comm and io counters, its signal's
 * thread count and io, its parent's tgid and its block-I/O delay. */
static void assemble_fields(struct prog *p, const struct scan_btf *s)
{
	const struct pl_dscan_layout *l = &s->layout;

	op(p, BPF_LDX | BPF_MEM | BPF_W, 3, 8, off16(s->state_off), 0);
	rec_store(p, 3, PL_REC_STATE, 0, 4);
	op(p, BPF_LDX | BPF_MEM | BPF_W, 3, 8, off16(l->exit_state_off), 0);
	rec_store(p, 3, PL_REC_STATE, 1, 4);
	op(p, BPF_LDX | BPF_MEM | BPF_W, 3, 8, off16(l->flags_off), 0);
	rec_store(p, 3, PL_REC_FLAGS, 0, 4);
	op(p, BPF_LDX | BPF_MEM | BPF_W, 3, 8, off16(l->pid_off), 0);
	rec_store(p, 3, PL_REC_IDS, 0, 4);
	op(p, BPF_LDX | BPF_MEM | BPF_W, 3, 8, off16(s->tgid_off), 0);
	rec_store(p, 3, PL_REC_IDS, 1, 4);
	op(p, BPF_LDX | BPF_MEM | BPF_DW, 3, 8, off16(l->start_off), 0);
	rec_store(p, 3, PL_REC_START, 0, 8);
	rec_read(p, PL_REC_COMM, 8, l->comm_off, 16);
	rec_read(p, PL_REC_IOAC, 8, l->ioac_off, l->ioac_size);
	kread(p, 0, 8, l->signal_off, 8);
	op(p, BPF_STX | BPF_MEM | BPF_DW, 10, 0, SIGNAL_STACK, 0);
	kread(p, 0, 0, l->nr_threads_off, 4);
	rec_store(p, 0, PL_REC_FLAGS, 1, 4);
	op(p, BPF_LDX | BPF_MEM | BPF_DW, 4, 10, SIGNAL_STACK, 0);
	rec_read(p, PL_REC_SIG_IOAC, 4, l->sig_ioac_off, l->ioac_size);
	kread(p, 0, 8, l->parent_off, 8);
	kread(p, 0, 0, s->tgid_off, 4);
	rec_store(p, 0, PL_REC_PPID, 0, 4);
	kread(p, 0, 8, l->delays_off, 8); /* NULL: the read faults, and gives 0 */
	kread(p, 0, 0, l->blkio_off, 8);
	rec_store(p, 0, PL_REC_BLKIO, 0, 8);
}

/* The run-time read: for each pid asked (W_RANPID), its leader's
 * se.sum_exec_runtime and sched_info.pcount into its record (W_RAN), or a
 * pcount of ~0 where there is no such task; with s->fields, the rest of
 * the record. r7 = the index, r8 = the task; r9 (the gate's count) is
 * kept. */
static void assemble_ran(struct prog *p, const struct scan_btf *s)
{
	op(p, BPF_ALU64 | BPF_MOV | BPF_K, 7, 0, 0, 0);
	next_pid(p, RAN_LOOP, PL_DSCAN_RAN_MAX, W_NRAN, W_RANPID, RAN_DONE);
	kfunc(p, s->k_from_pid);
	rec_addr(p, 2);
	op(p, BPF_ST | BPF_MEM | BPF_DW, 2, 0, 4 * W_RAN + 8 * PL_REC_PCOUNT, -1);
	jump(p, BPF_JEQ | BPF_K, 0, 0, RAN_NEXT);
	op(p, BPF_ALU64 | BPF_MOV | BPF_X, 8, 0, 0, 0);
	op(p, BPF_LDX | BPF_MEM | BPF_DW, 5, 8, off16(s->run_off), 0);
	op(p, BPF_STX | BPF_MEM | BPF_DW, 2, 5, 4 * W_RAN + 8 * PL_REC_RUN, 0);
	op(p, BPF_LDX | BPF_MEM | BPF_DW, 3, 8, off16(s->pcount_off), 0);
	op(p, BPF_STX | BPF_MEM | BPF_DW, 2, 3, 4 * W_RAN + 8 * PL_REC_PCOUNT, 0);
	if (s->fields) {
		/* not run since the caller's reading: its fields are as then */
		op(p, BPF_LDX | BPF_MEM | BPF_DW, 4, 2, 4 * W_RAN + 8 * PL_REC_PREV_PCOUNT, 0);
		jump_reg(p, BPF_JNE, 3, 4, RAN_FIELDS);
		op(p, BPF_LDX | BPF_MEM | BPF_DW, 4, 2, 4 * W_RAN + 8 * PL_REC_PREV_RUN, 0);
		jump_reg(p, BPF_JEQ, 5, 4, RAN_RELEASE);
		p->at[RAN_FIELDS] = p->n;
		assemble_fields(p, s);
	}
	p->at[RAN_RELEASE] = p->n;
	op(p, BPF_ALU64 | BPF_MOV | BPF_X, 1, 8, 0, 0);
	kfunc(p, s->k_release);
	p->at[RAN_NEXT] = p->n;
	op(p, BPF_ALU64 | BPF_ADD | BPF_K, 7, 0, 0, 1);
	jump(p, BPF_JA, 0, 0, RAN_LOOP);
	p->at[RAN_DONE] = p->n;
}

/* r(dst) = the runqueues' count of tasks blocked in D: each possible CPU's
 * root-group runqueue (tg->cfs_rq[cpu], kept at CFS_RQS_STACK), its rq,
 * its nr_uninterruptible, summed at COUNT_STACK. Per CPU the count can go
 * below 0 (blocked on one, woken on another): the sum is right in 32 bits,
 * as the kernel's nr_uninterruptible(), and dst holds it sign-extended.
 * loop, next and done are this copy's labels. Clobbers r0-r5 and r7. */
static void assemble_count(struct prog *p, const struct scan_btf *s, uint8_t dst,
			   enum label loop, enum label next, enum label done)
{
	op(p, BPF_ST | BPF_MEM | BPF_DW, 10, 0, COUNT_STACK, 0);
	op(p, BPF_ALU64 | BPF_MOV | BPF_K, 7, 0, 0, 0);
	p->at[loop] = p->n;
	jump(p, BPF_JGE | BPF_K, 7, (int32_t)s->cpus, done);
	op(p, BPF_LDX | BPF_MEM | BPF_DW, 0, 10, CFS_RQS_STACK, 0);
	op(p, BPF_ALU64 | BPF_MOV | BPF_X, 1, 7, 0, 0);
	op(p, BPF_ALU64 | BPF_LSH | BPF_K, 1, 0, 0, 3);
	op(p, BPF_ALU64 | BPF_ADD | BPF_X, 0, 1, 0, 0);
	kread(p, 0, 0, 0, 8);
	jump(p, BPF_JEQ | BPF_K, 0, 0, next);
	kread(p, 0, 0, s->cfs_rq_rq_off, 8);
	jump(p, BPF_JEQ | BPF_K, 0, 0, next);
	kread(p, 0, 0, s->nr_unint_off, s->nr_unint_size);
	op(p, BPF_LDX | BPF_MEM | BPF_DW, 1, 10, COUNT_STACK, 0);
	op(p, BPF_ALU | BPF_ADD | BPF_X, 1, 0, 0, 0);
	op(p, BPF_STX | BPF_MEM | BPF_DW, 10, 1, COUNT_STACK, 0);
	p->at[next] = p->n;
	op(p, BPF_ALU64 | BPF_ADD | BPF_K, 7, 0, 0, 1);
	jump(p, BPF_JA, 0, 0, loop);
	p->at[done] = p->n;
	op(p, BPF_LDX | BPF_MEM | BPF_DW, dst, 10, COUNT_STACK, 0);
	op(p, BPF_ALU64 | BPF_LSH | BPF_K, dst, 0, 0, 32);
	op(p, BPF_ALU64 | BPF_ARSH | BPF_K, dst, 0, 0, 32);
}

/* The runqueues' count again, after the candidates were looked up, and
 * the smaller of the two counts into r9: a task counted blocked at both
 * is blocked all along, so a leader in D that is no candidate still makes
 * the run walk. The victim of a write loop goes into D and out a thousand
 * times a second, and one count alone, read before the candidates were,
 * often held a candidate that had left D by its look-up (and a per-CPU
 * count read while a task moved between CPUs can be one over): a walk
 * that found no one new, 15% of the runs under the bench's stall load. A
 * task that went into D between the two counts is named at the next run
 * if it is still there, as one that went into D after the run. r8 (the
 * counted) and r9 are kept. */
static void assemble_second_count(struct prog *p, const struct scan_btf *s)
{
	assemble_count(p, s, 1, CPU_LOOP2, CPU_NEXT2, CPU_DONE2);
	jump_reg(p, BPF_JSGE, 1, 9, COUNT_MIN);
	op(p, BPF_ALU64 | BPF_MOV | BPF_X, 9, 1, 0, 0);
	p->at[COUNT_MIN] = p->n;
}

/* The gate, after the iterator's first task (init_task, never in D) is in
 * r0: r9 = the tasks blocked in D on all runqueues, then each candidate
 * in D named, and counted if it is off the CPU (one in D on its CPU has
 * not been counted by its runqueue yet). As many counted as blocked: they
 * are all the leaders in D (DONE, not walked); else the list is emptied
 * for the walk. r6 = the value; r7-r9 are kept across calls. */
static void assemble_gate(struct prog *p, const struct scan_btf *s)
{
	kread(p, 0, 0, s->se_cfs_rq_off, 8);
	kread(p, 0, 0, s->cfs_rq_tg_off, 8);
	kread(p, 0, 0, s->tg_cfs_rq_off, 8); /* tg->cfs_rq */
	op(p, BPF_STX | BPF_MEM | BPF_DW, 10, 0, CFS_RQS_STACK, 0);
	assemble_count(p, s, 9, CPU_LOOP, CPU_NEXT, CPU_DONE);
	if (s->ran_check)
		assemble_ran(p, s);
	/* r7 = the candidate's index, r8 = how many counted */
	op(p, BPF_ALU64 | BPF_MOV | BPF_K, 7, 0, 0, 0);
	op(p, BPF_ALU64 | BPF_MOV | BPF_K, 8, 0, 0, 0);
	next_pid(p, CAND_LOOP, PL_DSCAN_CAND_MAX, W_NCAND, W_CAND, CAND_DONE);
	op(p, BPF_STX | BPF_MEM | BPF_W, 10, 1, READ_STACK, 0);
	kfunc(p, s->k_from_pid);
	jump(p, BPF_JEQ | BPF_K, 0, 0, CAND_NEXT);
	op(p, BPF_ALU64 | BPF_MOV | BPF_X, 1, 0, 0, 0); /* what to release */
	op(p, BPF_LDX | BPF_MEM | BPF_W, 2, 0, off16(s->state_off), 0);
	op(p, BPF_ALU64 | BPF_AND | BPF_K, 2, 0, 0, TASK_UNINTERRUPTIBLE | TASK_NOLOAD);
	jump(p, BPF_JNE | BPF_K, 2, TASK_UNINTERRUPTIBLE, RELEASE);
	op(p, BPF_LDX | BPF_MEM | BPF_W, 3, 6, 4 * W_COUNT, 0);
	jump(p, BPF_JGE | BPF_K, 3, ROOM, RELEASE);
	op(p, BPF_LDX | BPF_MEM | BPF_W, 5, 10, READ_STACK, 0);
	put_tgid(p, 5);
	if (s->on_cpu_off) {
		op(p, BPF_LDX | BPF_MEM | BPF_W, 2, 0, off16(s->on_cpu_off), 0);
		jump(p, BPF_JNE | BPF_K, 2, 0, RELEASE);
	}
	op(p, BPF_ALU64 | BPF_ADD | BPF_K, 8, 0, 0, 1);
	p->at[RELEASE] = p->n;
	kfunc(p, s->k_release);
	p->at[CAND_NEXT] = p->n;
	op(p, BPF_ALU64 | BPF_ADD | BPF_K, 7, 0, 0, 1);
	jump(p, BPF_JA, 0, 0, CAND_LOOP);
	p->at[CAND_DONE] = p->n;
	assemble_second_count(p, s);
	/* as many off the CPU in D as the runqueues count blocked (signed: a
	 * racy sum may dip below 0): done */
	op(p, BPF_STX | BPF_MEM | BPF_W, 6, 9, 4 * W_BLOCKED, 0);
	op(p, BPF_STX | BPF_MEM | BPF_W, 6, 8, 4 * W_COUNTED, 0);
	op(p, BPF_ALU | BPF_MOV | BPF_X, 9, 9, 0, 0);
	op(p, BPF_ALU64 | BPF_LSH | BPF_K, 9, 0, 0, 32);
	op(p, BPF_ALU64 | BPF_ARSH | BPF_K, 9, 0, 0, 32);
	jump_reg(p, BPF_JSLE, 9, 8, DONE);
	op(p, BPF_ST | BPF_MEM | BPF_W, 6, 0, 4 * W_COUNT, 0);
	op(p, BPF_ST | BPF_MEM | BPF_W, 6, 0, 4 * W_WALKED, 1);
}

/* The program: r6 = the map's value; count, overflow and walked to 0; with
 * the gate, the count of blocked tasks against the candidates (above);
 * walk the leaders; each in D (and not TASK_NOLOAD, an idle kernel
 * thread's), or each one when asked for all (W_ALL, no gate), goes to
 * tgids[count++] while there is room, else overflow = 1. */
static size_t assemble(struct prog *p, const struct scan_btf *s, int map_fd)
{
	memset(p, 0, sizeof(*p));
	op(p, BPF_LD | BPF_DW | BPF_IMM, 6, BPF_PSEUDO_MAP_VALUE, 0, map_fd);
	op(p, 0, 0, 0, 0, 0); /* the value's offset in the map: 0 */
	op(p, BPF_ST | BPF_MEM | BPF_W, 6, 0, 4 * W_COUNT, 0);
	op(p, BPF_ST | BPF_MEM | BPF_W, 6, 0, 4 * W_OVERFLOW, 0);
	op(p, BPF_ST | BPF_MEM | BPF_W, 6, 0, 4 * W_WALKED, s->gate ? 0 : 1);
	kfunc(p, s->k_lock);
	iter_arg(p);
	op(p, BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 0); /* no task: */
	op(p, BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 0); /* BPF_TASK_ITER_ALL_PROCS */
	kfunc(p, s->k_new);
	op(p, BPF_LDX | BPF_MEM | BPF_W, 1, 6, 4 * W_ALL, 0);
	jump(p, BPF_JNE | BPF_K, 1, 0, LOOP); /* every leader: no gate */
	if (s->gate) {
		iter_arg(p);
		kfunc(p, s->k_next);
		jump(p, BPF_JEQ | BPF_K, 0, 0, DONE);
		assemble_gate(p, s);
	}
	p->at[LOOP] = p->n;
	iter_arg(p);
	kfunc(p, s->k_next);
	jump(p, BPF_JEQ | BPF_K, 0, 0, DONE);
	op(p, BPF_LDX | BPF_MEM | BPF_W, 1, 6, 4 * W_ALL, 0);
	jump(p, BPF_JNE | BPF_K, 1, 0, NAME); /* every leader */
	op(p, BPF_LDX | BPF_MEM | BPF_W, 2, 0, off16(s->state_off), 0);
	op(p, BPF_ALU64 | BPF_AND | BPF_K, 2, 0, 0, TASK_UNINTERRUPTIBLE | TASK_NOLOAD);
	jump(p, BPF_JNE | BPF_K, 2, TASK_UNINTERRUPTIBLE, LOOP);
	p->at[NAME] = p->n;
	op(p, BPF_LDX | BPF_MEM | BPF_W, 3, 6, 4 * W_COUNT, 0); /* r3 = count */
	jump(p, BPF_JLT | BPF_K, 3, ROOM, ROOM_LEFT);
	op(p, BPF_ST | BPF_MEM | BPF_W, 6, 0, 4 * W_OVERFLOW, 1);
	jump(p, BPF_JA, 0, 0, LOOP);
	p->at[ROOM_LEFT] = p->n;
	op(p, BPF_LDX | BPF_MEM | BPF_W, 2, 0, off16(s->tgid_off), 0);
	put_tgid(p, 2);
	if (s->ran_check) {
		/* its run time and pcount at runs[count - 1] */
		op(p, BPF_ALU64 | BPF_MOV | BPF_X, 4, 3, 0, 0);
		op(p, BPF_ALU64 | BPF_SUB | BPF_K, 4, 0, 0, 1);
		op(p, BPF_ALU64 | BPF_LSH | BPF_K, 4, 0, 0, 4);
		op(p, BPF_ALU64 | BPF_ADD | BPF_X, 4, 6, 0, 0);
		op(p, BPF_LDX | BPF_MEM | BPF_DW, 5, 0, off16(s->run_off), 0);
		op(p, BPF_STX | BPF_MEM | BPF_DW, 4, 5, 4 * W_RUNS, 0);
		op(p, BPF_LDX | BPF_MEM | BPF_DW, 5, 0, off16(s->pcount_off), 0);
		op(p, BPF_STX | BPF_MEM | BPF_DW, 4, 5, 4 * W_RUNS + 8, 0);
	}
	jump(p, BPF_JA, 0, 0, LOOP);
	p->at[DONE] = p->n;
	iter_arg(p);
	kfunc(p, s->k_destroy);
	kfunc(p, s->k_unlock);
	op(p, BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	op(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	if (p->cut)
		return 0;
	for (size_t i = 0; i < p->n_jumps; i++)
		p->insn[p->jump_insn[i]].off =
			(int16_t)((long)p->at[p->jump_to[i]] - (long)p->jump_insn[i] - 1);
	return p->n;
}

/* The fields read of this process against its /proc/self/stat, once at
 * load: a kernel whose task_struct means something else by a field of the
 * same name and size (or a time namespace, which moves stat's start time)
 * has them off, and the tracer reads /proc as before. The state is R in
 * both (the reader runs), its io is left out (reading stat reads). */
static bool fields_agree(const struct pl_dscan *d)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	struct pl_dscan_ran ran;
	struct pl_pid_stat st, mine;
	struct pl_pid_io io;
	uint64_t rec[PL_REC_WORDS], threads;
	int self = (int)getpid(), out[1];
	bool overflow, walked, ok;

	ran.run_ns = ran.pcount = UINT64_MAX; /* the fields, whatever ran */
	if (pl__dscan_read(d, NULL, 0, &self, 1, &ran, out, 0, &overflow, &walked) < 0 ||
	    !ran.ok)
		return false;
	/* the record as read, taken as one thread's: a caller with more
	 * (perflinkd) is checked all the same, its thread count against stat */
	memcpy(rec, (const void *)(d->value + W_RAN), sizeof(rec));
	threads = rec[PL_REC_FLAGS] >> 32;
	rec[PL_REC_FLAGS] = (rec[PL_REC_FLAGS] & UINT32_MAX) | (1ull << 32);
	if (!pl__dscan_fields_decode(&d->layout, rec, self, &mine, &io))
		return false;
	ok = pl__procfile_read_once(&pf, AT_FDCWD, "/proc/self/stat") > 0 &&
	     pl__parse_pid_stat(pf.buf, &st) == 0 && st.pid == self &&
	     strcmp(st.comm, mine.comm) == 0 && st.state == mine.state && st.ppid == mine.ppid &&
	     st.num_threads == (int64_t)threads &&
	     st.starttime_ticks == mine.starttime_ticks &&
	     (!st.has_blkio || st.blkio_ticks == mine.blkio_ticks);
	pl__procfile_free(&pf);
	return ok;
}

void pl__dscan_init(struct pl_dscan *d)
{
	d->prog_fd = d->map_fd = -1;
	d->value = NULL;
	d->gate = d->ran_check = d->fields = false;
}

int pl__dscan_open(struct pl_dscan *d)
{
	struct scan_btf s;
	struct prog p;
	union bpf_attr a;
	int err = find_btf(&s);

	pl__dscan_init(d);
	if (err < 0)
		return err;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = VALUE_SIZE;
	a.max_entries = 1;
	a.map_flags = BPF_F_MMAPABLE;
	if ((d->map_fd = (int)pl__sys_bpf(BPF_MAP_CREATE, &a)) < 0)
		return -errno;
	d->value = mmap(NULL, VALUE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, d->map_fd, 0);
	if (d->value == MAP_FAILED) {
		err = -errno;
		d->value = NULL;
		pl__dscan_close(d);
		return err;
	}
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SYSCALL;
	a.prog_flags = BPF_F_SLEEPABLE; /* what a syscall program must be */
	a.insns = (uint64_t)(uintptr_t)p.insn;
	a.insn_cnt = (uint32_t)assemble(&p, &s, d->map_fd);
	if (a.insn_cnt == 0) {
		pl__dscan_close(d);
		return -E2BIG; /* the program outgrew its room: a bug */
	}
	a.license = (uint64_t)(uintptr_t)"GPL"; /* the task iterator kfuncs ask for it */
	memcpy(a.prog_name, "pl_dscan", sizeof("pl_dscan"));
	if ((d->prog_fd = (int)pl__sys_bpf(BPF_PROG_LOAD, &a)) < 0 && s.fields) {
		s.fields = false; /* the run time alone, then the gate alone, then the walk */
		a.insn_cnt = (uint32_t)assemble(&p, &s, d->map_fd);
		d->prog_fd = (int)pl__sys_bpf(BPF_PROG_LOAD, &a);
	}
	if (d->prog_fd < 0 && s.ran_check) {
		s.ran_check = false;
		a.insn_cnt = (uint32_t)assemble(&p, &s, d->map_fd);
		d->prog_fd = (int)pl__sys_bpf(BPF_PROG_LOAD, &a);
	}
	if (d->prog_fd < 0 && s.gate) {
		/* a verifier that takes the walk but not the gate (a helper or
		 * kfunc it does not give a syscall program): the walk alone */
		s.gate = false;
		a.insn_cnt = (uint32_t)assemble(&p, &s, d->map_fd);
		d->prog_fd = (int)pl__sys_bpf(BPF_PROG_LOAD, &a);
	}
	if (d->prog_fd < 0) {
		err = -errno;
		pl__dscan_close(d);
		return err;
	}
	d->gate = s.gate;
	d->ran_check = s.gate && s.ran_check;
	d->layout = s.layout;
	d->layout.clk_tck = sysconf(_SC_CLK_TCK);
	d->fields = d->ran_check && s.fields;
	if (d->fields)
		d->fields = fields_agree(d);
	return 0;
}

/* One run, its answer into out (up to cap). */
static ssize_t run(const struct pl_dscan *d, int *out, size_t cap, bool *overflow)
{
	union bpf_attr a;
	uint32_t count;
	size_t n;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)d->prog_fd;
	if (pl__sys_bpf(BPF_PROG_TEST_RUN, &a) < 0)
		return -errno;
	/* written by the run that just returned, read by this thread only */
	count = d->value[W_COUNT];
	n = count < ROOM ? count : ROOM;
	*overflow = d->value[W_OVERFLOW] != 0 || n > cap;
	if (n > cap)
		n = cap;
	memcpy(out, (const void *)(d->value + W_TGIDS), n * sizeof(*out));
	return (ssize_t)n;
}

ssize_t pl__dscan_read(const struct pl_dscan *d, const int *cand, size_t n_cand,
		       const int *ran_pids, size_t n_ran, struct pl_dscan_ran *ran, int *out,
		       size_t cap, bool *overflow, bool *walked)
{
	ssize_t n;

	if (n_cand > PL_DSCAN_CAND_MAX)
		n_cand = 0; /* too many to check one by one: the walk */
	if (!d->ran_check)
		n_ran = 0;
	if (n_ran > PL_DSCAN_RAN_MAX)
		n_ran = PL_DSCAN_RAN_MAX;
	for (size_t i = 0; i < n_cand; i++)
		d->value[W_CAND + i] = (uint32_t)cand[i];
	d->value[W_NCAND] = (uint32_t)n_cand;
	for (size_t i = 0; i < n_ran; i++) {
		volatile uint64_t *rec = (volatile uint64_t *)(d->value + W_RAN + REC_BYTES / 4 * i);

		d->value[W_RANPID + i] = (uint32_t)ran_pids[i];
		rec[PL_REC_PREV_RUN] = ran[i].run_ns;
		rec[PL_REC_PREV_PCOUNT] = ran[i].pcount;
		rec[PL_REC_IDS] = 0; /* stays so where the fields are not read */
	}
	d->value[W_NRAN] = (uint32_t)n_ran;
	n = run(d, out, cap, overflow);
	*walked = d->value[W_WALKED] != 0;
	for (size_t i = 0; i < n_ran; i++) {
		uint64_t rec[PL_REC_WORDS];

		/* as the program stored them, written by the run that returned */
		memcpy(rec, (const void *)(d->value + W_RAN + REC_BYTES / 4 * i),
		       d->fields ? sizeof(rec) : 2 * sizeof(uint64_t));
		ran[i].run_ns = rec[PL_REC_RUN];
		ran[i].pcount = rec[PL_REC_PCOUNT];
		ran[i].ok = n >= 0 && ran[i].pcount != UINT64_MAX;
		ran[i].fields = ran[i].ok && d->fields &&
				pl__dscan_fields_decode(&d->layout, rec, ran_pids[i], &ran[i].st,
							&ran[i].io);
	}
	return n;
}

bool pl__dscan_walk_run(const struct pl_dscan *d, size_t i, uint64_t *run_ns, uint64_t *pcount)
{
	if (!d->ran_check || i >= ROOM)
		return false;
	memcpy(run_ns, (const void *)(d->value + W_RUNS + 4 * i), 8);
	memcpy(pcount, (const void *)(d->value + W_RUNS + 4 * i + 2), 8);
	return true;
}

ssize_t pl__dscan_list_all(const struct pl_dscan *d, int *out, size_t cap, bool *overflow)
{
	ssize_t n;

	d->value[W_ALL] = 1;
	n = run(d, out, cap, overflow);
	d->value[W_ALL] = 0;
	return n;
}

void pl__dscan_close(struct pl_dscan *d)
{
	if (d->value)
		munmap((void *)d->value, VALUE_SIZE);
	if (d->prog_fd >= 0)
		close(d->prog_fd);
	if (d->map_fd >= 0)
		close(d->map_fd);
	pl__dscan_init(d);
}
