/* liblookupa.so, dlopened RTLD_LOCAL by lookup_scope.c; it needs
 * liblookupb.so and finds lookup_b_value with dlsym(RTLD_DEFAULT), which
 * glibc searches in the caller's own scope: through the shim it must still
 * be found. */
#include <dlfcn.h>

__attribute__((visibility("default"))) int lookup_a_finds_b(void);
int lookup_b_value(void);

int lookup_a_finds_b(void)
{
	int (*b)(void);
	void *p = dlsym(RTLD_DEFAULT, "lookup_b_value");

	if (!p)
		return -1;
	__builtin_memcpy(&b, &p, sizeof(b));
	return b() + 0 * lookup_b_value();
}
