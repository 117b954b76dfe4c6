/* A camera-like capture loop for the vm suite: 640x480 YUYV at 25 fps from a
 * V4L2 capture device (vivid in the rig), mmap buffers that are also
 * exported as dma-bufs, and per frame DQBUF, DMA_BUF_IOCTL_SYNC start, a
 * CPU read of the whole frame, sync end, QBUF. Run under the stage profiler,
 * the report must show what this loop did: one DQBUF per frame waiting for
 * the frame period, two syncs per frame.
 *
 *   v4l2_capture DEVICE FRAMES
 *
 * Prints "frames=N bytes=B checksum=C elapsed_ms=E" on success; exits 1
 * with a message naming the failed step otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <linux/videodev2.h>

#define NBUFS 4

struct buffer {
	void *map;
	size_t length;
	int dmabuf_fd;
};

static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do
		ret = ioctl(fd, req, arg);
	while (ret < 0 && errno == EINTR);
	return ret;
}

static int fail(const char *what)
{
	fprintf(stderr, "v4l2_capture: %s: %s\n", what, strerror(errno));
	return 1;
}

static int failx(const char *what)
{
	fprintf(stderr, "v4l2_capture: %s\n", what);
	return 1;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int set_format(int fd)
{
	struct v4l2_capability cap;
	struct v4l2_format fmt;
	struct v4l2_streamparm parm;

	memset(&cap, 0, sizeof(cap));
	if (xioctl(fd, VIDIOC_QUERYCAP, &cap) < 0)
		return fail("VIDIOC_QUERYCAP");
	if (!(cap.device_caps & V4L2_CAP_VIDEO_CAPTURE) ||
	    !(cap.device_caps & V4L2_CAP_STREAMING))
		return failx("not a streaming video capture device");

	memset(&fmt, 0, sizeof(fmt));
	fmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	fmt.fmt.pix.width = 640;
	fmt.fmt.pix.height = 480;
	fmt.fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
	fmt.fmt.pix.field = V4L2_FIELD_NONE;
	if (xioctl(fd, VIDIOC_S_FMT, &fmt) < 0)
		return fail("VIDIOC_S_FMT");
	if (fmt.fmt.pix.width != 640 || fmt.fmt.pix.height != 480 ||
	    fmt.fmt.pix.pixelformat != V4L2_PIX_FMT_YUYV)
		return failx("the driver did not take 640x480 YUYV");

	/* vivid's default is 5 fps; the scenario's timing assumes 25 */
	memset(&parm, 0, sizeof(parm));
	parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	parm.parm.capture.timeperframe.numerator = 1;
	parm.parm.capture.timeperframe.denominator = 25;
	if (xioctl(fd, VIDIOC_S_PARM, &parm) < 0)
		return fail("VIDIOC_S_PARM");
	if (parm.parm.capture.timeperframe.numerator != 1 ||
	    parm.parm.capture.timeperframe.denominator != 25) {
		fprintf(stderr, "v4l2_capture: the driver set %u/%u s per frame, not 1/25\n",
			parm.parm.capture.timeperframe.numerator,
			parm.parm.capture.timeperframe.denominator);
		return 1;
	}
	printf("format=640x480 YUYV sizeimage=%u timeperframe=1/25\n", fmt.fmt.pix.sizeimage);
	return 0;
}

