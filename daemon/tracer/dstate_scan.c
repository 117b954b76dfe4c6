/* The D scan (dstate_watch.h): which thread group leaders are in D now,
 * asked of the kernel once a tick by one BPF program run, that walks the
 * process list with the kernel's open-coded task iterator (the kfuncs
 * bpf_iter_task_new/next/destroy, Linux 6.7) and writes the tgid of each
 * leader in D into a seq file the tracer reads.
 *
 * Why not the sched_switch program: that one runs at every context switch
 * of the machine, ~130 ns each on the test VM (the raw tracepoint's
 * dispatch and a retpoline call, not its 4 instructions), which under a
 * dd-and-fsync load (15,000-24,000 switches a second) was 200-280 us a
 * tick, more than the rest of the tracer's tick. The scan costs what a
 * walk of the process list costs, a cache miss or two a process when it
 * runs once a tick (80-120 us at 300 processes on the test VM, 13 us when
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
 * The program runs as a task iterator's (bpf_iter_task) for the tracer's
 * own process only: its first visit walks every process, the others (one
 * for each further thread) return at once. Offsets of the fields it reads
 * come from the kernel's BTF (btf_find.h): task_struct's __state and tgid,
 * and the iterator context's. */
#include "dstate_scan.h"

#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <unistd.h>

#include "bpf_asm.h"
#include "btf_find.h"

#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_NOLOAD 0x400
#define ITER_STACK (-24) /* struct bpf_iter_task: 3 u64, 8-aligned */
#define NOTE_STACK (-32)

struct scan_btf {
	int k_new, k_next, k_destroy, iter_task;
	uint32_t state_off, tgid_off, meta_off, task_off, seq_off, seq_num_off;
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
	int err, task, ctx, meta;

	if (sizeof(void *) != 8)
		return -ENOTSUP; /* the program loads the context's pointers as 64-bit */
	if ((err = pl__btf_load(&b, "/sys/kernel/btf/vmlinux")) < 0)
		return err;
	s->k_new = pl__btf_find(&b, "bpf_iter_task_new", PL_BTF_FUNC);
	s->k_next = pl__btf_find(&b, "bpf_iter_task_next", PL_BTF_FUNC);
	s->k_destroy = pl__btf_find(&b, "bpf_iter_task_destroy", PL_BTF_FUNC);
	s->iter_task = pl__btf_find(&b, "bpf_iter_task", PL_BTF_FUNC);
	task = pl__btf_find(&b, "task_struct", PL_BTF_STRUCT);
	ctx = pl__btf_find(&b, "bpf_iter__task", PL_BTF_STRUCT);
	meta = pl__btf_find(&b, "bpf_iter_meta", PL_BTF_STRUCT);
	err = s->k_new > 0 && s->k_next > 0 && s->k_destroy > 0 && s->iter_task > 0 &&
			      member(&b, task, "__state", 4, &s->state_off) &&
			      member(&b, task, "tgid", 4, &s->tgid_off) &&
			      member(&b, ctx, "meta", sizeof(void *), &s->meta_off) &&
			      member(&b, ctx, "task", sizeof(void *), &s->task_off) &&
			      member(&b, meta, "seq", sizeof(void *), &s->seq_off) &&
			      member(&b, meta, "seq_num", 8, &s->seq_num_off)
		      ? 0
		      : -ENOENT;
	pl__btf_free(&b);
	return err;
}

static int16_t off16(uint32_t v)
{
	return v > INT16_MAX ? INT16_MAX : (int16_t)v; /* the verifier refuses a wrong one */
}

