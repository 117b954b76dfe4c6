/* A process whose mmap lock is taken for writing nearly all the time, as a
 * busy renderer's or encoder's can be: one thread flips the protection of a
 * large populated mapping back and forth (each mprotect walks every page
 * table entry under the lock), while the main thread maps and unmaps 1 MiB
 * every 2 ms. A reader of its /proc/PID/smaps_rollup (the resource
 * sampler's PSS) waits for the lock behind them.
 *
 *   mmap_lock_holder MIB
 *
 * Prints "ready PID" once the mapping is populated, then runs until killed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static char *region;
static size_t region_len;

static void *flip(void *arg)
{
	(void)arg;
	for (unsigned k = 0;; k++)
		mprotect(region, region_len, k & 1 ? PROT_READ | PROT_WRITE : PROT_READ);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 2 || atoi(argv[1]) <= 0) {
		fprintf(stderr, "usage: mmap_lock_holder MIB\n");
		return 2;
	}
	region_len = (size_t)atoi(argv[1]) << 20;
	region = mmap(NULL, region_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	/* small pages: a page table entry each, which mprotect walks */
	madvise(region, region_len, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < region_len; i += 4096)
		region[i] = 1;
	if (pthread_create(&t, NULL, flip, NULL) != 0) {
		perror("pthread_create");
		return 1;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		void *q = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (q != MAP_FAILED)
			munmap(q, 1 << 20);
		usleep(2000);
	}
}
