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
 * The program is a syscall one (BPF_PROG_TYPE_SYSCALL), run on demand by
 * one bpf(BPF_PROG_TEST_RUN): a task iterator program would cost a new
 * file at each run (BPF_ITER_CREATE, a seq_file read, a close: 20-35 us a
 * tick under the stall load, measured with perf). Syscall programs sleep,
 * so the walk is inside bpf_rcu_read_lock/unlock (the iterator asks for
 * RCU). Offsets of the fields it reads (task_struct's __state and tgid)
 * and the kfuncs' ids come from the kernel's BTF (btf_find.h). */
#include "dstate_scan.h"

#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpf_asm.h"
#include "btf_find.h"

#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_NOLOAD 0x400
#define ITER_STACK (-24) /* struct bpf_iter_task: 3 u64, 8-aligned */
/* The map's one value: how many, whether there were more, the tgids. */
#define ROOM 4096
#define VALUE_SIZE (4 * (2 + ROOM))

struct scan_btf {
	int k_new, k_next, k_destroy, k_lock, k_unlock;
	uint32_t state_off, tgid_off;
};

/* A member of structure id of the size the program loads. */
static bool member(const struct pl_btf *b, int id, const char *name, uint32_t want, uint32_t *off)
{
	uint32_t size;

	return pl__btf_member(b, id, name, off, &size) == 0 && size == want;
}

/* -ENOENT: a kernel without the task iterator kfuncs (before 6.7) or
 * whose types are not as this program reads them. Each name is looked up
 * once: a look-up walks the ~125,000 types of vmlinux. */
static int find_btf(struct scan_btf *s)
{
	struct pl_btf b;
	int err, task;

	if ((err = pl__btf_load(&b, "/sys/kernel/btf/vmlinux")) < 0)
		return err;
	s->k_new = pl__btf_find(&b, "bpf_iter_task_new", PL_BTF_FUNC);
	s->k_next = pl__btf_find(&b, "bpf_iter_task_next", PL_BTF_FUNC);
	s->k_destroy = pl__btf_find(&b, "bpf_iter_task_destroy", PL_BTF_FUNC);
	s->k_lock = pl__btf_find(&b, "bpf_rcu_read_lock", PL_BTF_FUNC);
	s->k_unlock = pl__btf_find(&b, "bpf_rcu_read_unlock", PL_BTF_FUNC);
	task = pl__btf_find(&b, "task_struct", PL_BTF_STRUCT);
	err = s->k_new > 0 && s->k_next > 0 && s->k_destroy > 0 && s->k_lock > 0 &&
			      s->k_unlock > 0 && member(&b, task, "__state", 4, &s->state_off) &&
			      member(&b, task, "tgid", 4, &s->tgid_off)
		      ? 0
		      : -ENOENT;
	pl__btf_free(&b);
	return err;
}

static int16_t off16(uint32_t v)
{
	return v > INT16_MAX ? INT16_MAX : (int16_t)v; /* the verifier refuses a wrong one */
}

/* An assembler with forward jumps to labels, patched at the end. */
enum label { LOOP, ROOM_LEFT, DONE, N_LABELS };
struct prog {
	struct bpf_insn insn[48];
	size_t n, n_jumps;
	size_t at[N_LABELS], jump_insn[8];
	enum label jump_to[8];
};

static void op(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	p->insn[p->n++] = pl__insn(code, dst, src, off, imm);
}

static void jump(struct prog *p, uint8_t code, uint8_t dst, int32_t imm, enum label to)
{
	p->jump_insn[p->n_jumps] = p->n;
	p->jump_to[p->n_jumps++] = to;
	op(p, BPF_JMP | code, dst, 0, 0, imm);
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

/* The program: r6 = the map's value; count and overflow to 0; walk the
 * leaders; each in D (and not TASK_NOLOAD, an idle kernel thread's) goes
 * to tgids[count++] while there is room, else overflow = 1. */
static size_t assemble(struct prog *p, const struct scan_btf *s, int map_fd)
{
	memset(p, 0, sizeof(*p));
	op(p, BPF_LD | BPF_DW | BPF_IMM, 6, BPF_PSEUDO_MAP_VALUE, 0, map_fd);
	op(p, 0, 0, 0, 0, 0); /* the value's offset in the map: 0 */
	op(p, BPF_ST | BPF_MEM | BPF_W, 6, 0, 0, 0);
	op(p, BPF_ST | BPF_MEM | BPF_W, 6, 0, 4, 0);
	kfunc(p, s->k_lock);
	iter_arg(p);
	op(p, BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 0); /* no task: */
	op(p, BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 0); /* BPF_TASK_ITER_ALL_PROCS */
	kfunc(p, s->k_new);
	p->at[LOOP] = p->n;
	iter_arg(p);
	kfunc(p, s->k_next);
	jump(p, BPF_JEQ | BPF_K, 0, 0, DONE);
	op(p, BPF_LDX | BPF_MEM | BPF_W, 2, 0, off16(s->state_off), 0);
	op(p, BPF_ALU64 | BPF_AND | BPF_K, 2, 0, 0, TASK_UNINTERRUPTIBLE | TASK_NOLOAD);
	jump(p, BPF_JNE | BPF_K, 2, TASK_UNINTERRUPTIBLE, LOOP);
	op(p, BPF_LDX | BPF_MEM | BPF_W, 3, 6, 0, 0); /* r3 = count */
	jump(p, BPF_JLT | BPF_K, 3, ROOM, ROOM_LEFT);
	op(p, BPF_ST | BPF_MEM | BPF_W, 6, 0, 4, 1);
	jump(p, BPF_JA, 0, 0, LOOP);
	p->at[ROOM_LEFT] = p->n;
	op(p, BPF_LDX | BPF_MEM | BPF_W, 2, 0, off16(s->tgid_off), 0);
	op(p, BPF_ALU64 | BPF_MOV | BPF_X, 4, 3, 0, 0);
	op(p, BPF_ALU64 | BPF_LSH | BPF_K, 4, 0, 0, 2);
	op(p, BPF_ALU64 | BPF_ADD | BPF_X, 4, 6, 0, 0);
	op(p, BPF_STX | BPF_MEM | BPF_W, 4, 2, 8, 0);
	op(p, BPF_ALU64 | BPF_ADD | BPF_K, 3, 0, 0, 1);
	op(p, BPF_STX | BPF_MEM | BPF_W, 6, 3, 0, 0);
	jump(p, BPF_JA, 0, 0, LOOP);
	p->at[DONE] = p->n;
	iter_arg(p);
	kfunc(p, s->k_destroy);
	kfunc(p, s->k_unlock);
	op(p, BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	op(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	for (size_t i = 0; i < p->n_jumps; i++)
		p->insn[p->jump_insn[i]].off =
			(int16_t)((long)p->at[p->jump_to[i]] - (long)p->jump_insn[i] - 1);
	return p->n;
}

void pl__dscan_init(struct pl_dscan *d)
{
	d->prog_fd = d->map_fd = -1;
	d->value = NULL;
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
	d->value = mmap(NULL, VALUE_SIZE, PROT_READ, MAP_SHARED, d->map_fd, 0);
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
	a.license = (uint64_t)(uintptr_t)"GPL"; /* the task iterator kfuncs ask for it */
	memcpy(a.prog_name, "pl_dscan", sizeof("pl_dscan"));
	if ((d->prog_fd = (int)pl__sys_bpf(BPF_PROG_LOAD, &a)) < 0) {
		err = -errno;
		pl__dscan_close(d);
		return err;
	}
	return 0;
}

ssize_t pl__dscan_read(const struct pl_dscan *d, int *out, size_t cap, bool *overflow)
{
	union bpf_attr a;
	uint32_t count;
	size_t n;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)d->prog_fd;
	if (pl__sys_bpf(BPF_PROG_TEST_RUN, &a) < 0)
		return -errno;
	/* written by the run that just returned, read by this thread only */
	count = d->value[0];
	n = count < ROOM ? count : ROOM;
	*overflow = d->value[1] != 0 || n > cap;
	if (n > cap)
		n = cap;
	memcpy(out, (const void *)(d->value + 2), n * sizeof(*out));
	return (ssize_t)n;
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
