/* See integrity_payload.h. */
#include "integrity_payload.h"

#include <string.h>

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* splitmix64: a different stream for every (seed, frame, chunk). */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void fill_chunk(uint8_t *p, size_t len, uint64_t seed, uint64_t frame_id, uint32_t index)
{
	uint8_t stamp[PL_INTEGRITY_STAMP];
	uint64_t state = mix(seed ^ mix(frame_id ^ mix(index)));
	size_t i;

	put64(stamp, seed);
	put64(stamp + 8, frame_id);
	put32(stamp + 16, index);
	put32(stamp + 20, PL_INTEGRITY_MAGIC);
	memcpy(p, stamp, len < sizeof(stamp) ? len : sizeof(stamp));
	for (i = sizeof(stamp); i < len; i += 8) {
		uint8_t word[8];
		size_t n = len - i < 8 ? len - i : 8;

		state = mix(state);
		put64(word, state);
		memcpy(p + i, word, n);
	}
}

void pl__integrity_fill(uint8_t *buf, size_t len, uint64_t seed, uint64_t frame_id)
{
	size_t off;
	uint32_t index = 0;

	for (off = 0; off < len; off += PL_INTEGRITY_CHUNK, index++) {
		size_t n = len - off < PL_INTEGRITY_CHUNK ? len - off : PL_INTEGRITY_CHUNK;

		fill_chunk(buf + off, n, seed, frame_id, index);
	}
}

size_t pl__integrity_check(const uint8_t *buf, size_t len, uint64_t frame_id,
			   uint64_t *seed_out)
{
	uint8_t expect[PL_INTEGRITY_CHUNK];
	uint64_t seed = len >= 8 ? get64(buf) : 0;
	size_t off, bad = 0, i;
	uint32_t index = 0;

	if (seed_out)
		*seed_out = seed;
	for (off = 0; off < len; off += PL_INTEGRITY_CHUNK, index++) {
		size_t n = len - off < PL_INTEGRITY_CHUNK ? len - off : PL_INTEGRITY_CHUNK;

		fill_chunk(expect, n, seed, frame_id, index);
		if (memcmp(expect, buf + off, n) == 0)
			continue;
		for (i = 0; i < n; i++)
			bad += expect[i] != buf[off + i];
	}
	return bad;
}
