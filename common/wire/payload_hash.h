/* XXH3-64 of a message payload (seed 0), computed by whichever build of
 * XXH3 is fastest on the CPU this process runs on.
 *
 * Every frame's bytes are hashed once by the sender and once by the
 * receiver, so this is the link's only per-byte cost besides the kernel's
 * copies. XXH3 has several builds that give the same result: libxxhash's own
 * (SSE2 on x86-64, NEON on arm64, scalar elsewhere), its x86 dispatcher
 * (AVX2 or AVX-512 where the CPU has them) and the plain 64-bit scalar code
 * compiled from the header. Which is fastest depends on the core, not only
 * on its instruction set: the vector builds lose to the scalar one on cores
 * with a slow vector unit and, by a factor of three or more, under an
 * emulator that runs vector instructions through helpers (the VM rig's TCG).
 * So, as the kernel does for its RAID xor and raid6 routines, each process
 * measures the candidates once and keeps the fastest.
 *
 * The choice is made by pl__payload_hash_choose(), which the programs call
 * at start so that no frame pays for it; otherwise on the first payload
 * hashed. PERFLINK_HASH_IMPL names one of the candidates to use it without
 * measuring (benchmarks compare them that way). */
#ifndef PL_COMMON_PAYLOAD_HASH_H
#define PL_COMMON_PAYLOAD_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t pl__payload_hash(const void *data, size_t len);

/* Measure (or take PERFLINK_HASH_IMPL) and keep the choice; later calls do
 * nothing. Safe from several threads. A bad PERFLINK_HASH_IMPL is said once
 * on stderr and the choice is measured. */
void pl__payload_hash_choose(void);

/* The chosen build's name ("library", "dispatch" or "scalar"), and what was
 * measured: MB/s of each candidate, 0 where one was named or not measured. */
struct pl_payload_hash_choice {
	const char *name;
	unsigned n;
	struct {
		const char *name;
		double mbps;
	} candidate[3];
};
void pl__payload_hash_describe(struct pl_payload_hash_choice *out);
/* The same as one line for a log: "XXH3 scalar build (measured MB/s:
 * library 935, dispatch 936, scalar 3341)", or "(PERFLINK_HASH_IMPL)". */
void pl__payload_hash_format(char *buf, size_t size);

/* For the tests: the candidates one by one (index < the count), so each can
 * be checked against the library's XXH3_64bits. */
unsigned pl__payload_hash_candidate_count(void);
const char *pl__payload_hash_candidate_name(unsigned i);
uint64_t pl__payload_hash_with(unsigned i, const void *data, size_t len);

#endif
