/* Debug files by build-id, for naming a module's offsets on the host
 * (symbolize.c): found under a sysroot or a debug folder, checked to be
 * the module's own (their GNU build-id is the one the device read), and
 * read with elfutils' libdw (debug_files.c; debug_files_off.c in a build
 * without it). */
#ifndef PL_HOST_DEBUG_FILES_H
#define PL_HOST_DEBUG_FILES_H

#include "symbolize.h"

#include <stdbool.h>
#include <stdint.h>

struct pl_recorded_module;
struct pl_debug_files;

/* What an offset is: the function (the symbol whose extent holds it), and
 * its source line where the DWARF has one (file: a base name, as the
 * device's report gives it; NULL, line 0: none). Valid until the next
 * call or pl__debug_files_free. */
struct pl_debug_name {
	const char *function;
	const char *file;
	int line;
};

/* NULL: no memory, or no libdw (-ENOTSUP in *err). */
struct pl_debug_files *pl__debug_files_new(const struct pl_symbol_dirs *dirs, int *err);
/* Say, once each, the modules whose frames no file could name. */
void pl__debug_files_free(struct pl_debug_files *df);
/* Name offset (in the ELF file's vaddr space) of module m, with its line
 * when want_line. The first call for a build-id finds its file: a file
 * whose build-id differs, or that has none, is refused (said once) and
 * the next place tried. False: unnamed (no file, no symbol holds it, or
 * m has no build-id). */
bool pl__debug_files_name(struct pl_debug_files *df, const struct pl_recorded_module *m,
			  uint64_t offset, bool want_line, struct pl_debug_name *out);

#endif
