/* glibc: the C library's dlsym, found by version, since the shim exports
 * a dlsym of its own (lookup_hooks.c) that a plain call would reach. */
#include "dormant.h"
#include "real_symbol.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

/* set by a dormant shim too: its hooks resolve on their first call */
static pl_dlsym_fn libc_dlsym_fn PL_DORMANT_STATE;

/* GLIBC_2.34 where dlsym moved into libc, else each port's first version
 * (x86-64, AArch64, ARM, i386/MIPS). */
pl_dlsym_fn pl__libc_dlsym(void)
{
	static const char *const versions[] = { "GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17",
						"GLIBC_2.4", "GLIBC_2.0" };
	pl_dlsym_fn f = __atomic_load_n(&libc_dlsym_fn, __ATOMIC_ACQUIRE);
	size_t i;
	void *p;

	for (i = 0; !f && i < sizeof(versions) / sizeof(versions[0]); i++) {
		p = dlvsym(RTLD_NEXT, "dlsym", versions[i]);
		if (p) {
			memcpy(&f, &p, sizeof(f)); /* POSIX: a function's address fits */
			__atomic_store_n(&libc_dlsym_fn, f, __ATOMIC_RELEASE);
		}
	}
	return f;
}

/* glibc resolves RTLD_NEXT from its caller's address: here, or (made a
 * jump) whoever called this; both are inside the shim. */
void *pl__dlsym_unanswered(void *handle, const char *name)
{
	pl_dlsym_fn f = pl__libc_dlsym();

	return f ? f(handle, name) : NULL;
}
