/* What the tracer's two hand-assembled BPF programs (dstate_watch.c's
 * switch watch, dstate_scan.c's scan) share: the bpf(2) call, which libc
 * does not wrap, and one instruction built from its fields. */
#ifndef PL_TRACER_BPF_ASM_H
#define PL_TRACER_BPF_ASM_H

#include <linux/bpf.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline long pl__sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

static inline struct bpf_insn pl__insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off,
				       int32_t imm)
{
	struct bpf_insn i = { .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };

	return i;
}

#endif
