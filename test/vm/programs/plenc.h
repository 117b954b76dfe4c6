/* The ioctl interface of /dev/plenc, the vm suite's stand-in for a vendor
 * encoder (cuse_encoder.c serves it, encoder_loop.c drives it). Fixed-size
 * arguments whose sizes are in the request codes, so CUSE's restricted ioctl
 * mode copies them without a retry round. The scenario's stage file
 * (scenarios/profile_encoder.sh) spells the same codes with _IOW/_IOR and
 * reads the flush byte count at offset 8, width 4: keep them in step. */
#ifndef PL_TEST_VM_PLENC_H
#define PL_TEST_VM_PLENC_H

#include <stddef.h>
#include <stdint.h>
#include <linux/ioctl.h>

struct plenc_submit {
	uint32_t frame;
	uint32_t input_bytes;
};

struct plenc_irq {
	uint32_t frame;		/* the frame whose encode completed */
	uint32_t status;	/* 0: done */
};

struct plenc_flush {
	uint64_t addr;
	uint32_t bytes;
	uint32_t dir;		/* PLENC_FLUSH_* */
};

#define PLENC_FLUSH_CLEAN 1

#define PLENC_SUBMIT      _IOW('E', 1, struct plenc_submit)
#define PLENC_WAIT_IRQ    _IOR('E', 2, struct plenc_irq)
#define PLENC_CACHE_FLUSH _IOW('E', 3, struct plenc_flush)

_Static_assert(sizeof(struct plenc_submit) == 8, "stage file says 8");
_Static_assert(sizeof(struct plenc_irq) == 8, "stage file says 8");
_Static_assert(sizeof(struct plenc_flush) == 16, "stage file says 16");
_Static_assert(offsetof(struct plenc_flush, bytes) == 8, "stage file says cache-bytes=8:4");

#endif
