/* Timing and accounting of measured calls. */
#include "profile.h"
#include "clock.h"
#include "dormant.h"
#include "fdtab.h"
#include "kernel_abi.h"
#include "reporter.h"
#include "stages.h"
#include "stats.h"
#include "user_read.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/videodev2.h>

int pl__profile_on PL_DORMANT_STATE; /* read by every hook and the destructor */

#define KGSL_MAX_OBJS 64 /* a sync of more objects counts only the first ones */

static const struct pl_rule *match(uint32_t code, int fd)
{
	const struct pl_rule *r;
	uint32_t mask = 0;
	bool have_mask = false;
	unsigned n, i;

	r = pl__stages_lookup(code, &n);
	if (!r)
		return NULL;
	for (i = 0; i < n; i++, r++) {
		if (r->pattern_bit == 0)
			return r;
		if (!have_mask) {
			mask = pl__fd_patterns(fd);
			have_mask = true;
		}
		if (mask & r->pattern_bit)
			return r;
	}
	return NULL;
}

/* Size of the buffer behind fd (a dma-buf): kernels since 5.3 give each
 * dma-buf its own inode with the size; older ones answer llseek(SEEK_END). */
static uint64_t buffer_bytes(int fd)
{
	struct stat st;
	off_t end;

	if (fstat(fd, &st) == 0 && st.st_size > 0)
		return (uint64_t)st.st_size;
	end = lseek(fd, 0, SEEK_END);
	return end > 0 ? (uint64_t)end : 0;
}

static uint64_t extract(const void *arg, const struct pl_extract *x)
{
	const unsigned char *src = (const unsigned char *)arg + x->offset;
	unsigned char buf[8];
	uint64_t v64;
	uint32_t v32;
	uint16_t v16;

	if (!arg)
		return 0;
	if (x->within_ioc)
		memcpy(buf, src, x->width);
	/* a field beyond the size the request code declares is one the
	 * driver reads by private convention: the pointer may not reach it */
	else if (pl__user_read(buf, src, x->width) < 0)
		return 0;
	switch (x->width) {
	case 1:
		return buf[0];
	case 2:
		memcpy(&v16, buf, 2);
		return v16;
	case 4:
		memcpy(&v32, buf, 4);
		return v32;
	default:
		memcpy(&v64, buf, 8);
		return v64;
	}
}

static bool is_capture(uint32_t type)
{
	return type == V4L2_BUF_TYPE_VIDEO_CAPTURE || type == V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;
}

static bool is_bitstream(uint32_t fourcc)
{
	static const uint32_t formats[] = {
		V4L2_PIX_FMT_H264,  V4L2_PIX_FMT_H264_NO_SC, V4L2_PIX_FMT_HEVC,
		V4L2_PIX_FMT_MJPEG, V4L2_PIX_FMT_JPEG,       V4L2_PIX_FMT_VP8,
		V4L2_PIX_FMT_VP9,   V4L2_PIX_FMT_MPEG4,      V4L2_PIX_FMT_MPEG2,
		V4L2_PIX_FMT_H263,
	};
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (formats[i] == fourcc)
			return true;
	}
	return false;
}

static uint64_t v4l2_payload_bytes(const struct v4l2_buffer *b)
{
	uint64_t bytes = 0;
	uint32_t i;

	if (b->type == V4L2_BUF_TYPE_VIDEO_CAPTURE)
		return b->bytesused;
	if (!b->m.planes)
		return 0;
	for (i = 0; i < b->length && i < VIDEO_MAX_PLANES; i++)
		bytes += b->m.planes[i].bytesused;
	return bytes;
}

static uint64_t kgsl_gpuobj_bytes(const struct pl_kgsl_gpuobj_sync *s)
{
	const char *objs = (const char *)(uintptr_t)s->objs;
	uint64_t bytes = 0, len;
	unsigned i;

	/* the kernel read count entries of obj_len bytes each to succeed */
	if (!objs || s->obj_len < offsetof(struct pl_kgsl_gpuobj_sync_obj, id))
		return 0;
	for (i = 0; i < s->count && i < KGSL_MAX_OBJS; i++) {
		memcpy(&len, objs + (size_t)i * s->obj_len +
				     offsetof(struct pl_kgsl_gpuobj_sync_obj, length),
		       sizeof(len));
		bytes += len;
	}
	return bytes;
}

/* After a successful call: what the argument says. Returns whether the
 * call completed a frame. The kernel has just read or written the
 * argument of every built-in special, so reading it here cannot fault. */
