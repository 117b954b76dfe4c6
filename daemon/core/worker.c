/* See worker.h. The queue is a ring of records (a 32-bit length, then the
 * line and its NUL) under one mutex that either side holds only to copy bytes; an
 * eventfd, written when the ring goes from empty to not, wakes the loop. */
#include "worker.h"
#include "event_loop.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

struct pl_worker {
	struct pl_loop_watch *watch;
	int efd;
	char name[16];
	uint64_t interval_ns;
	struct pl_worker_ops ops;
	void *ctx;
	pthread_t thread;
	bool started;

	pthread_mutex_t lock; /* everything below */
	pthread_cond_t wake;  /* stop was set */
	bool stop, finished;
	int ret;
	char *ring, *scratch; /* cap bytes each */
	size_t cap, head, used;
	struct pl_worker_stats stats;
};

static void ring_copy_in(struct pl_worker *w, size_t at, const void *src, size_t n)
{
	size_t first = n < w->cap - at ? n : w->cap - at;

	memcpy(w->ring + at, src, first);
	memcpy(w->ring, (const char *)src + first, n - first);
}

bool pl__worker_put(struct pl_worker *w, const char *line, size_t len)
{
	uint32_t n = (uint32_t)len;
	bool was_empty, fits;

	pthread_mutex_lock(&w->lock);
	fits = len < UINT32_MAX && w->used + sizeof(n) + len + 1 <= w->cap;
	was_empty = w->used == 0;
	if (fits) {
		size_t tail = (w->head + w->used) % w->cap;

		ring_copy_in(w, tail, &n, sizeof(n));
		ring_copy_in(w, (tail + sizeof(n)) % w->cap, line, len);
		ring_copy_in(w, (tail + sizeof(n) + len) % w->cap, "", 1);
		w->used += sizeof(n) + len + 1;
	} else {
		w->stats.lines_dropped++;
	}
	pthread_mutex_unlock(&w->lock);
	if (fits && was_empty) {
		uint64_t one = 1;

		if (write(w->efd, &one, sizeof(one)) < 0) {
			/* EAGAIN: the counter is full, the loop is woken anyway */
		}
	}
	return fits;
}

/* Take every queued line out of the ring into scratch: n bytes. */
static size_t take_all(struct pl_worker *w, bool *finished, int *ret)
{
	size_t n, first;

	pthread_mutex_lock(&w->lock);
	n = w->used;
	first = n < w->cap - w->head ? n : w->cap - w->head;
	memcpy(w->scratch, w->ring + w->head, first);
	memcpy(w->scratch + first, w->ring, n - first);
	w->head = (w->head + n) % w->cap;
	w->used = 0;
	*finished = w->finished;
	*ret = w->ret;
	pthread_mutex_unlock(&w->lock);
	return n;
}

static void hand_on(struct pl_worker *w, size_t n)
{
	for (size_t at = 0; at + sizeof(uint32_t) <= n;) {
		uint32_t len;

		memcpy(&len, w->scratch + at, sizeof(len));
		at += sizeof(len);
		w->ops.line(w->ctx, w->scratch + at, len);
		at += len + 1;
	}
}

static void on_wake(void *ctx, int fd, uint32_t events)
{
	struct pl_worker *w = ctx;
	uint64_t count;
	bool finished;
	int ret;

	(void)events;
	if (read(fd, &count, sizeof(count)) < 0) {
		/* EAGAIN: woken for lines an earlier wake took */
	}
	hand_on(w, take_all(w, &finished, &ret));
	if (finished) {
		pl__loop_remove(w->watch);
		w->watch = NULL;
		w->ops.done(w->ctx, ret); /* may free w: nothing after it */
	}
}

static struct timespec ts_of(uint64_t ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000u),
				  .tv_nsec = (long)(ns % 1000000000u) };
}

static void *run(void *arg)
{
	struct pl_worker *w = arg;
	uint64_t next = pl__mono_ns() + w->interval_ns, now, one = 1;
	int ret = 0;
	bool stop;

	if (w->ops.start)
		w->ops.start(w->ctx);
	for (;;) {
		struct timespec at = ts_of(next);

		pthread_mutex_lock(&w->lock);
		while (!w->stop && pthread_cond_timedwait(&w->wake, &w->lock, &at) != ETIMEDOUT)
			;
		stop = w->stop;
		pthread_mutex_unlock(&w->lock);
		if (stop)
			break;
		ret = w->ops.tick(w->ctx);
		now = pl__mono_ns();
		next += w->interval_ns;
		pthread_mutex_lock(&w->lock);
		w->stats.ticks++;
		if (now >= next) {
			uint64_t missed = (now - next) / w->interval_ns + 1;

			w->stats.late_ticks += missed;
			next += missed * w->interval_ns;
		}
		w->finished = ret != 0;
		w->ret = ret;
		pthread_mutex_unlock(&w->lock);
		if (ret != 0)
			break;
	}
	if (ret != 0 && write(w->efd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, the loop is woken anyway */
	}
	return NULL;
}

int pl__worker_new(struct pl_loop *loop, const char *name, uint64_t interval_ns,
		   size_t queue_bytes, const struct pl_worker_ops *ops, void *ctx,
		   struct pl_worker **out)
{
	struct pl_worker *w = calloc(1, sizeof(*w));
	pthread_condattr_t ca;
	int err;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->efd = -1;
	snprintf(w->name, sizeof(w->name), "%s", name);
	w->interval_ns = interval_ns ? interval_ns : 1000000000u;
	w->ops = *ops;
	w->ctx = ctx;
	w->cap = queue_bytes;
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->wake, &ca);
	pthread_condattr_destroy(&ca);
	w->ring = malloc(w->cap);
	w->scratch = malloc(w->cap);
	if (!w->ring || !w->scratch || w->cap < 64) {
		err = -ENOMEM;
		goto fail;
	}
	if ((w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		err = -errno;
		goto fail;
	}
	if ((err = pl__loop_add_fd(loop, w->efd, EPOLLIN, on_wake, w, &w->watch)) < 0)
		goto fail;
	*out = w;
	return 0;
fail:
	pl__worker_free(w);
	return err;
}

int pl__worker_start(struct pl_worker *w)
{
	int err = pthread_create(&w->thread, NULL, run, w);

	if (err)
		return -err;
	w->started = true;
	pthread_setname_np(w->thread, w->name);
	return 0;
}

void pl__worker_get_stats(struct pl_worker *w, struct pl_worker_stats *out)
{
	pthread_mutex_lock(&w->lock);
	*out = w->stats;
	pthread_mutex_unlock(&w->lock);
}

void pl__worker_free(struct pl_worker *w)
{
	bool finished;
	int ret;

	if (!w)
		return;
	if (w->started) {
		pthread_mutex_lock(&w->lock);
		w->stop = true;
		pthread_cond_signal(&w->wake);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
		if (w->scratch && w->ring)
			hand_on(w, take_all(w, &finished, &ret));
	}
	pl__loop_remove(w->watch);
	if (w->efd >= 0)
		close(w->efd);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	free(w->ring);
	free(w->scratch);
	free(w);
}