static int setup_buffers(int fd, struct buffer *bufs)
{
	struct v4l2_requestbuffers req;

	memset(&req, 0, sizeof(req));
	req.count = NBUFS;
	req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	req.memory = V4L2_MEMORY_MMAP;
	if (xioctl(fd, VIDIOC_REQBUFS, &req) < 0)
		return fail("VIDIOC_REQBUFS");
	if (req.count != NBUFS)
		return failx("the driver gave another buffer count");

	for (unsigned i = 0; i < NBUFS; i++) {
		struct v4l2_buffer b;
		struct v4l2_exportbuffer exp;

		memset(&b, 0, sizeof(b));
		b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		b.memory = V4L2_MEMORY_MMAP;
		b.index = i;
		if (xioctl(fd, VIDIOC_QUERYBUF, &b) < 0)
			return fail("VIDIOC_QUERYBUF");
		bufs[i].length = b.length;
		bufs[i].map = mmap(NULL, b.length, PROT_READ, MAP_SHARED, fd, b.m.offset);
		if (bufs[i].map == MAP_FAILED)
			return fail("mmap");

		memset(&exp, 0, sizeof(exp));
		exp.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		exp.index = i;
		exp.flags = O_RDONLY | O_CLOEXEC;
		if (xioctl(fd, VIDIOC_EXPBUF, &exp) < 0)
			return fail("VIDIOC_EXPBUF");
		bufs[i].dmabuf_fd = exp.fd;

		if (xioctl(fd, VIDIOC_QBUF, &b) < 0)
			return fail("VIDIOC_QBUF");
	}
	return 0;
}

static int dmabuf_sync(int fd, uint64_t flags)
{
	struct dma_buf_sync sync = { .flags = flags | DMA_BUF_SYNC_READ };

	return xioctl(fd, DMA_BUF_IOCTL_SYNC, &sync);
}

/* A sum that depends on every byte, so the read cannot be optimised away
 * and the frame really passes through the CPU's caches. */
static uint64_t checksum(const unsigned char *p, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum = sum * 31 + p[i];
	return sum;
}

int main(int argc, char **argv)
{
	struct buffer bufs[NBUFS];
	uint64_t sum = 0, bytes = 0;
	enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	long frames;
	int64_t start;
	char *end;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: v4l2_capture DEVICE FRAMES\n");
		return 2;
	}
	errno = 0;
	frames = strtol(argv[2], &end, 10);
	if (errno || *end || frames < 1 || frames > 100000)
		return failx("FRAMES must be 1..100000");

	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return fail(argv[1]);
	if (set_format(fd) || setup_buffers(fd, bufs))
		return 1;
	if (xioctl(fd, VIDIOC_STREAMON, &type) < 0)
		return fail("VIDIOC_STREAMON");

	start = now_ns();
	for (long f = 0; f < frames; f++) {
		struct v4l2_buffer b;
		struct buffer *buf;

		memset(&b, 0, sizeof(b));
		b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		b.memory = V4L2_MEMORY_MMAP;
		if (xioctl(fd, VIDIOC_DQBUF, &b) < 0)
			return fail("VIDIOC_DQBUF");
		if (b.index >= NBUFS || b.bytesused > bufs[b.index].length)
			return failx("VIDIOC_DQBUF returned a bad buffer");
		buf = &bufs[b.index];

		if (dmabuf_sync(buf->dmabuf_fd, DMA_BUF_SYNC_START) < 0)
			return fail("DMA_BUF_IOCTL_SYNC start");
		sum ^= checksum(buf->map, b.bytesused);
		bytes += b.bytesused;
		if (dmabuf_sync(buf->dmabuf_fd, DMA_BUF_SYNC_END) < 0)
			return fail("DMA_BUF_IOCTL_SYNC end");

		if (xioctl(fd, VIDIOC_QBUF, &b) < 0)
			return fail("VIDIOC_QBUF");
	}
	printf("frames=%ld bytes=%" PRIu64 " checksum=%016" PRIx64 " elapsed_ms=%" PRId64 "\n",
	       frames, bytes, sum, (now_ns() - start) / 1000000);

	if (xioctl(fd, VIDIOC_STREAMOFF, &type) < 0)
		return fail("VIDIOC_STREAMOFF");
	for (unsigned i = 0; i < NBUFS; i++) {
		munmap(bufs[i].map, bufs[i].length);
		close(bufs[i].dmabuf_fd);
	}
	close(fd);
	return 0;
}
