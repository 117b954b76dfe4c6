/* C++ names as people read them: "llvm::APFloatBase::IEEEdouble()", not
 * "_ZN4llvm11APFloatBase10IEEEdoubleEv". On the sampler thread only.
 *
 * The demangler is the C++ runtime's own __cxa_demangle, taken from a
 * libstdc++ the program already has loaded (RTLD_NOLOAD: never loaded for
 * us; a program with mangled names has one, possibly opened RTLD_LOCAL
 * under a driver, hence the handle rather than the global scope). Without
 * one the names stay as they are. */
#include "sampler.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*cxa_demangle_fn)(const char *mangled, char *out, size_t *len, int *status);

static cxa_demangle_fn demangler;
static void *runtime; /* held: the function must not be unloaded under us */

static void find_demangler(void)
{
	static const char *const runtimes[] = { "libstdc++.so.6", "libc++.so.1" };
	size_t i;
	void *sym;

	for (i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]) && !demangler; i++) {
		runtime = dlopen(runtimes[i], RTLD_NOW | RTLD_NOLOAD);
		if (!runtime)
			continue;
		sym = dlsym(runtime, "__cxa_demangle");
		if (sym)
			memcpy(&demangler, &sym, sizeof(demangler)); /* POSIX: fits */
		else
			dlclose(runtime);
	}
}

void pl__demangle_window(void)
{
	if (!demangler)
		find_demangler(); /* a runtime loaded since the last window */
}

/* The whole mangled name goes in: one cut to fit a buffer no longer
 * demangles (LLVM's names run past 64 characters), and would be shown
 * mangled. The readable form is cut instead. */
void pl__demangle(const char *name, char *out, size_t cap)
{
	char *plain = NULL;
	int status = -1;

	if (demangler && strncmp(name, "_Z", 2) == 0)
		plain = demangler(name, NULL, NULL, &status);
	snprintf(out, cap, "%s", plain && status == 0 ? plain : name);
	free(plain);
}
