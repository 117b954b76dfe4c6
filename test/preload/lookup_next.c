/* libplnext.so, preloaded after the shim: an interposer of getppid that
 * finds the real one with dlsym(RTLD_NEXT), as libfaketime and many tools
 * do. Through a dlsym that lost its caller's address, RTLD_NEXT would
 * find this very function again and recurse until the stack ran out. */
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

__attribute__((visibility("default"))) pid_t getppid(void);

pid_t getppid(void)
{
	pid_t (*real)(void);
	void *p = dlsym(RTLD_NEXT, "getppid");

	if (!p)
		return -1;
	memcpy(&real, &p, sizeof(real));
	return real();
}
