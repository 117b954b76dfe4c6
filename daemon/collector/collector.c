/* See collector.h; the protocol is common/ipc/producer_proto.h. */
#include "collector.h"
#include "accept_pause.h"
#include "control_peer.h"
#include "event_loop.h"
#include "shm_guard.h"
#include "unix_listen.h"

#include "clock.h"
#include "json_writer.h"
#include "kernel_compat.h"
#include "log.h"
#include "producer_proto.h"
#include "producer_view.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define DEFAULT_MAX_PRODUCERS 32
#define DEFAULT_MAX_SHM (64u << 20)
#define RECORDS_PER_WAKEUP 1024
/* A producer whose records made no sense this many times is dropped. */
#define MAX_BAD_RECORDS 64
#define HELLO_TIMEOUT_NS (2ull * 1000 * 1000 * 1000)
/* Wakeup bytes read from a producer's socket per event, at most: a producer
 * that sends them without pause must not keep the loop to itself. */
#define WAKEUPS_PER_EVENT 64
#define POLL_NS ((uint64_t)PL_PRODUCER_POLL_MS * 1000 * 1000)

struct producer {
	struct pl_collector *c;
	struct producer *next;
	int sock;
	struct pl_loop_watch *sock_w;
	bool more; /* records left after a drain: drained again on c->again_fd */
	bool polled; /* PL_HELLO_POLLED: sends no wakeups, drained on c->poll_w */
	/* the memory could not be sealed (no memfd): the producer can cut it
	 * short, so it is read only under shm_guard, and a frame is copied out
	 * before the link gets it */
	bool unsealed;
	uint8_t *frame_copy;
	uint64_t records_dropped_seen; /* the producer's own count, as of the last drain */
	uint32_t id;
	char name[PL_PRODUCER_NAME_MAX + 1];
	pid_t pid;
	bool welcomed;
	/* its socket closed: what is left in its memory is taken now or
	 * never (drain counts what cannot go as not sent) */
	bool leaving;
	uint64_t accepted_ns; /* a producer that never says hello is dropped */

	struct pl_producer_view view; /* the shared memory */
	uint8_t *record_buf; /* a record is copied here before it is looked at */
	size_t record_buf_len;

	uint64_t frames, frames_sent, frames_held, frames_not_sent;
	uint64_t frames_lost_on_link; /* of frames_not_sent: sent, the host never got them */
	uint64_t frames_left; /* of frames_not_sent: waiting for room when it left */
	uint64_t telemetry, telemetry_bad, bad_records, replies_routed, replies_dropped;

	/* PL_HELLO_KEEP_EVERY_FRAME: a frame the link has no room for waits
	 * here (its slot stays READY) and the ring is not read past it */
	bool keep_every_frame;
	bool have_waiting;
	struct pl_producer_frame_rec waiting;
	uint64_t frames_waited; /* frames that had to wait for room */
};

struct pl_collector {
	struct pl_loop *loop;
	struct pl_collector_config cfg;
	char *path;
	int listen_fd;
	struct pl_loop_watch *listen_w, *sweep_w;
	/* the collector's own eventfd, shared with no one: "drain the
	 * producers that had more records than one turn takes" */
	int again_fd;
	struct pl_loop_watch *again_w;
	struct pl_loop_watch *poll_w; /* armed while polled producers are there */
	unsigned polled;
	struct pl__control_peer_policy policy;
	struct pl_collector_sink sink;
	void *sink_ctx;
	struct producer *producers;
	unsigned count;
	uint32_t next_id;
	bool warned_unsealed;
	uint64_t accepted, refused, failed_hellos, disconnected, silent;
	struct pl_accept_pause accept_pause; /* after EMFILE and the like */
	uint64_t shm_faults; /* producers dropped for cutting their memory short */
	/* frames producers left waiting for the link's room when they went
	 * away: counted not sent here, where status still shows them */
	uint64_t frames_left_not_sent;
	struct pl__ratelimit rl;
};

