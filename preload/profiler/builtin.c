/* Built-in stages: V4L2, dma-buf sync, and the legacy ION and KGSL cache
 * ioctls that Android-derived vendor kernels still carry. The request codes
 * encode the structure size, so each layout this ABI can see gets its own
 * rule. */
#include "stages.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/videodev2.h>

#include "kernel_abi.h"

struct builtin {
	const char *stage;
	enum pl_stage_kind kind;
	const char *pattern;
	uint32_t code;
	enum pl_special special;
	uint16_t cache_offset; /* cache-bytes field, when cache_width != 0 */
	uint8_t cache_width;
};

#define V4L2(name, kind, code) { "v4l2_" name, kind, "*", (uint32_t)(code), PL_SPECIAL_NONE, 0, 0 }
#define ION_FLUSH(nr, type)                                                               \
	{ "ion_cache", PL_KIND_CACHE, "/dev/ion", (uint32_t)_IOWR('M', nr, struct type),   \
	  PL_SPECIAL_NONE, offsetof(struct type, length), 4 },                            \
	{ "ion_cache", PL_KIND_CACHE, "/dev/ion", (uint32_t)_IOWR('I', 20 + (nr), struct type), \
	  PL_SPECIAL_NONE, offsetof(struct type, length), 4 }

static const struct builtin builtins[] = {
	V4L2("querycap", PL_KIND_OTHER, VIDIOC_QUERYCAP),
	{ "v4l2_g_fmt", PL_KIND_OTHER, "*", (uint32_t)VIDIOC_G_FMT, PL_SPECIAL_V4L2_FMT, 0, 0 },
	{ "v4l2_s_fmt", PL_KIND_OTHER, "*", (uint32_t)VIDIOC_S_FMT, PL_SPECIAL_V4L2_FMT, 0, 0 },
	V4L2("try_fmt", PL_KIND_OTHER, VIDIOC_TRY_FMT),
	V4L2("reqbufs", PL_KIND_OTHER, VIDIOC_REQBUFS),
	V4L2("create_bufs", PL_KIND_OTHER, VIDIOC_CREATE_BUFS),
	V4L2("querybuf", PL_KIND_OTHER, VIDIOC_QUERYBUF),
	V4L2("prepare_buf", PL_KIND_QUEUE, VIDIOC_PREPARE_BUF),
	V4L2("qbuf", PL_KIND_QUEUE, VIDIOC_QBUF),
	{ "v4l2_dqbuf", PL_KIND_DEQUEUE, "*", (uint32_t)VIDIOC_DQBUF, PL_SPECIAL_V4L2_DQBUF, 0, 0 },
#ifdef VIDIOC_EXPBUF
	V4L2("expbuf", PL_KIND_OTHER, VIDIOC_EXPBUF),
#endif
	V4L2("streamon", PL_KIND_OTHER, VIDIOC_STREAMON),
	V4L2("streamoff", PL_KIND_OTHER, VIDIOC_STREAMOFF),
	V4L2("g_parm", PL_KIND_OTHER, VIDIOC_G_PARM),
	V4L2("s_parm", PL_KIND_OTHER, VIDIOC_S_PARM),
	V4L2("g_ctrl", PL_KIND_OTHER, VIDIOC_G_CTRL),
	V4L2("s_ctrl", PL_KIND_OTHER, VIDIOC_S_CTRL),
	V4L2("g_ext_ctrls", PL_KIND_OTHER, VIDIOC_G_EXT_CTRLS),
	V4L2("s_ext_ctrls", PL_KIND_OTHER, VIDIOC_S_EXT_CTRLS),
	V4L2("g_selection", PL_KIND_OTHER, VIDIOC_G_SELECTION),
	V4L2("s_selection", PL_KIND_OTHER, VIDIOC_S_SELECTION),
	V4L2("encoder_cmd", PL_KIND_SUBMIT, VIDIOC_ENCODER_CMD),
	V4L2("decoder_cmd", PL_KIND_SUBMIT, VIDIOC_DECODER_CMD),
	V4L2("subscribe_event", PL_KIND_OTHER, VIDIOC_SUBSCRIBE_EVENT),
	V4L2("dqevent", PL_KIND_DEQUEUE, VIDIOC_DQEVENT),

	{ "dmabuf_sync", PL_KIND_CACHE, "*", (uint32_t)PL_DMA_BUF_IOCTL_SYNC,
	  PL_SPECIAL_DMABUF_SYNC, 0, 0 },

	{ "ion_sync", PL_KIND_CACHE, "/dev/ion", (uint32_t)PL_ION_IOC_SYNC, PL_SPECIAL_ION_SYNC,
	  0, 0 },
	ION_FLUSH(0, pl_ion_flush_data), /* clean */
	ION_FLUSH(1, pl_ion_flush_data), /* invalidate */
	ION_FLUSH(2, pl_ion_flush_data), /* clean + invalidate */
	ION_FLUSH(0, pl_ion_flush_data_ptr),
	ION_FLUSH(1, pl_ion_flush_data_ptr),
	ION_FLUSH(2, pl_ion_flush_data_ptr),

	{ "kgsl_cache_sync", PL_KIND_CACHE, "/dev/kgsl*",
	  (uint32_t)_IOW(PL_KGSL_IOC_TYPE, 0x37, struct pl_kgsl_gpumem_sync_cache),
	  PL_SPECIAL_KGSL_SYNC_CACHE, 0, 0 },
	{ "kgsl_cache_sync", PL_KIND_CACHE, "/dev/kgsl*",
	  (uint32_t)_IOWR(PL_KGSL_IOC_TYPE, 0x3C, struct pl_kgsl_gpumem_sync_cache_bulk),
	  PL_SPECIAL_NONE, 0, 0 },
	{ "kgsl_cache_sync", PL_KIND_CACHE, "/dev/kgsl*",
	  (uint32_t)_IOW(PL_KGSL_IOC_TYPE, 0x49, struct pl_kgsl_gpuobj_sync),
	  PL_SPECIAL_KGSL_GPUOBJ_SYNC, 0, 0 },
};

int pl__stages_add_builtins(char *err, size_t errlen)
{
	size_t i;
	int s, r;

	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
		const struct builtin *b = &builtins[i];
		struct pl_rule rule;

		memset(&rule, 0, sizeof(rule));
		s = pl__stages_add_stage(b->stage, b->kind, 0, err, errlen);
		if (s < 0)
			return s;
		r = pl__stages_add_pattern(b->pattern, &rule.pattern_bit, err, errlen);
		if (r < 0)
			return r;
		rule.code = b->code;
		rule.stage = (uint16_t)s;
		rule.special = (uint8_t)b->special;
		rule.cache_bytes.offset = b->cache_offset;
		rule.cache_bytes.width = b->cache_width;
		rule.cache_bytes.within_ioc = 1;
		r = pl__stages_add_rule(&rule, err, errlen);
		if (r < 0)
			return r;
	}
#ifdef __mips__
	s = pl__stages_add_stage("cacheflush", PL_KIND_CACHE, 0, err, errlen);
	if (s < 0)
		return s;
	pl__stages.cacheflush_stage = s;
#endif
	return 0;
}
