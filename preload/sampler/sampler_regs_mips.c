/* The interrupted registers on MIPS (o32 as Debian's mipsel builds it):
 * the 32 general registers by libunwind's numbers (UNW_MIPS_R0 .. R31),
 * and the pc, which libunwind numbers 64, in the slot after them. */
#include "sampler.h"

#include <libunwind.h>
#include <string.h>
#include <ucontext.h>

#define PC_SLOT 32
_Static_assert(PC_SLOT < PL_REGS_MAX, "PL_REGS_MAX holds every register kept");

void pl__regs_capture(uintptr_t regs[PL_REGS_MAX], const void *ucontext)
{
	/* greg_t is 64 bits even on o32: the low half is the register */
	const mcontext_t *m = &((const ucontext_t *)ucontext)->uc_mcontext;
	int i;

	for (i = 0; i < 32; i++)
		regs[UNW_MIPS_R0 + i] = (uintptr_t)m->gregs[i];
	regs[PC_SLOT] = (uintptr_t)m->pc;
}

uintptr_t pl__regs_pc(const uintptr_t regs[PL_REGS_MAX])
{
	return regs[PC_SLOT];
}

uintptr_t pl__regs_sp(const uintptr_t regs[PL_REGS_MAX])
{
	return regs[UNW_MIPS_R29];
}

int pl__regs_slot(int unw_reg)
{
	if (unw_reg >= UNW_MIPS_R0 && unw_reg <= UNW_MIPS_R31)
		return unw_reg;
	return unw_reg == UNW_MIPS_PC ? PC_SLOT : -1;
}

/* libunwind 1.6's remote reads of a saved 32-bit register on o32
 * (read_s32 in tdep-mips/libunwind_i.h) take the upper half of a 32-bit
 * word with a shift by 32, which gcc folds to 0: every register saved at
 * an address 4 mod 8 reads as 0, and the walk ends there (on this
 * project's chain test, after two frames). Upstream fixed it in 2026
 * (a9cb355), after every release. Its n32 path reads the word at the
 * address itself, which is what o32's 32-bit words need on a
 * little-endian CPU; so the space is marked n32, once the layout of
 * libunwind's own struct is seen to be that of the releases with the bug
 * (the accessors as given, big_endian 0, abi o32, addr_size 4 or, as
 * 1.6.2 leaves it, 0). The one
 * other use of the ABI, telling a signal trampoline, then looks for
 * n32's: a walk through the program's own signal handler stops there. */
void pl__regs_mend_space(void *space, const void *accessors)
{
#if _MIPS_SIM == _ABIO32 && defined(__MIPSEL__)
	struct libunwind_1_6_space {
		unw_accessors_t acc;
		int big_endian;
		mips_abi_t abi;
		unsigned int addr_size;
	} *s = space;

	if (memcmp(&s->acc, accessors, sizeof(s->acc)) == 0 && s->big_endian == 0 &&
	    s->abi == UNW_MIPS_ABI_O32 && (s->addr_size == 0 || s->addr_size == 4))
		s->abi = UNW_MIPS_ABI_N32;
#else
	(void)space;
	(void)accessors;
#endif
}