/* The program; jumps are counted from the instruction after them. */
static size_t assemble(struct bpf_insn *p, const struct scan_btf *s)
{
	size_t n = 0;
	const uint8_t kfunc = BPF_PSEUDO_KFUNC_CALL;

	p[n++] = pl__insn(BPF_LDX | BPF_MEM | BPF_DW, 2, 1, off16(s->task_off), 0); /* 0 r2 = task */
	p[n++] = pl__insn(BPF_JMP | BPF_JEQ | BPF_K, 2, 0, 27, 0);        /* 1 the last call: out */
	p[n++] = pl__insn(BPF_LDX | BPF_MEM | BPF_DW, 6, 1, off16(s->meta_off), 0); /* 2 r6 = meta */
	p[n++] = pl__insn(BPF_LDX | BPF_MEM | BPF_DW, 3, 6, off16(s->seq_num_off), 0);
	p[n++] = pl__insn(BPF_JMP | BPF_JNE | BPF_K, 3, 0, 24, 0);        /* 4 a later thread: out */
	p[n++] = pl__insn(BPF_LDX | BPF_MEM | BPF_DW, 6, 6, off16(s->seq_off), 0); /* 5 r6 = seq */
	p[n++] = pl__insn(BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0);
	p[n++] = pl__insn(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, ITER_STACK);
	p[n++] = pl__insn(BPF_ALU64 | BPF_MOV | BPF_K, 2, 0, 0, 0);       /* no task: */
	p[n++] = pl__insn(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 0);       /* BPF_TASK_ITER_ALL_PROCS */
	p[n++] = pl__insn(BPF_JMP | BPF_CALL, 0, kfunc, 0, s->k_new);      /* 10 */
	p[n++] = pl__insn(BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0);      /* 11 loop: */
	p[n++] = pl__insn(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, ITER_STACK);
	p[n++] = pl__insn(BPF_JMP | BPF_CALL, 0, kfunc, 0, s->k_next);     /* 13 r0 = the next leader */
	p[n++] = pl__insn(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 11, 0);        /* 14 none left: done */
	p[n++] = pl__insn(BPF_LDX | BPF_MEM | BPF_W, 2, 0, off16(s->state_off), 0);
	p[n++] = pl__insn(BPF_ALU64 | BPF_AND | BPF_K, 2, 0, 0, TASK_UNINTERRUPTIBLE | TASK_NOLOAD);
	p[n++] = pl__insn(BPF_JMP | BPF_JNE | BPF_K, 2, 0, -7, TASK_UNINTERRUPTIBLE); /* 17 not D: loop */
	p[n++] = pl__insn(BPF_LDX | BPF_MEM | BPF_W, 2, 0, off16(s->tgid_off), 0);
	p[n++] = pl__insn(BPF_STX | BPF_MEM | BPF_W, 10, 2, NOTE_STACK, 0);
	p[n++] = pl__insn(BPF_ALU64 | BPF_MOV | BPF_X, 1, 6, 0, 0);
	p[n++] = pl__insn(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0);
	p[n++] = pl__insn(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, NOTE_STACK);
	p[n++] = pl__insn(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 4);
	/* the seq buffer full (8192 leaders in D): -E2BIG at the read */
	p[n++] = pl__insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_seq_write); /* 24 */
	p[n++] = pl__insn(BPF_JMP | BPF_JA, 0, 0, -15, 0);                /* 25 loop */
	p[n++] = pl__insn(BPF_ALU64 | BPF_MOV | BPF_X, 1, 10, 0, 0);      /* 26 done: */
	p[n++] = pl__insn(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, ITER_STACK);
	p[n++] = pl__insn(BPF_JMP | BPF_CALL, 0, kfunc, 0, s->k_destroy);
	p[n++] = pl__insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);       /* 29 out: */
	p[n++] = pl__insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return n;
}

int pl__dscan_open(int *prog_fd, int *link_fd)
{
	struct scan_btf s;
	struct bpf_insn prog[32];
	union bpf_iter_link_info li;
	union bpf_attr a;
	size_t n;
	int err = find_btf(&s);

	*prog_fd = *link_fd = -1;
	if (err < 0)
		return err;
	n = assemble(prog, &s);
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_TRACING;
	a.expected_attach_type = BPF_TRACE_ITER;
	a.attach_btf_id = (uint32_t)s.iter_task;
	a.insns = (uint64_t)(uintptr_t)prog;
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)"GPL"; /* the task iterator kfuncs ask for it */
	memcpy(a.prog_name, "pl_dscan", sizeof("pl_dscan"));
	*prog_fd = (int)pl__sys_bpf(BPF_PROG_LOAD, &a);
	if (*prog_fd < 0)
		return -errno;
	/* this process's threads only: the first visit walks every process */
	memset(&li, 0, sizeof(li));
	li.task.pid = (uint32_t)getpid();
	memset(&a, 0, sizeof(a));
	a.link_create.prog_fd = (uint32_t)*prog_fd;
	a.link_create.attach_type = BPF_TRACE_ITER;
	a.link_create.iter_info = (uint64_t)(uintptr_t)&li;
	a.link_create.iter_info_len = sizeof(li);
	*link_fd = (int)pl__sys_bpf(BPF_LINK_CREATE, &a);
	if (*link_fd < 0) {
		err = -errno;
		close(*prog_fd);
		*prog_fd = -1;
		return err;
	}
	return 0;
}

ssize_t pl__dscan_read(int link_fd, int *out, size_t cap, bool *overflow)
{
	union bpf_attr a;
	size_t n = 0;
	int fd, err = 0;

	*overflow = false;
	memset(&a, 0, sizeof(a));
	a.iter_create.link_fd = (uint32_t)link_fd;
	if ((fd = (int)pl__sys_bpf(BPF_ITER_CREATE, &a)) < 0)
		return -errno;
	for (;;) {
		int spill[256];
		bool full = n == cap;
		ssize_t got = read(fd, full ? spill : out + n,
				   full ? sizeof(spill) : (cap - n) * sizeof(*out));

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			/* E2BIG: more leaders in D than the seq buffer holds */
			err = errno == E2BIG ? 0 : -errno;
			*overflow = true;
			break;
		}
		if (got == 0)
			break;
		if (full)
			*overflow = true; /* the rest is read and dropped */
		else
			n += (size_t)got / sizeof(*out);
	}
	close(fd);
	return err < 0 ? err : (ssize_t)n;
}
