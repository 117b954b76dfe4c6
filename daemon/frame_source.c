/* Frames made ahead on a thread of their own (frame_source.h). A ring of
 * `ahead` buffers: frame n lives in buffer n % ahead; the maker may make
 * frame n once frame n - ahead is released, the taker may take it once it
 * is made. One mutex and one condition for both sides: a frame is a few
 * hundred KiB of work, so the handover is rare. */
#include "frame_source.h"
#include "clock.h"
#include "wire.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>

struct pl_frame_source {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	uint8_t **buf;
	uint64_t *hash;
	size_t len;
	unsigned ahead;
	uint64_t count;
	uint64_t made, released; /* frames made; frames whose buffer is free again */
	uint64_t hash_ns;
	bool stop;
	pl_frame_make_fn make;
	void *ctx;
};

static void *maker(void *arg)
{
	struct pl_frame_source *fs = arg;
	uint64_t n = 0;

	for (;;) {
		unsigned slot;
		uint64_t t0, h;

		pthread_mutex_lock(&fs->lock);
		while (!fs->stop && n < fs->count && n >= fs->released + fs->ahead)
			pthread_cond_wait(&fs->changed, &fs->lock);
		if (fs->stop || n >= fs->count) {
			pthread_mutex_unlock(&fs->lock);
			return NULL;
		}
		pthread_mutex_unlock(&fs->lock);
		/* the buffer is the maker's alone until `made` passes n */
		slot = (unsigned)(n % fs->ahead);
		fs->make(fs->ctx, fs->buf[slot], fs->len, n);
		t0 = pl__mono_ns();
		h = pl__wire_payload_hash(fs->buf[slot], fs->len);
		pthread_mutex_lock(&fs->lock);
		fs->hash_ns += pl__mono_ns() - t0;
		fs->hash[slot] = h;
		fs->made = ++n;
		pthread_cond_broadcast(&fs->changed);
		pthread_mutex_unlock(&fs->lock);
	}
}

static void free_source(struct pl_frame_source *fs)
{
	if (fs->buf) {
		for (unsigned i = 0; i < fs->ahead; i++)
			free(fs->buf[i]);
	}
	free(fs->buf);
	free(fs->hash);
	pthread_mutex_destroy(&fs->lock);
	pthread_cond_destroy(&fs->changed);
	free(fs);
}

int pl__frame_source_start(struct pl_frame_source **out, size_t len, uint64_t count,
			   unsigned ahead, pl_frame_make_fn make, void *ctx)
{
	struct pl_frame_source *fs = calloc(1, sizeof(*fs));
	sigset_t all, old;
	int r;

	if (!fs)
		return -ENOMEM;
	pthread_mutex_init(&fs->lock, NULL);
	pthread_cond_init(&fs->changed, NULL);
	fs->len = len;
	fs->count = count;
	fs->ahead = ahead ? ahead : 1;
	fs->make = make;
	fs->ctx = ctx;
	fs->buf = calloc(fs->ahead, sizeof(*fs->buf));
	fs->hash = calloc(fs->ahead, sizeof(*fs->hash));
	if (!fs->buf || !fs->hash) {
		free_source(fs);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < fs->ahead; i++) {
		if (!(fs->buf[i] = malloc(len ? len : 1))) {
			free_source(fs);
			return -ENOMEM;
		}
	}
	/* The thread takes no signal: the program's event loop takes SIGTERM
	 * and SIGINT through a signalfd with them blocked in its own thread, and
	 * a process-directed signal goes to any thread that does not block it,
	 * where the default action would end the process. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&fs->thread, NULL, maker, fs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		free_source(fs);
		return -r;
	}
	*out = fs;
	return 0;
}

const uint8_t *pl__frame_source_take(struct pl_frame_source *fs, uint64_t frame_id,
				     uint64_t *hash)
{
	unsigned slot;

	if (frame_id >= fs->count)
		return NULL;
	pthread_mutex_lock(&fs->lock);
	while (fs->made <= frame_id)
		pthread_cond_wait(&fs->changed, &fs->lock);
	slot = (unsigned)(frame_id % fs->ahead);
	*hash = fs->hash[slot];
	pthread_mutex_unlock(&fs->lock);
	return fs->buf[slot];
}

void pl__frame_source_release(struct pl_frame_source *fs)
{
	pthread_mutex_lock(&fs->lock);
	if (fs->released < fs->made)
		fs->released++;
	pthread_cond_broadcast(&fs->changed);
	pthread_mutex_unlock(&fs->lock);
}

uint64_t pl__frame_source_hash_ns(struct pl_frame_source *fs)
{
	uint64_t ns;

	pthread_mutex_lock(&fs->lock);
	ns = fs->hash_ns;
	pthread_mutex_unlock(&fs->lock);
	return ns;
}

void pl__frame_source_stop(struct pl_frame_source *fs)
{
	if (!fs)
		return;
	pthread_mutex_lock(&fs->lock);
	fs->stop = true;
	pthread_cond_broadcast(&fs->changed);
	pthread_mutex_unlock(&fs->lock);
	pthread_join(fs->thread, NULL);
	free_source(fs);
}
