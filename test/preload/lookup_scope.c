/* dlsym's caller-dependent lookups through the shim's dlsym:
 * getppid() through a preloaded RTLD_NEXT interposer (libplnext.so) equals
 * the kernel's answer; a library dlopened RTLD_LOCAL finds its own
 * dependency's symbol with RTLD_DEFAULT.
 *
 *   lookup_scope LIBLOOKUPA
 *
 * Prints "next ok|bad default ok|bad". */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int (*finds_b)(void) = NULL;
	void *lib, *p;

	if (argc != 2)
		return 2;
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	p = lib ? dlsym(lib, "lookup_a_finds_b") : NULL;
	if (p)
		memcpy(&finds_b, &p, sizeof(finds_b));
	printf("next %s default %s\n", getppid() == (pid_t)syscall(SYS_getppid) ? "ok" : "bad",
	       finds_b && finds_b() == 42 ? "ok" : "bad");
	return 0;
}
