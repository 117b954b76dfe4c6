/* Kernel interfaces that older device kernels (3.10, 4.4, 4.9) or older C
 * libraries lack, each with its fallback chosen at run time and reported once
 * through the probe registry (probe.h, which also lets tests force the
 * fallback with PERFLINK_PROBE_FAIL).
 *
 * Both return a new descriptor or a negative errno and leave errno alone.
 * Not async-signal-safe (they may log). */
#ifndef PL_COMMON_KERNEL_COMPAT_H
#define PL_COMMON_KERNEL_COMPAT_H

#include <stddef.h>

/* Anonymous shared memory of size bytes to map and to pass over a unix
 * socket: memfd_create(MFD_CLOEXEC | MFD_ALLOW_SEALING) where the kernel has
 * it (3.17), else an already unlinked file in /dev/shm, $TMPDIR or /tmp
 * opened O_CLOEXEC (probe "memfd"). name labels the memfd (seen in
 * /proc/PID/fd) and the temporary file; it is not a path. Sealing is
 * possible only on a memfd. */
int pl__shm_fd_create(const char *name, size_t size);

/* eventfd(initval, EFD_NONBLOCK | EFD_CLOEXEC); on a kernel that refuses the
 * flags (EINVAL, before 2.6.27) eventfd(initval, 0) and both flags set with
 * fcntl (probe "eventfd_flags"). */
int pl__eventfd_create(unsigned initval);

/* Judges io_setup's result (0 or a negative errno) for the link's native
 * AIO; what names the context in messages. The caller skips io_setup and
 * passes -ENOSYS when pl__probe_forced(PL_PROBE_FFS_AIO). ENOSYS (a kernel
 * without CONFIG_AIO, qemu-user) and EINVAL are reported once (probe
 * "ffs_aio") and return -ENOSYS, on which the link falls back to synchronous
 * writes; any other error is logged as a warning and returned as it is. */
int pl__aio_setup_result(int err, const char *what);

#endif
