/* The fields of a process's stat and io from its task (dstate_fields.h).
 *
 * Why: under the bench's stall load a tick reads stat and io of the few
 * processes it read the tick before (the writers, the watched that ran,
 * those in D), 3-4 us a file with cold caches, where the D scan's run
 * already looks each of them up by pid for its run time. Reading the
 * fields there too costs a few loads and probe reads in a run already made.
 *
 * What /proc would say, field by field (fs/proc/array.c, base.c):
 *  - state: task_state_index() over __state and exit_state. Only the plain
 *    states are decoded here: running (0), TASK_INTERRUPTIBLE and
 *    TASK_UNINTERRUPTIBLE (with TASK_WAKEKILL or the freezable bits beside
 *    them, which it masks out), and no exit_state; anything else (stopped,
 *    traced, parked, idle, frozen, an rtlock wait, a zombie) is left to
 *    /proc, whose rules for them changed across kernels.
 *  - num_threads: signal->nr_threads; ppid: real_parent's tgid (this is
 *    used only where the tracer's pid namespace is the initial one, as the
 *    scan's look-ups are).
 *  - starttime: start_boottime in clock ticks (nsec_to_clock_t, USER_HZ);
 *    blkio: delays->blkio_delay in clock ticks, 0 without delays (as
 *    delayacct_blkio_ticks()).
 *  - io: the whole process's counters are its signal's (threads and
 *    children it reaped) plus each live thread's: with one thread, the
 *    leader's plus its signal's.
 *  - comm: task->comm, which stat prints as is for a user process (a
 *    kernel thread's stat may name its workqueue: not decoded here).
 * dstate_scan.c checks the decoding against /proc/self/stat when it loads
 * the program, and leaves the fields off where they differ. */
#include "dstate_fields.h"

#include <string.h>

#define TASK_INTERRUPTIBLE 0x1
#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_WAKEKILL 0x100
#define TASK_FREEZABLE 0x2000
#define TASK_FREEZABLE_UNSAFE 0x4000
#define PF_KTHREAD 0x00200000

bool pl__dscan_fields_btf(const struct pl_btf *b, int task, struct pl_dscan_layout *l)
{
	static const char *const io_names[7] = { "rchar", "wchar", "syscr", "syscw",
						 "read_bytes", "write_bytes",
						 "cancelled_write_bytes" };
	int sig = pl__btf_find(b, "signal_struct", PL_BTF_STRUCT);
	int delays = pl__btf_find(b, "task_delay_info", PL_BTF_STRUCT);
	int ioac = pl__btf_find(b, "task_io_accounting", PL_BTF_STRUCT);
	uint32_t sig_ioac_size = 0, any = 0;

	memset(l, 0, sizeof(*l));
	if (!pl__btf_member_sized(b, task, "flags", 4, &l->flags_off) ||
	    !pl__btf_member_sized(b, task, "exit_state", 4, &l->exit_state_off) ||
	    !pl__btf_member_sized(b, task, "pid", 4, &l->pid_off) ||
	    !pl__btf_member_sized(b, task, "start_boottime", 8, &l->start_off) ||
	    !pl__btf_member_sized(b, task, "comm", 16, &l->comm_off) ||
	    !pl__btf_member_sized(b, task, "signal", sizeof(void *), &l->signal_off) ||
	    !pl__btf_member_sized(b, task, "real_parent", sizeof(void *), &l->parent_off) ||
	    !pl__btf_member_sized(b, task, "delays", sizeof(void *), &l->delays_off) ||
	    !pl__btf_member_sized(b, delays, "blkio_delay", 8, &l->blkio_off) ||
	    !pl__btf_member_sized(b, sig, "nr_threads", 4, &l->nr_threads_off) ||
	    pl__btf_member(b, task, "ioac", &l->ioac_off, &l->ioac_size) < 0 ||
	    pl__btf_member(b, sig, "ioac", &l->sig_ioac_off, &sig_ioac_size) < 0 ||
	    l->ioac_size == 0 || l->ioac_size > PL_REC_IOAC_MAX || l->ioac_size != sig_ioac_size)
		return false;
	for (int i = 0; i < 7; i++) {
		if (pl__btf_member_sized(b, ioac, io_names[i], 8, &l->io_off[i]) &&
		    l->io_off[i] + 8 <= l->ioac_size)
			any |= 1u << i;
		else
			l->io_off[i] = UINT32_MAX; /* a kernel without it: not in io either */
	}
	return (any & 2) != 0; /* wchar, which the tracer needs */
}

