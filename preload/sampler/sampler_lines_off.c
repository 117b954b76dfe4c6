/* Without libdw: no source lines, and names from dladdr alone. */
#include "sampler.h"

void pl__lines_refresh(void)
{
}

bool pl__line_of(uintptr_t pc, char *out, size_t cap)
{
	(void)pc;
	(void)out;
	(void)cap;
	return false;
}

bool pl__symbol_of(uintptr_t pc, char *out, size_t cap)
{
	(void)pc;
	(void)out;
	(void)cap;
	return false;
}
