/* The producer's shared memory as both ends map it: a welcome whose layout
 * does not fit the memory it describes is refused before anything is
 * touched, whichever end sent it; a good one gives rings and slots where
 * the welcome put them. */
#include "kernel_compat.h"
#include "producer_view.h"
#include "tap.h"

#include <errno.h>
#include <unistd.h>

#define MEM_BYTES (64u * 1024)

static struct pl_producer_welcome good(void)
{
	struct pl_producer_welcome w = {
		.magic = PL_PRODUCER_MAGIC,
		.version = PL_PRODUCER_VERSION,
		.producer_id = 1,
		.slot_count = 4,
		.slot_bytes = 4096,
		.records_cap = 8192,
		.replies_cap = 4096,
		.shm_bytes = MEM_BYTES,
		.records_off = 4096,
		.replies_off = 4096 + 8192,
		.slots_off = 16384,
	};
	return w;
}

int main(void)
{
	int fd = pl__shm_fd_create("test-producer-view", MEM_BYTES);
	struct pl_producer_view v;
	struct pl_producer_welcome w;

	if (fd < 0) {
		printf("Bail out! no shared memory: %d\n", fd);
		return 1;
	}
	w = good();
	TAP_EQ_U64(pl__producer_view_map(&v, fd, &w), 0, "a layout that fits is mapped");
	TAP_OK(v.mem && v.mem_bytes == MEM_BYTES && (uint8_t *)v.shm == v.mem,
	       "the counters at the start of the memory");
	TAP_OK(v.slots == v.mem + 16384 && v.slot_count == 4 && v.slot_bytes == 4096 &&
		       pl__producer_view_slot(&v, 3) == v.mem + 16384 + 3 * 4096,
	       "the slots where the welcome put them");
	TAP_OK(pl__shm_ring_push(&v.records, 1, "abc", 3, NULL, 0) == 0,
	       "the records ring takes a record");
	pl__producer_view_unmap(&v);
	TAP_OK(v.mem == NULL && v.slots == NULL, "unmapped: nothing left pointing at it");

	{
		struct {
			const char *what;
			struct pl_producer_welcome w;
		} cases[16];
		unsigned n = 0, i;

		cases[n].what = "records ring past the end";
		cases[n].w = good(), cases[n].w.records_off = MEM_BYTES - 4096, n++;
		cases[n].what = "records ring over the counters";
		cases[n].w = good(), cases[n].w.records_off = 16, n++;
		cases[n].what = "replies ring over the counters";
		cases[n].w = good(), cases[n].w.replies_off = 0, n++;
		cases[n].what = "replies ring at an offset that wraps past 2^64";
		cases[n].w = good(), cases[n].w.replies_off = UINT64_MAX - 100, n++;
		cases[n].what = "records ring at an offset that wraps past 2^64";
		cases[n].w = good(), cases[n].w.records_off = UINT64_MAX - 4000, n++;
		cases[n].what = "slots at an offset that wraps past 2^64";
		cases[n].w = good(), cases[n].w.slots_off = UINT64_MAX - 4095, n++;
		cases[n].what = "slots past the end";
		cases[n].w = good(), cases[n].w.slot_bytes = 16384, n++;
		cases[n].what = "more slots than a producer may have";
		cases[n].w = good(), cases[n].w.slot_count = PL_PRODUCER_MAX_SLOTS + 1,
		cases[n].w.slot_bytes = 0, n++;
		cases[n].what = "a ring size that is not a power of two";
		cases[n].w = good(), cases[n].w.records_cap = 6000, n++;
		cases[n].what = "memory smaller than its counters";
		cases[n].w = good(), cases[n].w.shm_bytes = 8, n++;
		for (i = 0; i < n; i++) {
			memset(&v, 0xa5, sizeof(v));
			TAP_EQ_U64(pl__producer_view_map(&v, fd, &cases[i].w), (uint64_t)-EPROTO,
				   cases[i].what);
			TAP_OK(v.mem == NULL, "and nothing is mapped");
		}
	}
	close(fd);
	return tap_done();
}
