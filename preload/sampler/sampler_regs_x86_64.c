/* The interrupted registers on x86-64, kept by libunwind's numbers
 * (UNW_X86_64_RAX .. UNW_X86_64_RIP): the remote walk asks for them so. */
#include "sampler.h"

#include <libunwind.h>
#include <ucontext.h>

_Static_assert(UNW_X86_64_RIP < PL_REGS_MAX, "PL_REGS_MAX holds every register kept");

void pl__regs_capture(uintptr_t regs[PL_REGS_MAX], const void *ucontext)
{
	const greg_t *g = ((const ucontext_t *)ucontext)->uc_mcontext.gregs;

	regs[UNW_X86_64_RAX] = (uintptr_t)g[REG_RAX];
	regs[UNW_X86_64_RDX] = (uintptr_t)g[REG_RDX];
	regs[UNW_X86_64_RCX] = (uintptr_t)g[REG_RCX];
	regs[UNW_X86_64_RBX] = (uintptr_t)g[REG_RBX];
	regs[UNW_X86_64_RSI] = (uintptr_t)g[REG_RSI];
	regs[UNW_X86_64_RDI] = (uintptr_t)g[REG_RDI];
	regs[UNW_X86_64_RBP] = (uintptr_t)g[REG_RBP];
	regs[UNW_X86_64_RSP] = (uintptr_t)g[REG_RSP];
	regs[UNW_X86_64_R8] = (uintptr_t)g[REG_R8];
	regs[UNW_X86_64_R9] = (uintptr_t)g[REG_R9];
	regs[UNW_X86_64_R10] = (uintptr_t)g[REG_R10];
	regs[UNW_X86_64_R11] = (uintptr_t)g[REG_R11];
	regs[UNW_X86_64_R12] = (uintptr_t)g[REG_R12];
	regs[UNW_X86_64_R13] = (uintptr_t)g[REG_R13];
	regs[UNW_X86_64_R14] = (uintptr_t)g[REG_R14];
	regs[UNW_X86_64_R15] = (uintptr_t)g[REG_R15];
	regs[UNW_X86_64_RIP] = (uintptr_t)g[REG_RIP];
}

uintptr_t pl__regs_pc(const uintptr_t regs[PL_REGS_MAX])
{
	return regs[UNW_X86_64_RIP];
}

uintptr_t pl__regs_sp(const uintptr_t regs[PL_REGS_MAX])
{
	return regs[UNW_X86_64_RSP];
}

int pl__regs_slot(int unw_reg)
{
	return unw_reg >= UNW_X86_64_RAX && unw_reg <= UNW_X86_64_RIP ? unw_reg : -1;
}

void pl__regs_mend_space(void *space, const void *accessors)
{
	(void)space;
	(void)accessors;
}
