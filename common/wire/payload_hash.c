/* See payload_hash.h: the builds of XXH3, and the measurement that chooses
 * among them. */
#include "payload_hash.h"
#include "clock.h"
#include "payload_hash_builds.h"
#include "pl_config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#if HAVE_XXH_X86DISPATCH
#include <xxh_x86dispatch.h>
#endif

typedef uint64_t (*hash_fn)(const void *data, size_t len);

static uint64_t library_build(const void *data, size_t len) { return XXH3_64bits(data, len); }
#if HAVE_XXH_X86DISPATCH
static uint64_t dispatch_build(const void *data, size_t len)
{
	return XXH3_64bits_dispatch(data, len);
}
#endif

static const struct {
	const char *name;
	hash_fn fn;
} builds[] = {
	{ "library", library_build }, /* first: kept unless another is clearly faster */
#if HAVE_XXH_X86DISPATCH
	{ "dispatch", dispatch_build },
#endif
	{ "scalar", pl__xxh3_scalar },
};
#define N_BUILDS (sizeof(builds) / sizeof(builds[0]))
_Static_assert(N_BUILDS <= sizeof(((struct pl_payload_hash_choice *)0)->candidate) /
				   sizeof(((struct pl_payload_hash_choice *)0)->candidate[0]),
	       "pl_payload_hash_choice has room for every build");

/* Below this many bytes every build runs the same scalar code (XXH3's
 * short-input paths end at 240 bytes) or so little of anything else that
 * the choice cannot matter: headers, pings and replies never wait for it. */
#define SMALL_INPUT 1024
/* The measurement: each build hashes SAMPLE_BYTES, ROUNDS times in turn, and
 * keeps its fastest round (a round the scheduler interrupted is slower,
 * never faster). About 2 ms under the rig's emulator, 0.1 ms on hardware. */
#define SAMPLE_BYTES (64 * 1024)
#define ROUNDS 5
/* Another build replaces the library's only when it is this much faster:
 * between near-equal builds the measurement's noise would decide. */
#define MARGIN 1.10

static hash_fn chosen; /* atomic; NULL until chosen */
static struct pl_payload_hash_choice choice;
static pthread_once_t choose_once = PTHREAD_ONCE_INIT;

static int build_named(const char *name)
{
	unsigned i;

	for (i = 0; i < N_BUILDS; i++) {
		if (strcmp(builds[i].name, name) == 0)
			return (int)i;
	}
	return -1;
}

static void measure(double mbps[N_BUILDS])
{
	uint64_t best[N_BUILDS], sink = 0;
	uint8_t *sample = malloc(SAMPLE_BYTES);
	unsigned r, i;

	memset(mbps, 0, sizeof(double) * N_BUILDS);
	if (!sample)
		return;
	for (i = 0; i < SAMPLE_BYTES; i++)
		sample[i] = (uint8_t)(i * 131u + (i >> 9));
	for (i = 0; i < N_BUILDS; i++) {
		best[i] = UINT64_MAX;
		sink += builds[i].fn(sample, SAMPLE_BYTES); /* warm: code and cache */
	}
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < N_BUILDS; i++) {
			uint64_t t0 = pl__mono_ns(), t;

			sink += builds[i].fn(sample, SAMPLE_BYTES);
			t = pl__mono_ns() - t0;
			if (t < best[i])
				best[i] = t;
		}
	}
	for (i = 0; i < N_BUILDS; i++)
		mbps[i] = best[i] ? (double)SAMPLE_BYTES * 1e3 / (double)best[i] : 0;
	/* the sum is used, so no build's work can be optimised away */
	if (sink == 0x5eed)
		sample[0] = 0;
	free(sample);
}

static void choose(void)
{
	const char *want = getenv("PERFLINK_HASH_IMPL");
	double mbps[N_BUILDS];
	unsigned i, pick = 0;
	int named = want && *want ? build_named(want) : -1;

	memset(mbps, 0, sizeof(mbps));
	if (named >= 0) {
		pick = (unsigned)named;
	} else {
		if (want && *want) {
			fprintf(stderr, "perflink: PERFLINK_HASH_IMPL='%s' is not a build of XXH3 here (",
				want);
			for (i = 0; i < N_BUILDS; i++)
				fprintf(stderr, "%s%s", i ? ", " : "", builds[i].name);
			fprintf(stderr, "); the fastest is measured\n");
		}
		measure(mbps);
		for (i = 1; i < N_BUILDS; i++) {
			if (mbps[i] > mbps[pick] && mbps[i] >= mbps[0] * MARGIN)
				pick = i;
		}
	}
	choice.name = builds[pick].name;
	choice.n = N_BUILDS;
	for (i = 0; i < N_BUILDS; i++) {
		choice.candidate[i].name = builds[i].name;
		choice.candidate[i].mbps = mbps[i];
	}
	__atomic_store_n(&chosen, builds[pick].fn, __ATOMIC_RELEASE);
}

void pl__payload_hash_choose(void)
{
	pthread_once(&choose_once, choose);
}

uint64_t pl__payload_hash(const void *data, size_t len)
{
	hash_fn fn;

	if (len < SMALL_INPUT)
		return XXH3_64bits(data, len);
	fn = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
	if (!fn) {
		pl__payload_hash_choose();
		fn = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
	}
	return fn(data, len);
}

void pl__payload_hash_describe(struct pl_payload_hash_choice *out)
{
	pl__payload_hash_choose();
	*out = choice;
}

void pl__payload_hash_format(char *buf, size_t size)
{
	struct pl_payload_hash_choice c;
	size_t off;
	unsigned i;
	int n;

	pl__payload_hash_describe(&c);
	n = snprintf(buf, size, "XXH3 %s build (", c.name);
	off = n > 0 && (size_t)n < size ? (size_t)n : size;
	if (c.candidate[0].mbps == 0) {
		snprintf(buf + off, size - off, "PERFLINK_HASH_IMPL)");
		return;
	}
	for (i = 0; i < c.n && off < size; i++) {
		n = snprintf(buf + off, size - off, "%s%s %.0f", i ? ", " : "measured MB/s: ",
			     c.candidate[i].name, c.candidate[i].mbps);
		off += n > 0 ? (size_t)n : 0;
	}
	if (off < size)
		snprintf(buf + off, size - off, ")");
}

unsigned pl__payload_hash_candidate_count(void) { return N_BUILDS; }

const char *pl__payload_hash_candidate_name(unsigned i)
{
	return i < N_BUILDS ? builds[i].name : NULL;
}

uint64_t pl__payload_hash_with(unsigned i, const void *data, size_t len)
{
	return builds[i < N_BUILDS ? i : 0].fn(data, len);
}
