/* The hooks' real definitions, resolved once (real_symbol.h). */
#include "real_symbol.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>

void *pl__real_symbol(void **slot, const char *name, const char *soname)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE), *first = NULL, *h;

	if (p)
		return p;
	p = pl__dlsym_unanswered(RTLD_NEXT, name);
	if (!p && (h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD)) != NULL) {
		p = pl__dlsym_unanswered(h, name);
		dlclose(h); /* RTLD_NOLOAD took a reference of its own */
	}
	if (!p)
		return NULL;
	if (!__atomic_compare_exchange_n(slot, &first, p, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return first; /* filled meanwhile (stand_in.c): that one wins */
	return p;
}
