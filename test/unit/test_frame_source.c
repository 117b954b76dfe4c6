/* daemon/cli/frame_source.c: frames come out in order with the XXH3 of their
 * bytes, the maker never runs more than `ahead` frames past the taker
 * (a buffer is never remade before it is given back), the end is NULL,
 * stopping with the maker blocked or mid-way returns, and the maker's
 * thread takes no signal (a process-directed SIGTERM meant for the
 * program's signalfd would otherwise end the process there). With ahead 0
 * there is no thread: each frame is made once, at the release of the one
 * before, or at its take. */
#include "tap.h"

#include "frame_source.h"
#include "wire.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LEN 4096

static atomic_ulong made_count;

static void make(void *ctx, uint8_t *buf, size_t len, uint64_t id)
{
	(void)ctx;
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(id * 7 + i);
	atomic_fetch_add(&made_count, 1);
}

static void settle(void)
{
	struct timespec ts = { 0, 50000000 };

	nanosleep(&ts, NULL); /* time for the maker to run ahead as far as it may */
}

/* Until the maker has made at least n (5 s at most: on a loaded machine its
 * thread may not run for a while), then settle: a maker that went past n
 * has had the time to show it. */
static void settle_at(unsigned long n)
{
	struct timespec ts = { 0, 10000000 };

	for (int i = 0; i < 500 && atomic_load(&made_count) < n; i++)
		nanosleep(&ts, NULL);
	settle();
}

int main(void)
{
	struct pl_frame_source *fs;
	uint8_t want[LEN];
	uint64_t hash = 0;
	bool in_order = true, hashes = true;
	const uint8_t *f;

	TAP_OK(pl__frame_source_start(&fs, LEN, 20, 3, make, NULL) == 0, "started: 20 frames, 3 ahead");
	settle_at(3);
	TAP_EQ_U64(atomic_load(&made_count), 3, "with nothing taken, 3 made and the maker waits");
	for (uint64_t id = 0; id < 20; id++) {
		f = pl__frame_source_take(fs, id, &hash);
		make(NULL, want, LEN, id);
		atomic_fetch_sub(&made_count, 1); /* that make was the check's own */
		in_order = in_order && f && memcmp(f, want, LEN) == 0;
		hashes = hashes && f && hash == pl__wire_payload_hash(want, LEN);
		if (id == 4) {
			settle_at(7);
			/* frames 0..3 released, 4 taken: the maker may make up to 4 + 3 - 1 */
			TAP_EQ_U64(atomic_load(&made_count), 7,
				   "never more than 3 ahead of the buffers given back");
		}
		pl__frame_source_release(fs);
	}
	TAP_OK(in_order, "every frame's bytes, in order");
	TAP_OK(hashes, "every frame's XXH3 with it");
	TAP_OK(pl__frame_source_take(fs, 20, &hash) == NULL, "past the last frame: NULL");
	TAP_EQ_U64(atomic_load(&made_count), 20, "each frame made once");
	pl__frame_source_stop(fs);

	atomic_store(&made_count, 0);
	{
		sigset_t term, pending;

		/* started first, then SIGTERM blocked in this thread alone, as
		 * perflink stream's event loop does for its signalfd */
		TAP_OK(pl__frame_source_start(&fs, LEN, 1000, 2, make, NULL) == 0, "a second source");
		sigemptyset(&term);
		sigaddset(&term, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &term, NULL);
		kill(getpid(), SIGTERM);
		settle();
		sigpending(&pending);
		TAP_OK(sigismember(&pending, SIGTERM) == 1,
		       "a SIGTERM to the process waits for the main thread (the maker blocks it)");
	}
	pl__frame_source_stop(fs); /* the maker waits for a buffer: stop wakes it */
	TAP_EQ_U64(atomic_load(&made_count), 2, "stopped while the maker waited, after 2 made");

	/* ahead 0: no thread; the next frame is made at release, in this thread */
	atomic_store(&made_count, 0);
	in_order = hashes = true;
	TAP_OK(pl__frame_source_start(&fs, LEN, 5, 0, make, NULL) == 0, "an inline source");
	TAP_EQ_U64(atomic_load(&made_count), 0, "inline: nothing made before the first take");
	for (uint64_t id = 0; id < 5; id++) {
		f = pl__frame_source_take(fs, id, &hash);
		if (id == 2) /* a send that failed takes the same frame again */
			f = pl__frame_source_take(fs, id, &hash);
		make(NULL, want, LEN, id);
		atomic_fetch_sub(&made_count, 1);
		in_order = in_order && f && memcmp(f, want, LEN) == 0;
		hashes = hashes && f && hash == pl__wire_payload_hash(want, LEN);
		pl__frame_source_release(fs);
		if (id == 0)
			TAP_EQ_U64(atomic_load(&made_count), 2, "inline: the release made the next frame");
	}
	TAP_OK(in_order && hashes, "inline: every frame's bytes and XXH3, in order");
	TAP_EQ_U64(atomic_load(&made_count), 5, "inline: each frame made once, a second take included");
	TAP_OK(pl__frame_source_take(fs, 5, &hash) == NULL, "inline: past the last frame: NULL");
	pl__frame_source_stop(fs);
	return tap_done();
}
