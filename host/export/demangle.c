/* See demangle.h. The demangler is the C++ runtime's own __cxa_demangle:
 * perflink-host is C and links no C++ runtime, so libstdc++ (or libc++)
 * is opened the first time a mangled name is met, and kept; a machine
 * without either keeps the names mangled and says so once. Writing a
 * demangler of our own would be a few thousand lines of someone else's
 * grammar. */
#include "demangle.h"
#include "log.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*cxa_demangle_fn)(const char *mangled, char *out, size_t *len, int *status);

static cxa_demangle_fn find_demangler(void)
{
	static const char *const runtimes[] = { "libstdc++.so.6", "libc++.so.1" };
	static cxa_demangle_fn demangler;
	static bool looked;
	size_t i;

	if (looked)
		return demangler;
	looked = true;
	for (i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]) && !demangler; i++) {
		void *runtime = dlopen(runtimes[i], RTLD_NOW | RTLD_LOCAL);
		void *sym = runtime ? dlsym(runtime, "__cxa_demangle") : NULL;

		if (sym)
			memcpy(&demangler, &sym, sizeof(demangler)); /* POSIX: fits */
		else if (runtime)
			dlclose(runtime);
	}
	if (!demangler)
		pl__log_warnx("no C++ runtime here (libstdc++.so.6, libc++.so.1) to demangle with: "
			      "C++ names from debug files stay mangled");
	return demangler;
}

char *pl__demangle(const char *name)
{
	cxa_demangle_fn demangler;
	char *plain;
	int status = -1;

	if (strncmp(name, "_Z", 2) != 0 || !(demangler = find_demangler()))
		return NULL;
	plain = demangler(name, NULL, NULL, &status);
	if (status != 0) {
		free(plain);
		return NULL;
	}
	return plain;
}
