/* debug_files.h in a perflink-host built without elfutils' libdw: no
 * debug file can be read, and --sysroot says so. */
#include "debug_files.h"

#include <errno.h>
#include <stddef.h>

struct pl_debug_files *pl__debug_files_new(const struct pl_symbol_dirs *dirs, int *err)
{
	(void)dirs;
	*err = -ENOTSUP;
	return NULL;
}

void pl__debug_files_free(struct pl_debug_files *df)
{
	(void)df;
}

bool pl__debug_files_name(struct pl_debug_files *df, const struct pl_recorded_module *m,
			  uint64_t offset, bool want_line, struct pl_debug_name *out)
{
	(void)df, (void)m, (void)offset, (void)want_line, (void)out;
	return false;
}
