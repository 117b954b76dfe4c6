/* Not glibc: the shim exports no dlsym there (lookup_hooks.c says why),
 * so the C library's is the one a plain call reaches. */
#include "real_symbol.h"

#include <dlfcn.h>

void *pl__dlsym_unanswered(void *handle, const char *name)
{
	return dlsym(handle, name);
}
