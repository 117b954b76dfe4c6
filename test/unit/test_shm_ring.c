/* The shared-memory record ring: records in order across the wrap, a full
 * ring refuses without blocking, and a ring the other side damaged is
 * emptied and counted instead of followed. */
#include "tap.h"

#include "shm_ring.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static struct pl_shm_ring_ctl ctl;
static uint8_t data[PL_SHM_RING_MIN];

static void test_order_and_wrap(void)
{
	struct pl_shm_ring push, pop;
	uint8_t out[PL_SHM_RING_MIN];
	uint32_t kind;
	size_t len;
	int bad = 0;

	memset(&ctl, 0, sizeof(ctl));
	/* Start near the 32-bit wrap of the counters too. */
	atomic_store(&ctl.head, 0u - 256);
	atomic_store(&ctl.tail, 0u - 256);
	pl__shm_ring_attach(&push, &ctl, data, sizeof(data));
	pl__shm_ring_attach(&pop, &ctl, data, sizeof(data));
	for (unsigned i = 0; i < 2000; i++) {
		char a[16], b[600];
		size_t blen = (i * 37) % sizeof(b);

		snprintf(a, sizeof(a), "r%u:", i);
		memset(b, 'a' + (int)(i % 26), blen);
		if (pl__shm_ring_push(&push, i, a, strlen(a), b, blen) != 0) {
			bad++;
			continue;
		}
		if (pl__shm_ring_pop(&pop, &kind, out, sizeof(out), &len) != 1 || kind != i ||
		    len != strlen(a) + blen || memcmp(out, a, strlen(a)) ||
		    (blen && (out[len - 1] != 'a' + i % 26)))
			bad++;
	}
	TAP_EQ_U64(bad, 0, "2000 records of 0..600 bytes in order, across the end and the counters' wrap");
	TAP_OK(pl__shm_ring_pop(&pop, &kind, out, sizeof(out), &len) == 0, "then empty");
}

static void test_full(void)
{
	struct pl_shm_ring r;
	uint8_t rec[1000];
	uint32_t kind;
	size_t len;
	int pushed = 0;

	memset(&ctl, 0, sizeof(ctl));
	pl__shm_ring_attach(&r, &ctl, data, sizeof(data));
	while (pl__shm_ring_push(&r, 1, rec, sizeof(rec), NULL, 0) == 0)
		pushed++;
	TAP_EQ_U64(pushed, 4, "four 1008-byte records fill 4 KiB");
	TAP_OK(pl__shm_ring_push(&r, 1, rec, sizeof(rec), NULL, 0) == -ENOSPC, "full: -ENOSPC");
	TAP_OK(pl__shm_ring_push(&r, 1, rec, PL_SHM_RING_MIN, NULL, 0) == -EMSGSIZE,
	       "larger than the ring: -EMSGSIZE");
	TAP_OK(pl__shm_ring_pop(&r, &kind, rec, sizeof(rec), &len) == 1, "pop one");
	TAP_OK(pl__shm_ring_push(&r, 1, rec, sizeof(rec), NULL, 0) == 0, "room again");
	TAP_OK(pl__shm_ring_pop(&r, &kind, rec, 10, &len) == -EBADMSG && r.corrupt == 1,
	       "a record larger than the reader's buffer empties the ring");
	TAP_EQ_U64(pl__shm_ring_used(&r), 0, "emptied");
}

static void test_damaged(void)
{
	struct pl_shm_ring r;
	uint8_t out[64];
	uint32_t kind, hdr[2];
	size_t len;

	memset(&ctl, 0, sizeof(ctl));
	pl__shm_ring_attach(&r, &ctl, data, sizeof(data));
	TAP_OK(pl__shm_ring_attach(&r, &ctl, data, 5000) == -EINVAL, "a size not a power of two is refused");
	pl__shm_ring_attach(&r, &ctl, data, sizeof(data));
	atomic_store(&ctl.head, 1u << 30);
	TAP_OK(pl__shm_ring_pop(&r, &kind, out, sizeof(out), &len) == -EBADMSG,
	       "head beyond the ring: emptied");
	TAP_OK(atomic_load(&ctl.tail) == 1u << 30, "tail moved to head");
	memset(&ctl, 0, sizeof(ctl));
	hdr[0] = 4000; /* claims more than was pushed */
	hdr[1] = 2;
	memcpy(data, hdr, sizeof(hdr));
	atomic_store(&ctl.head, 16);
	TAP_OK(pl__shm_ring_pop(&r, &kind, out, sizeof(out), &len) == -EBADMSG,
	       "a length beyond what was pushed: emptied");
	memset(&ctl, 0, sizeof(ctl));
	atomic_store(&ctl.head, 13);
	TAP_OK(pl__shm_ring_pop(&r, &kind, out, sizeof(out), &len) == -EBADMSG,
	       "a head that is not a record boundary: emptied");
	TAP_EQ_U64(r.corrupt, 3, "each counted");
}

int main(void)
{
	test_order_and_wrap();
	test_full();
	test_damaged();
	return tap_done();
}
