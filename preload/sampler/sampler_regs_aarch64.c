/* The interrupted registers on AArch64, kept by libunwind's numbers
 * (UNW_AARCH64_X0 .. X30, SP, PC): the remote walk asks for them so. */
#include "sampler.h"

#include <libunwind.h>
#include <ucontext.h>

_Static_assert(UNW_AARCH64_PC < PL_REGS_MAX, "PL_REGS_MAX holds every register kept");

void pl__regs_capture(uintptr_t regs[PL_REGS_MAX], const void *ucontext)
{
	const mcontext_t *m = &((const ucontext_t *)ucontext)->uc_mcontext;
	int i;

	for (i = 0; i <= 30; i++)
		regs[UNW_AARCH64_X0 + i] = (uintptr_t)m->regs[i];
	regs[UNW_AARCH64_SP] = (uintptr_t)m->sp;
	regs[UNW_AARCH64_PC] = (uintptr_t)m->pc;
}

uintptr_t pl__regs_pc(const uintptr_t regs[PL_REGS_MAX])
{
	return regs[UNW_AARCH64_PC];
}

uintptr_t pl__regs_sp(const uintptr_t regs[PL_REGS_MAX])
{
	return regs[UNW_AARCH64_SP];
}

int pl__regs_slot(int unw_reg)
{
	return unw_reg >= UNW_AARCH64_X0 && unw_reg <= UNW_AARCH64_PC ? unw_reg : -1;
}

void pl__regs_mend_space(void *space, const void *accessors)
{
	(void)space;
	(void)accessors;
}
