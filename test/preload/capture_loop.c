/* A capture-like loop for the stage profiler demo, with real ioctls on
 * real fds that test/preload/capture_loop.stages names as stages:
 *
 *   frame_wait     waits for the next frame (blocks in the kernel, like a
 *                  DQBUF or WAIT_IRQ: wall time, little CPU)
 *   frame_release  hands the slot back (like a QBUF)
 *   cache_sync     cache maintenance: kernel work in proportion to the
 *                  bytes (like an rmem flush), from two call sites: the
 *                  frame itself, and an optional diagnostic sample that
 *                  --sample-bytes adds (the A/B knob)
 *   stream_poll    how many encoded bytes are ready (published stream bytes)
 *
 * Usage: capture_loop [--frames N] [--fps F] [--frame-bytes B] [--sample-bytes B]
 * See docs/stages.md for the command lines that profile it. */
#include "real_ioctls.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static struct rt_copy frame_buf, sample_buf;
static int stream[2];

static void die(const char *what, int err)
{
	fprintf(stderr, "capture_loop: %s: %s\n", what, strerror(err));
	exit(err == ENOSYS || err == EPERM || err == EINVAL ? 77 : 1);
}

/* Exported (-rdynamic) so that the profiler names these call sites. */
void invalidate_frame(void);
__attribute__((noinline)) void invalidate_frame(void)
{
	struct uffdio_copy arg;

	rt_copy_reset(&frame_buf);
	rt_copy_arg(&frame_buf, &arg);
	if (ioctl(frame_buf.uffd, RT_REQ(UFFDIO_COPY), &arg) < 0)
		die("frame cache sync", errno);
}

void diagnostic_sample(void);
__attribute__((noinline)) void diagnostic_sample(void)
{
	struct uffdio_copy arg;

	rt_copy_reset(&sample_buf);
	rt_copy_arg(&sample_buf, &arg);
	if (ioctl(sample_buf.uffd, RT_REQ(UFFDIO_COPY), &arg) < 0)
		die("sample cache sync", errno);
}

/* "Encode": a bitstream of a varying size, then collect it. */
static void encode_and_get_stream(unsigned frame, size_t frame_bytes)
{
	static char bits[65536];
	size_t size = frame_bytes / 40 + (frame % 7) * 512;
	int ready = 0;

	if (size > sizeof(bits))
		size = sizeof(bits);
	if (write(stream[1], bits, size) != (ssize_t)size)
		die("stream write", errno);
	if (ioctl(stream[0], FIONREAD, &ready) < 0)
		die("stream poll", errno);
	if (read(stream[0], bits, (size_t)ready) != ready)
		die("stream read", errno);
}

static unsigned long round_up(unsigned long n, unsigned long unit)
{
	return (n + unit - 1) / unit * unit;
}

static unsigned long arg_num(int argc, char **argv, int *i)
{
	char *end;
	unsigned long v;

	if (*i + 1 >= argc) {
		fprintf(stderr, "capture_loop: %s needs a value\n", argv[*i]);
		exit(2);
	}
	v = strtoul(argv[++*i], &end, 10);
	if (*end || v > 1ul << 30) {
		fprintf(stderr, "capture_loop: bad value '%s'\n", argv[*i]);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long frames = 100, fps = 25, frame_bytes = 4 << 20, sample_bytes = 0;
	long page = sysconf(_SC_PAGESIZE);
	struct rt_events cam;
	unsigned i;
	int r, a;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--frames") == 0)
			frames = arg_num(argc, argv, &a);
		else if (strcmp(argv[a], "--fps") == 0)
			fps = arg_num(argc, argv, &a);
		else if (strcmp(argv[a], "--frame-bytes") == 0)
			frame_bytes = arg_num(argc, argv, &a);
		else if (strcmp(argv[a], "--sample-bytes") == 0)
			sample_bytes = arg_num(argc, argv, &a);
		else {
			fprintf(stderr, "usage: capture_loop [--frames N] [--fps F] "
					"[--frame-bytes B] [--sample-bytes B]\n");
			return 2;
		}
	}
	if (fps == 0 || frame_bytes == 0)
		fps = 1, frame_bytes = (unsigned long)page;
	/* whole pages: userfaultfd works on pages */
	frame_bytes = round_up(frame_bytes, (unsigned long)page);
	sample_bytes = round_up(sample_bytes, (unsigned long)page);

	if (pipe2(stream, O_CLOEXEC) < 0)
		die("pipe", errno);
	r = rt_copy_open(&frame_buf, frame_bytes);
	if (r == 0 && sample_bytes)
		r = rt_copy_open(&sample_buf, sample_bytes);
	if (r < 0)
		die("userfaultfd", -r);
	r = rt_events_start(&cam, (unsigned)frames, (unsigned)(1000000 / fps));
	if (r < 0)
		die("seccomp listener", -r);

	for (i = 0; i < frames; i++) {
		r = rt_events_wait(&cam); /* frame_wait, then frame_release */
		if (r < 0)
			die("frame wait", -r);
		invalidate_frame();
		if (sample_bytes)
			diagnostic_sample();
		encode_and_get_stream(i, frame_bytes);
	}
	rt_events_stop(&cam);
	printf("capture_loop: %lu frames at %lu fps, %lu bytes a frame, %lu sampled\n", frames,
	       fps, frame_bytes, sample_bytes);
	return 0;
}
