/* Reading memory at an address the target passed to a call, without
 * trusting that it is mapped: the kernel refuses a bad pointer with EFAULT,
 * and the shim must not turn that into a SIGSEGV of the target. */
#ifndef PL_PRELOAD_USER_READ_H
#define PL_PRELOAD_USER_READ_H

#include <stddef.h>

/* Copy len bytes at src to dst through process_vm_readv on this process:
 * 0; -EFAULT when not all of it is readable; -ENOSYS where the call is
 * missing or refused (qemu-user, a seccomp filter), for the caller to
 * decide. Async-signal-safe; errno is left alone. */
int pl__user_read(void *dst, const void *src, size_t len);

#endif
