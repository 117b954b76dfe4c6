/* The sampler soak's workload: threads that allocate, free, dlopen and
 * dlclose without pause, one of which swaps (libtestswap's eglSwapBuffers)
 * and is therefore the sampled render thread. Samples then land inside
 * malloc, inside the loader holding its locks, in a library being mapped
 * or unmapped, and (--bad-frames, x86-64) in a function with no unwind
 * information and a frame pointer into an unmapped page, which libunwind
 * cannot walk.
 *
 *   soak SECONDS THREADS SOAK_LIB [--bad-frames]
 *
 * Prints "loops N dlopens N bad_frames N" and exits 0. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void testswap_set_spin(uint64_t iterations);
unsigned int eglSwapBuffers(void *dpy, void *surface);

static const char *soak_lib;
static double end_s;
static int bad_frames;
static unsigned long loops, dlopens, bad_calls; /* atomic */

#if defined(__x86_64__)
/* No CFI, and %rbp pointing at page 0x1000 while it spins: libunwind
 * finds no unwind entry for the pc and its frame-pointer fallback reads
 * from an unmapped address. */
uint64_t soak_bad_frame(uint64_t n);
__asm__(".text\n"
	".globl soak_bad_frame\n"
	".type soak_bad_frame, @function\n"
	"soak_bad_frame:\n"
	"	push %rbp\n"
	"	mov $0x1000, %rbp\n"
	"	mov %rdi, %rax\n"
	"1:	dec %rax\n"
	"	jnz 1b\n"
	"	pop %rbp\n"
	"	ret\n"
	".size soak_bad_frame, .-soak_bad_frame\n");
#define HAVE_BAD_FRAME 1
#else
#define HAVE_BAD_FRAME 0
#endif

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void churn(unsigned *seed)
{
	void *blocks[64];
	uint64_t (*work)(uint64_t);
	void *h, *sym;
	int i;

	for (i = 0; i < 64; i++) {
		blocks[i] = malloc((size_t)(rand_r(seed) % 65536) + 1);
		if (!blocks[i])
			abort();
		memset(blocks[i], i, 1);
	}
	for (i = 0; i < 64; i++)
		free(blocks[i]);
	/* a library of our own (unmapped on dlclose) and libm */
	h = dlopen(rand_r(seed) % 2 ? soak_lib : "libm.so.6", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "soak: dlopen: %s\n", dlerror());
		abort();
	}
	sym = dlsym(h, "soak_work");
	memcpy(&work, &sym, sizeof(work));
	if (sym)
		work(200000);
	dlclose(h);
	__atomic_add_fetch(&dlopens, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&loops, 1, __ATOMIC_RELAXED);
}

static void *churn_main(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	while (now_s() < end_s)
		churn(&seed);
	return NULL;
}

static void *render_main(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	while (now_s() < end_s) {
		churn(&seed);
#if HAVE_BAD_FRAME
		if (bad_frames) {
			soak_bad_frame(2000000);
			__atomic_add_fetch(&bad_calls, 1, __ATOMIC_RELAXED);
		}
#endif
		eglSwapBuffers(NULL, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[64];
	int n, i;

	if (argc < 4 || (n = atoi(argv[2])) < 1 || n > 64) {
		fprintf(stderr, "usage: soak SECONDS THREADS SOAK_LIB [--bad-frames]\n");
		return 2;
	}
	soak_lib = argv[3];
	bad_frames = argc > 4 && strcmp(argv[4], "--bad-frames") == 0;
	end_s = now_s() + atof(argv[1]);
	testswap_set_spin(0);
	for (i = 0; i < n; i++) {
		if (pthread_create(&t[i], NULL, i == 0 ? render_main : churn_main,
				   (void *)(uintptr_t)(i + 1)) != 0) {
			fprintf(stderr, "soak: cannot start threads\n");
			return 1;
		}
	}
	pthread_setname_np(t[0], "render");
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("loops %lu dlopens %lu bad_frames %lu\n", loops, dlopens, bad_calls);
	return 0;
}