static bool after_success(const struct pl_rule *r, int fd, void *arg, struct pl_sample *s)
{
	bool frame = pl__stages.stage[r->stage].boundary;

	switch (r->special) {
	case PL_SPECIAL_V4L2_DQBUF: {
		const struct v4l2_buffer *b = arg;

		frame = frame && is_capture(b->type);
		if (is_capture(b->type) && pl__fd_has_flag(fd, PL_FD_COMPRESSED))
			s->stream_bytes += v4l2_payload_bytes(b);
		break;
	}
	case PL_SPECIAL_V4L2_FMT: {
		const struct v4l2_format *f = arg;

		if (f->type == V4L2_BUF_TYPE_VIDEO_CAPTURE)
			pl__fd_set_flag(fd, PL_FD_COMPRESSED, is_bitstream(f->fmt.pix.pixelformat));
		else if (f->type == V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE)
			pl__fd_set_flag(fd, PL_FD_COMPRESSED,
					is_bitstream(f->fmt.pix_mp.pixelformat));
		break;
	}
	case PL_SPECIAL_DMABUF_SYNC:
		s->cache_bytes += buffer_bytes(fd);
		break;
	case PL_SPECIAL_ION_SYNC:
		s->cache_bytes += buffer_bytes(((const struct pl_ion_fd_data *)arg)->fd);
		break;
	case PL_SPECIAL_KGSL_SYNC_CACHE: {
		const struct pl_kgsl_gpumem_sync_cache *k = arg;

		if (k->op & PL_KGSL_CACHE_RANGE)
			s->cache_bytes += k->length;
		break;
	}
	case PL_SPECIAL_KGSL_GPUOBJ_SYNC:
		s->cache_bytes += kgsl_gpuobj_bytes(arg);
		break;
	default:
		break;
	}
	if (r->cache_bytes.width)
		s->cache_bytes += extract(arg, &r->cache_bytes);
	if (r->stream_bytes.width)
		s->stream_bytes += extract(arg, &r->stream_bytes);
	return frame;
}

int pl__profile_ioctl(pl_ioctl_fn real, int fd, pl_ioctl_req req, void *arg, void *site)
{
	int saved_errno = errno, ret, err;
	const struct pl_rule *r;
	struct pl_sample s;
	uint64_t t0, c0, t1, c1;
	bool frame = false;

	r = match((uint32_t)req, fd);
	errno = saved_errno; /* classifying an fd may have touched it */
	if (!r)
		return real(fd, req, arg);

	/* the CPU interval nests inside the wall interval */
	t0 = pl__mono_ns();
	c0 = pl__thread_cpu_ns();
	errno = saved_errno;
	ret = real(fd, req, arg);
	err = errno;
	c1 = pl__thread_cpu_ns();
	t1 = pl__mono_ns();

	memset(&s, 0, sizeof(s));
	s.stage = r->stage;
	s.start_ns = t0;
	s.ret = ret;
	s.err = err;
	s.wall_ns = t1 > t0 ? t1 - t0 : 0;
	s.cpu_ns = c1 > c0 ? c1 - c0 : 0;
	if (pl__stages.stage[r->stage].kind == PL_KIND_CACHE)
		s.site = (uintptr_t)site;
	if (ret >= 0) {
		const struct pl_stage *st = &pl__stages.stage[r->stage];

		frame = after_success(r, fd, arg, &s);
		/* from now on, a poll on fd waits for this stage (waits.h) */
		if (st->wait_stage)
			pl__fd_learn_wait(fd, st->wait_stage, st->boundary);
	}
	pl__stats_record(&s);
	if (frame)
		pl__report_frame_completed();
	errno = err;
	return ret;
}

int pl__profile_cacheflush(void *addr, int bytes, int cache, void *site)
{
	int stage = pl__stages.cacheflush_stage, ret, err;
	struct pl_sample s;
	uint64_t t0, c0, t1, c1;

	if (stage < 0)
		return pl__real.cacheflush(addr, bytes, cache);
	t0 = pl__mono_ns();
	c0 = pl__thread_cpu_ns();
	ret = pl__real.cacheflush(addr, bytes, cache);
	err = errno;
	c1 = pl__thread_cpu_ns();
	t1 = pl__mono_ns();

	memset(&s, 0, sizeof(s));
	s.stage = (unsigned)stage;
	s.start_ns = t0;
	s.ret = ret;
	s.err = err;
	s.wall_ns = t1 > t0 ? t1 - t0 : 0;
	s.cpu_ns = c1 > c0 ? c1 - c0 : 0;
	s.site = (uintptr_t)site;
	if (ret >= 0 && bytes > 0)
		s.cache_bytes = (uint64_t)bytes;
	pl__stats_record(&s);
	if (pl__stages.stage[stage].boundary && ret >= 0)
		pl__report_frame_completed();
	errno = err;
	return ret;
}
