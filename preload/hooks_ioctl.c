/* The exported ioctl hooks (and MIPS cacheflush): the shim's hottest path.
 *
 * libc declares ioctl variadic, but every ABI perflink builds for (x86_64,
 * i386, AArch64, ARM EABI, MIPS o32/n64, RISC-V) passes the third argument
 * of a variadic call exactly where a call with a third named parameter
 * would be, which is what libc's own assembly ioctl relies on. Defined
 * with three named parameters, here where <sys/ioctl.h> is not included,
 * the dormant hook is a flag test and a tail jump into libc: no va_list on
 * the stack, no frame of its own.
 *
 * The calls onward go through the variadic pointer type, so that a C
 * implementation further down the chain (another interposer) reads its
 * arguments the way it expects (on x86_64: %al holds the vector count). */
#undef _FILE_OFFSET_BITS
#undef _TIME_BITS

#include <sys/types.h>
#ifdef __mips__
#include <sys/cachectl.h>
#endif

#include "profile.h"
#include "real.h"

#define PL_EXPORT __attribute__((visibility("default")))
#define ACTIVE() __builtin_expect(pl__profile_on, 0)

PL_EXPORT int ioctl(int fd, pl_ioctl_req req, void *arg);
PL_EXPORT int ioctl(int fd, pl_ioctl_req req, void *arg)
{
	if (ACTIVE())
		return pl__profile_ioctl(pl__real.ioctl, fd, req, arg,
					 __builtin_return_address(0));
	return pl__real.ioctl(fd, req, arg);
}

/* 32-bit glibc 2.34+ compiles ioctl() in _TIME_BITS=64 programs to this
 * name. 64-bit ABIs have no such symbol and no caller for it, so it is not
 * exported there. */
#if defined(__GLIBC__) && defined(__TIMESIZE) && __TIMESIZE == 32
PL_EXPORT int __ioctl_time64(int fd, unsigned long req, void *arg);
PL_EXPORT int __ioctl_time64(int fd, unsigned long req, void *arg)
{
	if (ACTIVE())
		return pl__profile_ioctl(pl__real.ioctl_time64, fd, req, arg,
					 __builtin_return_address(0));
	return pl__real.ioctl_time64(fd, req, arg);
}
#endif

/* MIPS has no cache-maintenance ioctl in the mainline kernel: user space
 * (Ingenic's libimp among others) calls cacheflush(2). */
#ifdef __mips__
PL_EXPORT int cacheflush(void *addr, int bytes, int cache)
{
	if (ACTIVE())
		return pl__profile_cacheflush(addr, bytes, cache, __builtin_return_address(0));
	return pl__real.cacheflush(addr, bytes, cache);
}
#endif
