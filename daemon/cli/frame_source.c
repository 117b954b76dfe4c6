/* Frames made ahead on a thread of their own (frame_source.h), or in the
 * caller's thread between sends (ahead 0). A ring of `ahead` buffers: frame
 * n lives in buffer n % ahead; the maker may make frame n once frame
 * n - ahead is released, the taker may take it once it is made. One mutex and one condition for both sides: a frame is a few
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
	bool inline_make; /* ahead 0: buf[0] holds frame made - 1, if made */
	pl_frame_make_fn make;
	void *ctx;
};

/* Frame n into its buffer, hashed. The maker thread's, or the caller's
 * with inline_make. */
static void make_one(struct pl_frame_source *fs, uint64_t n, uint64_t *hash_ns)
{
	unsigned slot = (unsigned)(n % fs->ahead);
	uint64_t t0;

	fs->make(fs->ctx, fs->buf[slot], fs->len, n);
	t0 = pl__mono_ns();
	fs->hash[slot] = pl__wire_payload_hash(fs->buf[slot], fs->len);
	*hash_ns += pl__mono_ns() - t0;
}

static void *maker(void *arg)
{
	struct pl_frame_source *fs = arg;
	uint64_t n = 0, ns = 0;

	for (;;) {
		pthread_mutex_lock(&fs->lock);
		while (!fs->stop && n < fs->count && n >= fs->released + fs->ahead)
			pthread_cond_wait(&fs->changed, &fs->lock);
		if (fs->stop || n >= fs->count) {
			pthread_mutex_unlock(&fs->lock);
			return NULL;
		}
		pthread_mutex_unlock(&fs->lock);
		/* the buffer (and its hash) is the maker's alone until `made`
		 * passes n */
		make_one(fs, n, &ns);
		pthread_mutex_lock(&fs->lock);
		fs->hash_ns += ns;
		ns = 0;
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
	fs->inline_make = ahead == 0;
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
	*out = fs;
	if (fs->inline_make)
		return 0;
	/* The thread takes no signal: the program's event loop takes SIGTERM
	 * and SIGINT through a signalfd with them blocked in its own thread, and
	 * a process-directed signal goes to any thread that does not block it,
	 * where the default action would end the process. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&fs->thread, NULL, maker, fs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		*out = NULL;
		free_source(fs);
		return -r;
	}
	return 0;
}

const uint8_t *pl__frame_source_take(struct pl_frame_source *fs, uint64_t frame_id,
				     uint64_t *hash)
{
	unsigned slot;

	if (frame_id >= fs->count)
		return NULL;
	if (fs->inline_make) {
		if (fs->made != frame_id + 1) {
			make_one(fs, frame_id, &fs->hash_ns);
			fs->made = frame_id + 1;
		}
		*hash = fs->hash[0];
		return fs->buf[0];
	}
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
	if (fs->inline_make) {
		/* the next frame now, while the one released is in flight */
		if (++fs->released < fs->count) {
			make_one(fs, fs->released, &fs->hash_ns);
			fs->made = fs->released + 1;
		}
		return;
	}
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
	if (fs->inline_make) {
		free_source(fs);
		return;
	}
	pthread_mutex_lock(&fs->lock);
	fs->stop = true;
	pthread_cond_broadcast(&fs->changed);
	pthread_mutex_unlock(&fs->lock);
	pthread_join(fs->thread, NULL);
	free_source(fs);
}
