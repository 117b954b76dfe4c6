/* A stand-in for a control process that must not stall: it writes a small
 * record and fdatasyncs it every --period-ms, for --seconds, and reports how
 * long its own worst fdatasync took. The demo runs it beside a disk-writing
 * bully, so what perflink's tracer reports can be set against what the
 * victim itself saw.
 *
 *   fsync_victim FILE SECONDS [PERIOD_MS]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	char record[512];
	double end, worst = 0, total = 0;
	long period_ms = 20, syncs = 0;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: fsync_victim FILE SECONDS [PERIOD_MS]\n");
		return 2;
	}
	if (argc > 3)
		period_ms = atol(argv[3]);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "fsync_victim: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	memset(record, 'v', sizeof(record));
	end = now_ms() + atof(argv[2]) * 1e3;
	while (now_ms() < end) {
		double t0 = now_ms(), took;
		struct timespec nap = { 0, period_ms * 1000000L };

		if (write(fd, record, sizeof(record)) < 0 || fdatasync(fd) < 0) {
			fprintf(stderr, "fsync_victim: %s\n", strerror(errno));
			return 1;
		}
		took = now_ms() - t0;
		total += took;
		syncs++;
		if (took > worst)
			worst = took;
		nanosleep(&nap, NULL);
	}
	close(fd);
	printf("fsync_victim: %ld fdatasyncs, mean %.1f ms, worst %.1f ms\n", syncs,
	       syncs ? total / (double)syncs : 0.0, worst);
	return 0;
}