static uint32_t lo(uint64_t w)
{
	return (uint32_t)w;
}

static uint32_t hi(uint64_t w)
{
	return (uint32_t)(w >> 32);
}

static uint64_t io_sum(const struct pl_dscan_layout *l, const uint64_t *rec, int i, bool *have)
{
	uint64_t a, b;

	*have = l->io_off[i] != UINT32_MAX;
	if (!*have)
		return 0;
	memcpy(&a, (const char *)(rec + PL_REC_IOAC) + l->io_off[i], 8);
	memcpy(&b, (const char *)(rec + PL_REC_SIG_IOAC) + l->io_off[i], 8);
	return a + b;
}

bool pl__dscan_fields_decode(const struct pl_dscan_layout *l, const uint64_t *rec, int pid,
			     struct pl_pid_stat *st, struct pl_pid_io *io)
{
	static const unsigned io_have[7] = { PL_IO_HAVE_RCHAR, PL_IO_HAVE_WCHAR, 0, 0,
					     PL_IO_HAVE_READ_BYTES, PL_IO_HAVE_WRITE_BYTES, 0 };
	uint32_t state = lo(rec[PL_REC_STATE]), plain;
	uint64_t per_tick = l->clk_tck > 0 ? 1000000000u / (uint64_t)l->clk_tck : 0;
	uint64_t *dst[7];
	char letter;
	bool have;

	if (rec[PL_REC_PCOUNT] == UINT64_MAX || per_tick == 0 || lo(rec[PL_REC_IDS]) != (uint32_t)pid ||
	    hi(rec[PL_REC_IDS]) != (uint32_t)pid || (lo(rec[PL_REC_FLAGS]) & PF_KTHREAD) ||
	    hi(rec[PL_REC_STATE]) != 0 || hi(rec[PL_REC_FLAGS]) != 1)
		return false;
	plain = state & ~(uint32_t)(TASK_WAKEKILL | TASK_FREEZABLE | TASK_FREEZABLE_UNSAFE);
	if (plain == 0)
		letter = 'R';
	else if (plain == TASK_INTERRUPTIBLE)
		letter = 'S';
	else if (plain == TASK_UNINTERRUPTIBLE)
		letter = 'D';
	else
		return false;
	memset(st, 0, sizeof(*st));
	st->pid = pid;
	memcpy(st->comm, &rec[PL_REC_COMM], 16);
	st->comm[16] = '\0'; /* comm is terminated within its 16 bytes; this is a guard */
	st->state = letter;
	st->ppid = (int)lo(rec[PL_REC_PPID]);
	st->num_threads = 1;
	st->starttime_ticks = rec[PL_REC_START] / per_tick;
	st->exit_signal = 0; /* a leader: not a thread's -1 */
	st->processor = -1;
	st->blkio_ticks = rec[PL_REC_BLKIO] / per_tick;
	st->has_blkio = true;
	memset(io, 0, sizeof(*io));
	dst[0] = &io->rchar;
	dst[1] = &io->wchar;
	dst[2] = &io->syscr;
	dst[3] = &io->syscw;
	dst[4] = &io->read_bytes;
	dst[5] = &io->write_bytes;
	dst[6] = &io->cancelled_write_bytes;
	for (int i = 0; i < 7; i++) {
		*dst[i] = io_sum(l, rec, i, &have);
		if (have)
			io->have |= io_have[i];
	}
	return true;
}