static void producer_free(struct producer *p)
{
	if (p->polled && p->welcomed && --p->c->polled == 0 && p->c->poll_w)
		pl__loop_timer_set(p->c->poll_w, 0, 0);
	pl__loop_remove(p->sock_w);
	if (p->sock >= 0)
		close(p->sock);
	pl__producer_view_unmap(&p->view);
	free(p->record_buf);
	free(p->frame_copy);
	free(p);
}

static void producer_drop(struct producer *p, const char *why)
{
	struct pl_collector *c = p->c;
	struct producer **pp;

	for (pp = &c->producers; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	c->count--;
	c->disconnected++;
	if (p->welcomed)
		pl__log_info("collector: producer %u (%s, pid %d) %s: %llu frames (%llu left "
			     "not sent), %llu telemetry records",
			     p->id, p->name, (int)p->pid, why, (unsigned long long)p->frames,
			     (unsigned long long)p->frames_left, (unsigned long long)p->telemetry);
	producer_free(p);
}

/* One wakeup byte on the producer's socket, never waiting: MSG_DONTWAIT is
 * this call's own, where an eventfd's O_NONBLOCK belongs to the open file
 * that SCM_RIGHTS shares, which a producer can clear to make the daemon
 * block (common/ipc/producer_proto.h). A full socket means wakeups are
 * waiting already. */
static void signal_producer(struct producer *p)
{
	static const char wakeup = 'w';
	ssize_t n;

	do
		n = send(p->sock, &wakeup, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
}

static void drain_again_later(struct producer *p)
{
	uint64_t one = 1;

	p->more = true;
	if (write(p->c->again_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		pl__log_warn("collector: eventfd");
}

static struct producer *find_producer(struct pl_collector *c, uint32_t id)
{
	for (struct producer *p = c->producers; p; p = p->next)
		if (p->id == id && p->welcomed)
			return p;
	return NULL;
}

static uint32_t new_id(struct pl_collector *c)
{
	for (;;) {
		uint32_t id = c->next_id++;

		if (c->next_id > 0xffff)
			c->next_id = 1;
		if (!find_producer(c, id))
			return id;
	}
}

static void bad_record(struct producer *p, const char *what)
{
	p->bad_records++;
	pl__log_warnx_limited(&p->c->rl, "collector: producer %u (%s, pid %d): %s", p->id,
			      p->name, (int)p->pid, what);
}

/* The frame of a checked record to the sink, and its slot back to the
 * producer. */
static void send_frame(struct producer *p, const struct pl_producer_frame_rec *fr)
{
	const uint8_t *data = pl__producer_view_slot(&p->view, fr->slot);
	int ret;

	p->frames++;
	if (p->unsealed) {
		/* here, under the guard, so that the link never reads memory
		 * the producer can cut short */
		memcpy(p->frame_copy, data, fr->len);
		data = p->frame_copy;
	}
	ret = p->c->sink.frame(p->c->sink_ctx, PL_PRODUCER_FRAME_ID(p->id, fr->frame_id), data,
			       fr->len, fr->flags & PL_FRAME_REC_HASHED ? &fr->payload_xxh3 : NULL);
	if (ret == 0) {
		p->frames_sent++;
		atomic_fetch_add_explicit(&p->view.shm->frames_sent, 1, memory_order_relaxed);
	} else if (ret > 0) {
		p->frames_held++;
		atomic_fetch_add_explicit(&p->view.shm->frames_held, 1, memory_order_relaxed);
	} else {
		p->frames_not_sent++;
		atomic_fetch_add_explicit(&p->view.shm->frames_not_sent, 1, memory_order_relaxed);
	}
	/* The link sent or copied the bytes: the slot is the producer's again. */
	atomic_store_explicit(&p->view.shm->slot_state[fr->slot], PL_SLOT_FREE, memory_order_release);
}

/* A frame of a producer that keeps every frame, which waited for the
 * link's room, and whose producer went away: nothing waits for it any
 * more, and a gone producer's memory is not kept (its place among the
 * producers would stay taken for as long as no host came). */
static void leave_frame(struct producer *p, const struct pl_producer_frame_rec *fr)
{
	p->frames++;
	p->frames_not_sent++;
	p->frames_left++;
	p->c->frames_left_not_sent++;
	atomic_fetch_add_explicit(&p->view.shm->frames_not_sent, 1, memory_order_relaxed);
	atomic_store_explicit(&p->view.shm->slot_state[fr->slot], PL_SLOT_FREE, memory_order_release);
}

static bool link_has_room(const struct producer *p, uint32_t len)
{
	const struct pl_collector *c = p->c;

	return !c->sink.frame_fits || c->sink.frame_fits(c->sink_ctx, len);
}

/* A frame record: checked, then sent, or kept waiting for room (false:
 * read no further records now), or, once its producer is leaving, counted
 * not sent. */
static bool handle_frame(struct producer *p, const void *rec, size_t len)
{
	struct pl_producer_frame_rec fr;
	uint32_t state;

	if (len != sizeof(fr)) {
		bad_record(p, "a frame record of the wrong size");
		return true;
	}
	memcpy(&fr, rec, sizeof(fr));
	if (fr.slot >= p->view.slot_count || fr.len > p->view.slot_bytes) {
		bad_record(p, "a frame record naming a slot or length out of range");
		return true;
	}
	state = atomic_load_explicit(&p->view.shm->slot_state[fr.slot], memory_order_acquire);
	if (state != PL_SLOT_READY) {
		bad_record(p, "a frame record for a slot that is not ready");
		return true;
	}
	if (p->keep_every_frame && !link_has_room(p, fr.len)) {
		if (p->leaving) {
			leave_frame(p, &fr);
			return true;
		}
		p->waiting = fr;
		p->have_waiting = true;
		p->frames_waited++;
		return false;
	}
	send_frame(p, &fr);
	return true;
}

/* One or more JSON lines; each must end in '\n' and hold no NUL. */
static void handle_telemetry(struct producer *p, uint8_t *rec, size_t len)
{
	size_t start = 0;

	if (len == 0 || rec[len - 1] != '\n' || memchr(rec, '\0', len)) {
		p->telemetry_bad++;
		bad_record(p, "a telemetry record that is not newline-terminated text");
		return;
	}
	/* record_buf has a spare byte past the record for the NUL. */
	for (size_t i = 0; i < len; i++) {
		if (rec[i] != '\n')
			continue;
		char saved = (char)rec[i + 1];

		rec[i + 1] = '\0';
		if (i > start)
			p->c->sink.telemetry(p->c->sink_ctx, (const char *)rec + start, i + 1 - start);
		rec[i + 1] = (uint8_t)saved;
		p->telemetry++;
		start = i + 1;
	}
}

/* false when the producer was dropped (p is gone). */
static bool drain(struct producer *p)
{
	/* A leaving producer's ring is emptied in one go: its records are not
	 * read again. Each record takes at least a header. */
	unsigned n, max_records = p->leaving ? p->view.records.cap / PL_SHM_RING_RECORD_HEADER
					     : RECORDS_PER_WAKEUP;
	bool freed_slot = false;

	if (p->have_waiting) {
		/* The record was checked when it came, and the slot's place and
		 * size cannot change: a producer that rewrites the slot or its
		 * state meanwhile spoils only its own frame. */
		if (link_has_room(p, p->waiting.len))
			send_frame(p, &p->waiting);
		else if (p->leaving)
			leave_frame(p, &p->waiting);
		else
			return true;
		p->have_waiting = false;
		freed_slot = true;
	}
	/* read here, where an unsealed producer's memory is guarded, for
	 * `perflink status`, which must not read that memory itself */
	p->records_dropped_seen = atomic_load_explicit(&p->view.shm->records_dropped,
						       memory_order_relaxed);
	for (n = 0; n < max_records && !p->have_waiting; n++) {
		uint32_t kind;
		size_t len;
		int r = pl__shm_ring_pop(&p->view.records, &kind, p->record_buf,
					 p->record_buf_len - 1, &len);

		if (r == 0)
			break;
		if (r < 0) {
			bad_record(p, "its record ring made no sense (emptied)");
			continue;
		}
		if (kind == PL_REC_FRAME) {
			if (handle_frame(p, p->record_buf, len))
				freed_slot = true;
		} else if (kind == PL_REC_TELEMETRY) {
			handle_telemetry(p, p->record_buf, len);
		} else {
			bad_record(p, "a record of an unknown kind");
		}
	}
	if (freed_slot)
		signal_producer(p);
	if (p->bad_records > MAX_BAD_RECORDS) {
		producer_drop(p, "dropped after too many malformed records");
		return false;
	}
	if (n == max_records && !p->have_waiting && !p->leaving)
		drain_again_later(p); /* after the other fds had their turn */
	return true;
}

static int drain_run(void *ctx)
{
	return drain(ctx) ? 1 : 0;
}

/* drain, with an unsealed producer's memory guarded (shm_guard.h): one
 * that cuts it short is dropped and counted, and the daemon goes on. false
 * when the producer was dropped. */
static bool drain_safely(struct producer *p)
{
	int r;

	if (!p->unsealed)
		return drain(p);
	r = pl__shm_guard_run(p->view.mem, p->view.mem_bytes, drain_run, p);
	if (r == -EFAULT) {
		p->c->shm_faults++;
		producer_drop(p, "dropped: it cut its shared memory short (SIGBUS caught)");
		return false;
	}
	return r == 1;
}

void pl__collector_writable(struct pl_collector *c)
{
	struct producer *p = c->producers, *next;

	for (; p; p = next) {
		next = p->next; /* drain may drop p */
		if (p->have_waiting)
			drain_safely(p);
	}
}

/* Producers that send no wakeups (PL_HELLO_POLLED) are drained here. */
static void on_poll(void *ctx, uint64_t expirations)
{
	struct pl_collector *c = ctx;
	struct producer *p, *next;

	(void)expirations;
	for (p = c->producers; p; p = next) {
		next = p->next; /* drain may drop p */
		if (p->polled && p->welcomed)
			drain_safely(p);
	}
}

static void on_again(void *ctx, int fd, uint32_t events)
{
	struct pl_collector *c = ctx;
	struct producer *p, *next;
	uint64_t v;

	(void)events;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN && errno != EINTR)
		pl__log_warn("collector: eventfd");
	for (p = c->producers; p; p = next) {
		next = p->next; /* drain may drop p */
		if (p->more) {
			p->more = false;
			drain_safely(p);
		}
	}
}

static uint32_t ring_size(uint32_t asked)
{
	uint32_t size = PL_SHM_RING_MIN;

	while (size < asked && size < PL_SHM_RING_MAX / 16)
		size <<= 1;
	return size;
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Make the memory the producer asked for, within the daemon's limits. */
static int make_shm(struct producer *p, const struct pl_producer_hello *h,
		    struct pl_producer_welcome *w, int *shm_fd)
{
	struct pl_collector *c = p->c;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint32_t rec_cap = ring_size(h->records_bytes), rep_cap = ring_size(h->replies_bytes);
	size_t off, total;
	int fd, err;

	if (h->slot_count > PL_PRODUCER_MAX_SLOTS ||
	    (h->slot_count && (h->slot_bytes == 0 || h->slot_bytes > c->cfg.max_frame_bytes))) {
		snprintf(w->message, sizeof(w->message),
			 "at most %u frame slots of 1 to %zu bytes", PL_PRODUCER_MAX_SLOTS,
			 c->cfg.max_frame_bytes);
		return -EINVAL;
	}
	off = align_up(sizeof(struct pl_producer_shm), page);
	w->records_off = off;
	off += rec_cap;
	w->replies_off = off;
	off += rep_cap;
	off = align_up(off, page);
	w->slots_off = off;
	w->slot_count = h->slot_count;
	w->slot_bytes = (uint32_t)align_up(h->slot_bytes, 64);
	w->records_cap = rec_cap;
	w->replies_cap = rep_cap;
	total = align_up(off + (size_t)h->slot_count * w->slot_bytes, page);
	if (total > c->cfg.max_shm_bytes) {
		snprintf(w->message, sizeof(w->message), "%zu bytes of shared memory asked, at most %zu",
			 total, c->cfg.max_shm_bytes);
		return -E2BIG;
	}
	if ((fd = pl__shm_fd_create("perflink-producer", total)) < 0) {
		snprintf(w->message, sizeof(w->message), "cannot make shared memory: %s",
			 strerror(-fd));
		return fd;
	}
	/* Sealed, the producer can neither shrink the memory under the daemon
	 * (which would make its reads fault) nor grow it. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		p->unsealed = true;
		if (!c->warned_unsealed) {
			c->warned_unsealed = true;
			pl__log_warnx("collector: shared memory cannot be sealed on this kernel "
				      "(no memfd): producers' memory is read under a SIGBUS guard "
				      "and frames are copied once more");
		}
	}
	w->shm_bytes = total;
	if ((err = pl__producer_view_map(&p->view, fd, w)) < 0) {
		close(fd);
		snprintf(w->message, sizeof(w->message), "cannot map the shared memory: %s",
			 strerror(-err));
		return err;
	}
	p->view.shm->magic = PL_PRODUCER_MAGIC;
	p->view.shm->version = PL_PRODUCER_VERSION;
	p->record_buf_len = rec_cap + 1;
	if (!(p->record_buf = malloc(p->record_buf_len)) ||
	    (p->unsealed && w->slot_count && !(p->frame_copy = malloc(w->slot_bytes)))) {
		close(fd);
		return -ENOMEM;
	}
	*shm_fd = fd;
	return 0;
}

static int send_welcome(struct producer *p, struct pl_producer_welcome *w, int shm_fd)
{
	int fds[1] = { shm_fd };
	union {
		char buf[CMSG_SPACE(sizeof(fds))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { w, sizeof(*w) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (shm_fd >= 0) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(fds));
		memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	}
	do
		n = sendmsg(p->sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(*w) ? 0 : -EIO;
}

static void refuse(struct producer *p, struct pl_producer_welcome *w, int err)
{
	p->c->failed_hellos++;
	w->status = (int16_t)err;
	pl__log_warnx_limited(&p->c->rl, "collector: producer pid %d refused: %s", (int)p->pid,
			      w->message);
	send_welcome(p, w, -1);
}

static void on_hello(struct producer *p)
{
	struct pl_producer_hello h;
	struct pl_producer_welcome w;
	int shm_fd = -1, err;
	ssize_t n;

	memset(&w, 0, sizeof(w));
	w.magic = PL_PRODUCER_MAGIC;
	w.version = PL_PRODUCER_VERSION;
	do
		n = recv(p->sock, &h, sizeof(h), MSG_DONTWAIT | MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		producer_drop(p, "left before saying hello");
		return;
	}
	if (n != (ssize_t)sizeof(h) || h.magic != PL_PRODUCER_MAGIC ||
	    h.version != PL_PRODUCER_VERSION) {
		snprintf(w.message, sizeof(w.message), "not a perflink producer hello (version %d)",
			 PL_PRODUCER_VERSION);
		refuse(p, &w, -EPROTO);
		producer_drop(p, "refused");
		return;
	}
	if (h.flags & ~PL_HELLO_KNOWN_FLAGS) {
		snprintf(w.message, sizeof(w.message), "hello flags 0x%x this perflinkd does not know",
			 (unsigned)(h.flags & ~PL_HELLO_KNOWN_FLAGS));
		refuse(p, &w, -EINVAL);
		producer_drop(p, "refused");
		return;
	}
	p->keep_every_frame = (h.flags & PL_HELLO_KEEP_EVERY_FRAME) != 0;
	p->polled = (h.flags & PL_HELLO_POLLED) != 0;
	w.flags = h.flags;
	memcpy(p->name, h.name, PL_PRODUCER_NAME_MAX);
	p->name[PL_PRODUCER_NAME_MAX] = '\0';
	for (char *s = p->name; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			*s = '?';
	if ((err = make_shm(p, &h, &w, &shm_fd)) < 0) {
		if (shm_fd >= 0)
			close(shm_fd);
		refuse(p, &w, err);
		producer_drop(p, "refused");
		return;
	}
	p->id = new_id(p->c);
	w.producer_id = p->id;
	err = send_welcome(p, &w, shm_fd);
	close(shm_fd);
	if (err < 0) {
		producer_drop(p, "could not be welcomed");
		return;
	}
	p->welcomed = true;
	if (p->polled && p->c->polled++ == 0)
		pl__loop_timer_set(p->c->poll_w, POLL_NS, POLL_NS);
	pl__log_info("collector: producer %u: %s (pid %d), %u frame slots of %u bytes", p->id,
		     p->name, (int)p->pid, p->view.slot_count, p->view.slot_bytes);
}

static void on_socket(void *ctx, int fd, uint32_t events)
{
	struct producer *p = ctx;
	ssize_t n = -1;
	bool gone;
	char byte;

	if (!p->welcomed) {
		on_hello(p);
		return;
	}
	/* After the hello the socket carries wakeups, each a byte whose value
	 * means nothing, read without waiting; the end of the stream means
	 * the producer is gone. */
	(void)events;
	for (int i = 0; i < WAKEUPS_PER_EVENT; i++) {
		do
			n = recv(fd, &byte, 1, MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		if (n <= 0)
			break;
	}
	gone = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
	/* What it put there before it left still counts: whatever the link
	 * takes goes, and every frame it does not is counted, not dropped with
	 * the producer (issue 16). */
	if (gone)
		p->leaving = true;
	if (drain_safely(p) && gone)
		producer_drop(p, "disconnected");
}

static void on_accept(void *ctx, int lfd, uint32_t events)
{
	struct pl_collector *c = ctx;
	struct pl__control_peer peer;
	struct producer *p;
	int fd;

	(void)events;
	fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		pl__accept_pause_begin(&c->accept_pause, c->listen_w, errno, "collector", &c->rl);
		return;
	}
	if (pl__control_peer_get(fd, &peer) < 0 || !pl__control_peer_allowed(&c->policy, &peer)) {
		c->refused++;
		pl__log_warnx_limited(&c->rl, "collector: producer uid %u refused (not root, "
				      "perflinkd's user or the control group)", (unsigned)peer.uid);
		close(fd);
		return;
	}
	if (c->count >= c->cfg.max_producers || !(p = calloc(1, sizeof(*p)))) {
		c->refused++;
		pl__log_warnx_limited(&c->rl, "collector: producer pid %d refused: %u producers "
				      "already", (int)peer.pid, c->count);
		close(fd);
		return;
	}
	p->c = c;
	p->sock = fd;
	p->pid = peer.pid;
	p->accepted_ns = pl__mono_ns();
	snprintf(p->name, sizeof(p->name), "?");
	if (pl__loop_add_fd(c->loop, fd, EPOLLIN, on_socket, p, &p->sock_w) < 0) {
		producer_free(p);
		return;
	}
	p->next = c->producers;
	c->producers = p;
	c->count++;
	c->accepted++;
}

/* Connections that took a slot but never said hello. */
static void on_sweep(void *ctx, uint64_t expirations)
{
	struct pl_collector *c = ctx;
	uint64_t now = pl__mono_ns();
	struct producer *p = c->producers, *next;

	(void)expirations;
	for (; p; p = next) {
		next = p->next;
		if (!p->welcomed && now - p->accepted_ns > HELLO_TIMEOUT_NS) {
			c->silent++;
			pl__log_warnx_limited(&c->rl, "collector: pid %d connected but said no "
					      "hello within 2 s; dropped", (int)p->pid);
			producer_drop(p, "silent");
		}
	}
	pl__accept_pause_check(&c->accept_pause, c->listen_w, now);
}

int pl__collector_open(struct pl_collector **out, struct pl_loop *loop,
		       const struct pl_collector_config *cfg, const struct pl_collector_sink *sink,
		       void *sink_ctx)
{
	struct pl_collector *c = calloc(1, sizeof(*c));
	struct pl__ratelimit rl = PL_RATELIMIT_INIT(1000);
	int ret;

	if (!c) {
		pl__log_warnx("collector: out of memory");
		return -ENOMEM;
	}
	c->loop = loop;
	c->cfg = *cfg;
	c->listen_fd = -1;
	c->again_fd = -1;
	c->sink = *sink;
	c->sink_ctx = sink_ctx;
	c->next_id = 1;
	c->rl = rl;
	if (!c->cfg.max_producers)
		c->cfg.max_producers = DEFAULT_MAX_PRODUCERS;
	if (!c->cfg.max_shm_bytes)
		c->cfg.max_shm_bytes = DEFAULT_MAX_SHM;
	if (!(c->path = strdup(cfg->path ? cfg->path : PL_PRODUCER_SOCKET_DEFAULT))) {
		pl__log_warnx("collector: out of memory");
		ret = -ENOMEM;
		goto fail;
	}
	if ((ret = pl__control_peer_policy_init(&c->policy, cfg->group)) < 0)
		goto fail;
	ret = pl__unix_listen(c->path, SOCK_SEQPACKET, c->policy.has_group, c->policy.gid,
			      "producer-socket");
	if (ret < 0)
		goto fail;
	c->listen_fd = ret;
	if ((ret = pl__shm_guard_install()) < 0)
		pl__log_warnc(ret, "collector: SIGBUS guard");
	if ((ret = c->again_fd = pl__eventfd_create(0)) < 0 ||
	    (ret = pl__loop_add_fd(loop, c->again_fd, EPOLLIN, on_again, c, &c->again_w)) < 0 ||
	    (ret = pl__loop_add_timer(loop, 0, 0, on_poll, c, &c->poll_w)) < 0 ||
	    (ret = pl__loop_add_fd(loop, c->listen_fd, EPOLLIN, on_accept, c, &c->listen_w)) < 0 ||
	    (ret = pl__loop_add_timer(loop, HELLO_TIMEOUT_NS / 2, HELLO_TIMEOUT_NS / 2, on_sweep, c,
				      &c->sweep_w)) < 0) {
		pl__log_warnx("collector: event loop: %s", strerror(-ret));
		goto fail;
	}
	*out = c;
	return 0;
fail:
	pl__collector_close(c);
	return ret;
}

struct reply_push {
	struct producer *p;
	uint64_t id;
	const void *payload;
	size_t len;
};

/* The reply into the producer's ring, or counted there as dropped. */
static int push_reply_run(void *ctx)
{
	struct reply_push *rp = ctx;
	struct pl_producer_view *v = &rp->p->view;
	int ret = pl__shm_ring_push(&v->replies, PL_REC_REPLY, &rp->id, sizeof(rp->id),
				    rp->payload, rp->len);

	if (ret < 0)
		atomic_fetch_add_explicit(&v->shm->replies_dropped, 1, memory_order_relaxed);
	return ret; /* -ENOSPC or -EMSGSIZE; -EFAULT is only ever the guard's */
}

void pl__collector_frames_lost(struct pl_collector *c, const uint64_t *wire_frame_ids, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct producer *p =
			find_producer(c, (uint32_t)(wire_frame_ids[i] >> PL_PRODUCER_FRAME_ID_BITS));

		/* a producer gone since is not told; one counts its own */
		if (!p || p->frames_sent == 0)
			continue;
		p->frames_sent--;
		p->frames_not_sent++;
		p->frames_lost_on_link++;
		atomic_fetch_sub_explicit(&p->view.shm->frames_sent, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&p->view.shm->frames_not_sent, 1, memory_order_relaxed);
	}
}

int pl__collector_reply(struct pl_collector *c, uint64_t wire_frame_id, const void *payload,
			size_t len)
{
	struct producer *p = find_producer(c, (uint32_t)(wire_frame_id >> PL_PRODUCER_FRAME_ID_BITS));
	struct reply_push rp = { p, wire_frame_id & PL_PRODUCER_FRAME_ID_MASK, payload, len };
	int ret;

	if (!p)
		return -ENOENT;
	ret = p->unsealed ? pl__shm_guard_run(p->view.mem, p->view.mem_bytes, push_reply_run, &rp)
			  : push_reply_run(&rp);
	if (ret == -EFAULT) {
		c->shm_faults++;
		producer_drop(p, "dropped: it cut its shared memory short (SIGBUS caught)");
		return -ENOENT;
	}
	if (ret < 0) {
		p->replies_dropped++;
		return ret;
	}
	p->replies_routed++;
	signal_producer(p);
	return 0;
}

void pl__collector_status(const struct pl_collector *c, struct pl_json *j)
{
	pl__json_begin_object(j, "collector");
	pl__json_str(j, "socket", c->path);
	pl__json_u64(j, "accepted", c->accepted);
	pl__json_u64(j, "refused", c->refused + c->failed_hellos + c->silent);
	pl__json_u64(j, "accept_pauses", c->accept_pause.pauses);
	pl__json_u64(j, "shm_faults", c->shm_faults);
	pl__json_u64(j, "frames_left_not_sent", c->frames_left_not_sent);
	pl__json_begin_array(j, "producers");
	for (const struct producer *p = c->producers; p; p = p->next) {
		if (!p->welcomed)
			continue;
		pl__json_begin_object(j, NULL);
		pl__json_u64(j, "id", p->id);
		pl__json_str(j, "name", p->name);
		pl__json_i64(j, "pid", p->pid);
		pl__json_u64(j, "frames", p->frames);
		pl__json_u64(j, "frames_sent", p->frames_sent);
		pl__json_u64(j, "frames_held", p->frames_held);
		pl__json_u64(j, "frames_not_sent", p->frames_not_sent);
		pl__json_bool(j, "keep_every_frame", p->keep_every_frame);
		pl__json_u64(j, "frames_waited", p->frames_waited);
		/* of frames_not_sent: sent, and the host's connection went away
		 * before it took them */
		pl__json_u64(j, "frames_lost_on_link", p->frames_lost_on_link);
		pl__json_u64(j, "telemetry", p->telemetry);
		pl__json_u64(j, "telemetry_dropped_by_producer", p->records_dropped_seen);
		pl__json_u64(j, "replies", p->replies_routed);
		pl__json_u64(j, "replies_dropped", p->replies_dropped);
		pl__json_u64(j, "bad_records", p->bad_records + p->view.records.corrupt);
		pl__json_end_object(j);
	}
	pl__json_end_array(j);
	pl__json_end_object(j);
}

void pl__collector_close(struct pl_collector *c)
{
	if (!c)
		return;
	while (c->producers) {
		struct producer *p = c->producers;

		c->producers = p->next;
		producer_free(p);
	}
	pl__loop_remove(c->listen_w);
	pl__loop_remove(c->sweep_w);
	pl__loop_remove(c->again_w);
	pl__loop_remove(c->poll_w);
	if (c->again_fd >= 0)
		close(c->again_fd);
	if (c->listen_fd >= 0) {
		close(c->listen_fd);
		unlink(c->path);
	}
	pl__control_peer_policy_free(&c->policy);
	free(c->path);
	free(c);
}
