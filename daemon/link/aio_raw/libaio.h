/* The part of libaio's API the link uses, over the raw system calls, for C
 * libraries that have no libaio built for them (musl: Debian's libaio is
 * built against glibc). meson puts this folder on the include path only
 * when it chooses the syscalls (-Daio=syscalls, or auto without libaio), so
 * the link's files include <libaio.h> either way.
 *
 * Same layout, names and conventions as libaio 0.3.11x: struct iocb mirrors
 * the kernel's (each pointer and long padded to 64 bits, on the side the
 * byte order needs), and the calls return a negative errno instead of
 * setting errno. */
#ifndef PL_AIO_RAW_LIBAIO_H
#define PL_AIO_RAW_LIBAIO_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#if __SIZEOF_LONG__ == 8
#define PL_AIO_PAD(x, y) x, y
#define PL_AIO_PADPTR(x, y) x
#define PL_AIO_PADUL(x, y) unsigned long x
#elif __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PL_AIO_PAD(x, y) x, y
#define PL_AIO_PADPTR(x, y) x; unsigned y
#define PL_AIO_PADUL(x, y) unsigned long x; unsigned y
#else
#define PL_AIO_PAD(x, y) unsigned y; x
#define PL_AIO_PADPTR(x, y) unsigned y; x
#define PL_AIO_PADUL(x, y) unsigned y; unsigned long x
#endif

typedef struct io_context *io_context_t;

typedef enum io_iocb_cmd {
	IO_CMD_PREAD = 0,
	IO_CMD_PWRITE = 1,
	IO_CMD_FSYNC = 2,
	IO_CMD_FDSYNC = 3,
	IO_CMD_NOOP = 6,
	IO_CMD_PREADV = 7,
	IO_CMD_PWRITEV = 8,
} io_iocb_cmd_t;

struct io_iocb_common {
	PL_AIO_PADPTR(void *buf, __pad1);
	PL_AIO_PADUL(nbytes, __pad2);
	long long offset;
	long long __pad3;
	unsigned flags;
	unsigned resfd;
};

struct io_iocb_vector {
	PL_AIO_PADPTR(const struct iovec *vec, __pad1);
	PL_AIO_PADUL(nr, __pad2);
	long long offset;
};

struct iocb {
	PL_AIO_PADPTR(void *data, __pad1);
	PL_AIO_PAD(unsigned key, aio_rw_flags);
	short aio_lio_opcode;
	short aio_reqprio;
	int aio_fildes;
	union {
		struct io_iocb_common c;
		struct io_iocb_vector v;
	} u;
};

struct io_event {
	PL_AIO_PADPTR(void *data, __pad1);
	PL_AIO_PADPTR(struct iocb *obj, __pad2);
	PL_AIO_PADUL(res, __pad3);
	PL_AIO_PADUL(res2, __pad4);
};

#undef PL_AIO_PAD
#undef PL_AIO_PADPTR
#undef PL_AIO_PADUL

/* the kernel's struct iocb and struct io_event */
_Static_assert(sizeof(struct iocb) == 64, "struct iocb as the kernel has it");
_Static_assert(sizeof(struct io_event) == 32, "struct io_event as the kernel has it");

#define PL_AIO_IOCB_FLAG_RESFD 1u

/* syscall() sets errno; libaio's calls return -errno and leave it alone */
static inline long pl__aio_ret(long r, int saved_errno)
{
	long ret = r < 0 ? -(long)errno : r;

	errno = saved_errno;
	return ret;
}

static inline int io_setup(int maxevents, io_context_t *ctxp)
{
	int e = errno;

	return (int)pl__aio_ret(syscall(SYS_io_setup, maxevents, ctxp), e);
}

static inline int io_destroy(io_context_t ctx)
{
	int e = errno;

	return (int)pl__aio_ret(syscall(SYS_io_destroy, ctx), e);
}

static inline int io_submit(io_context_t ctx, long nr, struct iocb *ios[])
{
	int e = errno;

	return (int)pl__aio_ret(syscall(SYS_io_submit, ctx, nr, ios), e);
}

static inline int io_cancel(io_context_t ctx, struct iocb *iocb, struct io_event *evt)
{
	int e = errno;

	return (int)pl__aio_ret(syscall(SYS_io_cancel, ctx, iocb, evt), e);
}

static inline int io_getevents(io_context_t ctx, long min_nr, long nr, struct io_event *events,
			       struct timespec *timeout)
{
	int e = errno;

#ifdef SYS_io_getevents
	/* the old call takes the kernel's {long, long} timespec: only where
	 * time_t is a long (not 32-bit targets with a 64-bit time_t) */
	if (sizeof(struct timespec) == 2 * sizeof(long))
		return (int)pl__aio_ret(syscall(SYS_io_getevents, ctx, min_nr, nr, events, timeout),
					e);
#endif
#ifdef SYS_io_pgetevents_time64
	return (int)pl__aio_ret(
		syscall(SYS_io_pgetevents_time64, ctx, min_nr, nr, events, timeout, NULL), e);
#else
	(void)ctx, (void)min_nr, (void)nr, (void)events, (void)timeout, (void)e;
	return -ENOSYS;
#endif
}

static inline void io_prep_pread(struct iocb *iocb, int fd, void *buf, size_t count,
				 long long offset)
{
	memset(iocb, 0, sizeof(*iocb));
	iocb->aio_fildes = fd;
	iocb->aio_lio_opcode = IO_CMD_PREAD;
	iocb->u.c.buf = buf;
	iocb->u.c.nbytes = count;
	iocb->u.c.offset = offset;
}

static inline void io_prep_pwrite(struct iocb *iocb, int fd, void *buf, size_t count,
				  long long offset)
{
	memset(iocb, 0, sizeof(*iocb));
	iocb->aio_fildes = fd;
	iocb->aio_lio_opcode = IO_CMD_PWRITE;
	iocb->u.c.buf = buf;
	iocb->u.c.nbytes = count;
	iocb->u.c.offset = offset;
}

static inline void io_prep_pwritev(struct iocb *iocb, int fd, const struct iovec *iov, int iovcnt,
				   long long offset)
{
	memset(iocb, 0, sizeof(*iocb));
	iocb->aio_fildes = fd;
	iocb->aio_lio_opcode = IO_CMD_PWRITEV;
	iocb->u.c.buf = (void *)(uintptr_t)iov; /* the kernel's aio_buf */
	iocb->u.c.nbytes = (unsigned long)iovcnt;
	iocb->u.c.offset = offset;
}

static inline void io_set_eventfd(struct iocb *iocb, int eventfd)
{
	iocb->u.c.flags |= PL_AIO_IOCB_FLAG_RESFD;
	iocb->u.c.resfd = (unsigned)eventfd;
}

#endif
