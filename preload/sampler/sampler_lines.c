/* Source lines and static function names through elfutils libdw, on the
 * sampler thread only (it reads ELF and DWARF files, allocates, and is
 * not async-signal-safe). The module list is re-read from /proc/self/maps
 * each window, so libraries loaded since are found; modules unchanged
 * since the last window keep their parsed debug information. */
#include "sampler.h"

#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};
static Dwfl *dwfl;
static bool broken; /* libdw failed once: names from dladdr alone */

void pl__lines_refresh(void)
{
	if (broken)
		return;
	if (!dwfl) {
		dwfl = dwfl_begin(&callbacks);
		if (!dwfl) {
			broken = true;
			return;
		}
	}
	dwfl_report_begin(dwfl);
	if (dwfl_linux_proc_report(dwfl, getpid()) != 0 ||
	    dwfl_report_end(dwfl, NULL, NULL) != 0) {
		dwfl_end(dwfl);
		dwfl = NULL;
		broken = true;
	}
}

static Dwfl_Module *module_of(uintptr_t pc)
{
	if (!dwfl) {
		pl__lines_refresh();
		if (!dwfl)
			return NULL;
	}
	return dwfl_addrmodule(dwfl, (Dwarf_Addr)pc);
}

bool pl__line_of(uintptr_t pc, char *out, size_t cap)
{
	Dwfl_Module *m = module_of(pc);
	Dwfl_Line *line;
	const char *file, *slash;
	int lineno = 0;

	if (!m || !(line = dwfl_module_getsrc(m, (Dwarf_Addr)pc)))
		return false;
	file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	if (!file || lineno <= 0)
		return false;
	slash = strrchr(file, '/');
	return (size_t)snprintf(out, cap, "%s:%d", slash ? slash + 1 : file, lineno) < cap;
}

bool pl__symbol_of(uintptr_t pc, char *out, size_t cap)
{
	Dwfl_Module *m = module_of(pc);
	const char *name;
	GElf_Off offset = 0;
	GElf_Sym sym;

	/* the symbol pc lies inside: libdw also offers the nearest one below
	 * (brk's name for code that is not brk's); then module+offset is the
	 * truth */
	if (!m || !(name = dwfl_module_addrinfo(m, (Dwarf_Addr)pc, &offset, &sym, NULL, NULL, NULL)))
		return false;
	if (sym.st_size > 0 ? offset >= sym.st_size : offset != 0)
		return false;
	return (size_t)snprintf(out, cap, "%s", name) < cap;
}
