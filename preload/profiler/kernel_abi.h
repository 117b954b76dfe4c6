/* Kernel structures the shim reads that device toolchains may not have
 * headers for: dma-buf sync (headers since 4.6), legacy ION (staging, gone
 * in 5.11) and KGSL (Qualcomm's out-of-tree GPU driver). Declared from the
 * public UAPI; sizes follow the ABI being built, as the kernel's do. */
#ifndef PL_PRELOAD_KERNEL_ABI_H
#define PL_PRELOAD_KERNEL_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>

/* <linux/dma-buf.h> appeared in 4.6 headers; device toolchains may be older. */
struct pl_dma_buf_sync {
	uint64_t flags;
};
#define PL_DMA_BUF_IOCTL_SYNC _IOW('b', 0, struct pl_dma_buf_sync)

/* Legacy ION (<= 4.11 staging): the sync ioctl and the MSM cache ioctls. The
 * handle was a pointer in early kernels and an int (ion_user_handle_t) later. */
struct pl_ion_fd_data {
	int handle;
	int fd;
};
struct pl_ion_flush_data {
	int handle;
	int fd;
	void *vaddr;
	unsigned int offset;
	unsigned int length;
};
struct pl_ion_flush_data_ptr {
	void *handle;
	int fd;
	void *vaddr;
	unsigned int offset;
	unsigned int length;
};
#define PL_ION_IOC_SYNC _IOWR('I', 7, struct pl_ion_fd_data)

/* KGSL (Adreno): ranged cache sync, the bulk form, and GPU-object sync. */
#define PL_KGSL_IOC_TYPE 0x09
struct pl_kgsl_gpumem_sync_cache {
	unsigned long gpuaddr;
	unsigned int id;
	unsigned int op;
	size_t offset;
	size_t length;
};
struct pl_kgsl_gpumem_sync_cache_bulk {
	unsigned int *id_list;
	unsigned int count;
	unsigned int op;
	unsigned int pad[2];
};
struct pl_kgsl_gpuobj_sync {
	uint64_t objs;
	unsigned int obj_len;
	unsigned int count;
};

#define PL_KGSL_CACHE_RANGE (1u << 31) /* op flag: offset/length are valid */

/* One entry of the array kgsl_gpuobj_sync.objs points to. */
struct pl_kgsl_gpuobj_sync_obj {
	uint64_t offset;
	uint64_t length;
	unsigned int id;
	unsigned int op;
};

#endif
