/* An encoder loop against /dev/plenc (plenc.h), the way a vendor encoding
 * library drives its hardware: per frame, write the raw frame, clean it out
 * of the CPU caches (CACHE_FLUSH with its byte count) so the device reads
 * what was written, SUBMIT, and block in WAIT_IRQ until the encode is done.
 * WAIT_IRQ ends the frame, so a profiler boundary there covers whole frames.
 *
 *   encoder_loop DEVICE FRAMES FRAME_BYTES
 *
 * Prints "frames=N flushed_bytes=B" on success; exits 1 with a message
 * naming the failed step otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "plenc.h"

static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do
		ret = ioctl(fd, req, arg);
	while (ret < 0 && errno == EINTR);
	return ret;
}

static int fail(const char *what, long frame)
{
	fprintf(stderr, "encoder_loop: frame %ld: %s: %s\n", frame, what, strerror(errno));
	return 1;
}

static long parse(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > max)
		return -1;
	return v;
}

int main(int argc, char **argv)
{
	long frames, frame_bytes;
	uint64_t flushed = 0;
	unsigned char *raw;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: encoder_loop DEVICE FRAMES FRAME_BYTES\n");
		return 2;
	}
	frames = parse(argv[2], 100000);
	frame_bytes = parse(argv[3], 64L << 20);
	if (frames < 0 || frame_bytes < 0) {
		fprintf(stderr, "encoder_loop: FRAMES must be 1..100000, FRAME_BYTES 1..64 MiB\n");
		return 2;
	}
	raw = malloc((size_t)frame_bytes);
	if (!raw) {
		fprintf(stderr, "encoder_loop: out of memory\n");
		return 1;
	}
	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "encoder_loop: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}

	for (long f = 0; f < frames; f++) {
		struct plenc_flush flush = {
			.addr = (uintptr_t)raw,
			.bytes = (uint32_t)frame_bytes,
			.dir = PLENC_FLUSH_CLEAN,
		};
		struct plenc_submit submit = {
			.frame = (uint32_t)f,
			.input_bytes = (uint32_t)frame_bytes,
		};
		struct plenc_irq irq;

		memset(raw, (int)(f & 0xff), (size_t)frame_bytes);
		if (xioctl(fd, PLENC_CACHE_FLUSH, &flush) < 0)
			return fail("CACHE_FLUSH", f);
		flushed += flush.bytes;
		if (xioctl(fd, PLENC_SUBMIT, &submit) < 0)
			return fail("SUBMIT", f);
		memset(&irq, 0xff, sizeof(irq));
		if (xioctl(fd, PLENC_WAIT_IRQ, &irq) < 0)
			return fail("WAIT_IRQ", f);
		if (irq.frame != (uint32_t)f || irq.status != 0) {
			fprintf(stderr, "encoder_loop: frame %ld: WAIT_IRQ said frame %u status %u\n",
				f, irq.frame, irq.status);
			return 1;
		}
	}
	printf("frames=%ld flushed_bytes=%" PRIu64 "\n", frames, flushed);
	close(fd);
	free(raw);
	return 0;
}
