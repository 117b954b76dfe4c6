/* The producer side of common/ipc/producer_proto.h: connect to perflinkd, map
 * the memory it made, fill frame slots in place, push records, read
 * replies. See include/perflink.h for the contract.
 *
 * Also used, compiled without exported symbols, by the preload library's
 * reporter, which is a telemetry-only producer and leaves frame checksums
 * to perflinkd (frame_checksum.h). */
#include "perflink.h"
#include "clock.h"
#include "frame_checksum.h"
#include "pl_config.h"
#include "producer_fork.h"
#include "producer_proto.h"
#include "producer_view.h"
#include "fd_message.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define DEFAULT_SOCKET PL_RUNSTATEDIR "/perflink/producers"
#define DEFAULT_SLOTS 4
#define DEFAULT_RING (64u * 1024)

struct pl_producer {
	int sock;                     /* hello and welcome, then wakeups both ways */
	bool polled;                  /* PL_HELLO_POLLED: no wakeups from here */
	dev_t sock_dev;               /* which socket it is, for pl__producer_still_ours */
	ino_t sock_ino;
	atomic_bool gone;             /* perflinkd closed the connection: for good */
	struct pl_producer_options o; /* as opened, for pl_producer_reopen */
	char *socket_path, *name;     /* o's strings, owned */
	struct pl_producer_view view; /* the shared memory perflinkd made */
	uint32_t id;
	pthread_mutex_t push_lock;  /* records ring: one pusher at a time */
	pthread_mutex_t reply_lock; /* replies ring: one popper at a time */
	uint8_t *reply_buf;         /* a reply record is copied here (replies ring size) */
	size_t reply_buf_len;
	uint64_t frames_lost;       /* under push_lock */
	uint64_t telemetry_dropped; /* under push_lock */
};

#define OPEN_TIMEOUT_S 2 /* as long as perflinkd waits for a hello */
static const struct timeval open_timeout = { OPEN_TIMEOUT_S, 0 };
/* How long pl_producer_close waits for perflinkd to take the frames of a
 * producer that keeps every frame: as long as the open may wait, and as
 * long as the link's default deadline gives a stalled host. */
#define CLOSE_WAIT_MS 2000

void (*pl__producer_fd_watch)(int fd, bool mine);
bool pl__producer_polled;

static void watch_fd(int fd, bool mine)
{
	if (pl__producer_fd_watch && fd >= 0)
		pl__producer_fd_watch(fd, mine);
}

static void close_sock(int fd)
{
	watch_fd(fd, false);
	close(fd);
}

/* In the preload shim (which watches its fds), its socket moves to a
 * number high under the target's limit: a target that closes every fd
 * behind the shim's back (a raw close_range system call, which no hook
 * sees) and opens its own files gets the lowest numbers back, so they do
 * not land on the number the shim's reporter checked a moment before it
 * sends (pl__producer_still_ours: the check and the send are two calls).
 * Under 1024 at most: a higher number would make the kernel grow the
 * target's fd table. */
static int move_high(int fd)
{
	struct rlimit rl;
	rlim_t top = 1024;
	int high;

	if (!pl__producer_fd_watch)
		return fd;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < top)
		top = rl.rlim_cur;
	if (top < 64)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, (int)(top - 32));
	if (high < 0)
		return fd; /* all taken up there: the identity check stays */
	close(fd);
	return high;
}

static int connect_daemon(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, ret;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	fd = move_high(fd);
	watch_fd(fd, true);
	/* A daemon that is stopped or stuck must not hold the application: the
	 * connect (a full backlog), the hello and the welcome each wait at most
	 * OPEN_TIMEOUT_S. The socket carries nothing after the welcome. */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &open_timeout, sizeof(open_timeout)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &open_timeout, sizeof(open_timeout)) < 0) {
		ret = -errno;
		close_sock(fd);
		return ret;
	}
	do
		ret = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	while (ret < 0 && errno == EINTR);
	if (ret < 0) {
		ret = errno == EAGAIN ? -ETIMEDOUT : -errno;
		close_sock(fd);
		return ret;
	}
	return fd;
}

static uint32_t clamp_u32(size_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The welcome, with the memory's fd. A daemon that refused sends none. */
static int receive_welcome(int sock, struct pl_producer_welcome *w, int *shm_fd)
{
	ssize_t n = pl__recv_fd_message(sock, w, sizeof(*w), MSG_CMSG_CLOEXEC, shm_fd);

	if (n < 0)
		return n == -EAGAIN || n == -EWOULDBLOCK ? -ETIMEDOUT : (int)n;
	if (n != (ssize_t)sizeof(*w) || w->magic != PL_PRODUCER_MAGIC)
		return -EPROTO;
	if (w->status < 0)
		return w->status;
	if (*shm_fd < 0)
		return -EPROTO;
	return 0;
}

/* The public structs keep their size from release to release (what is
 * added takes a reserved slot): the layouts as first released. */
_Static_assert(sizeof(struct pl_producer_options) ==
		       sizeof(struct {
			       const char *a, *b;
			       unsigned c;
			       size_t d, e, f;
			       uint64_t reserved[8];
		       }),
	       "pl_producer_options changed size: take a reserved slot instead");
_Static_assert(sizeof(struct pl_producer_stats) ==
		       sizeof(struct {
			       uint64_t a[7];
			       uint32_t b;
			       uint64_t reserved[8];
		       }),
	       "pl_producer_stats changed size: take a reserved slot instead");

static const struct pl_producer_options unset_options;

/* Whether perflinkd went away: its end of the socket closed (hung up or in
 * error; POLLNVAL if the descriptor is not there at all). Readable alone is
 * a wakeup. Once gone, always gone: the producer's memory is no one's any
 * more. */
static bool daemon_gone(struct pl_producer *p)
{
	struct pollfd pfd = { p->sock, POLLRDHUP, 0 };

	if (atomic_load_explicit(&p->gone, memory_order_relaxed))
		return true;
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR | POLLRDHUP | POLLNVAL))) {
		atomic_store_explicit(&p->gone, true, memory_order_relaxed);
		return true;
	}
	return false;
}

int pl_producer_open(struct pl_producer **out, const struct pl_producer_options *opt)
{
	struct pl_producer_options o = { 0 };
	uint64_t unknown_flags;
	struct pl_producer_hello h;
	struct pl_producer_welcome w;
	struct pl_producer *p;
	const char *path;
	int shm_fd = -1, ret;

	if (opt)
		o = *opt;
	if (memcmp(o.reserved, unset_options.reserved, sizeof(o.reserved)) != 0) {
		fprintf(stderr, "perflink: pl_producer_open: options this libperflink does not "
				"know (reserved is not zero: built against a newer perflink.h?)\n");
		return -EINVAL;
	}
	unknown_flags = o.flags & ~(uint64_t)PL_PRODUCER_KEEP_EVERY_FRAME;
	if (unknown_flags) {
		fprintf(stderr, "perflink: pl_producer_open: flags 0x%llx this libperflink does "
				"not know\n",
			(unsigned long long)unknown_flags);
		return -EINVAL;
	}
	path = o.socket_path ? o.socket_path : secure_getenv("PERFLINK_SOCKET");
	if (!path || !*path)
		path = DEFAULT_SOCKET;
	if (!(p = calloc(1, sizeof(*p))))
		return -ENOMEM;
	p->sock = -1;
	p->o = o;
	p->o.socket_path = p->socket_path = o.socket_path ? strdup(o.socket_path) : NULL;
	p->o.name = p->name = o.name ? strdup(o.name) : NULL;
	pthread_mutex_init(&p->push_lock, NULL);
	pthread_mutex_init(&p->reply_lock, NULL);
	pl__frame_checksum_prepare();
	if ((ret = connect_daemon(path)) < 0)
		goto fail;
	p->sock = ret;
	{
		struct stat st;

		if (fstat(p->sock, &st) == 0) {
			p->sock_dev = st.st_dev;
			p->sock_ino = st.st_ino;
		}
	}
	memset(&h, 0, sizeof(h));
	h.magic = PL_PRODUCER_MAGIC;
	h.version = PL_PRODUCER_VERSION;
	h.slot_count = o.frame_bytes ? (o.frame_slots ? o.frame_slots : DEFAULT_SLOTS) : 0;
	h.slot_bytes = clamp_u32(o.frame_bytes);
	h.records_bytes = clamp_u32(o.telemetry_bytes ? o.telemetry_bytes : DEFAULT_RING);
	h.replies_bytes = clamp_u32(o.reply_bytes ? o.reply_bytes : DEFAULT_RING);
	if (o.flags & PL_PRODUCER_KEEP_EVERY_FRAME)
		h.flags |= PL_HELLO_KEEP_EVERY_FRAME;
	if (pl__producer_polled)
		h.flags |= PL_HELLO_POLLED;
	p->polled = pl__producer_polled;
	snprintf(h.name, sizeof(h.name), "%s",
		 o.name ? o.name : program_invocation_short_name);
	if (send(p->sock, &h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h)) {
		ret = errno == EAGAIN ? -ETIMEDOUT : -errno;
		goto fail;
	}
	memset(&w, 0, sizeof(w)); /* no message unless the daemon sent one */
	if ((ret = receive_welcome(p->sock, &w, &shm_fd)) < 0) {
		w.message[sizeof(w.message) - 1] = '\0';
		if (ret != -EPROTO && w.message[0])
			fprintf(stderr, "perflink: perflinkd refused this producer: %s\n",
				w.message);
		goto fail;
	}
	if ((w.flags & h.flags) != h.flags) {
		/* an older perflinkd: it would replace frames this producer keeps */
		fprintf(stderr, "perflink: perflinkd does not keep every frame "
				"(PL_PRODUCER_KEEP_EVERY_FRAME): too old\n");
		ret = -EOPNOTSUPP;
		goto fail;
	}
	/* the layout is checked against the memory before it is used */
	if ((ret = pl__producer_view_map(&p->view, shm_fd, &w)) < 0)
		goto fail;
	close(shm_fd);
	shm_fd = -1;
	p->reply_buf_len = w.replies_cap;
	if (!(p->reply_buf = malloc(p->reply_buf_len))) {
		ret = -ENOMEM;
		goto fail;
	}
	p->id = w.producer_id;
	*out = p;
	return 0;
fail:
	if (shm_fd >= 0)
		close(shm_fd);
	pl_producer_close(p);
	return ret;
}

/* Committed frames perflinkd has not taken yet: their slots stay READY
 * until perflinkd has sent them, handed them to the link, or counted them
 * not sent. */
static uint32_t slots_ready(const struct pl_producer *p)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->view.slot_count; i++)
		n += atomic_load_explicit(&p->view.shm->slot_state[i], memory_order_acquire) ==
		     PL_SLOT_READY;
	return n;
}

/* A producer that keeps every frame is a recorder: its frames wait in their
 * slots for the link's room, and a frame perflinkd still holds when the
 * producer goes can only be counted not sent (perflinkd cannot wait for a
 * producer that is gone). So closing is slowed down as committing is, at
 * most CLOSE_WAIT_MS, until perflinkd has taken them. Other producers'
 * frames never wait: perflinkd takes what is left when the socket closes. */
static void wait_frames_taken(struct pl_producer *p)
{
	uint64_t end_ms = pl__mono_ns() / 1000000 + CLOSE_WAIT_MS;

	if (!(p->o.flags & PL_PRODUCER_KEEP_EVERY_FRAME) || !p->view.mem)
		return;
	while (slots_ready(p) && !daemon_gone(p)) {
		uint64_t now_ms = pl__mono_ns() / 1000000;
		struct pollfd pfd = { p->sock, POLLIN, 0 };

		if (now_ms >= end_ms)
			return;
		/* perflinkd sends a wakeup each time it gives a slot back */
		if (poll(&pfd, 1, (int)(end_ms - now_ms)) < 0 && errno != EINTR)
			return;
		pl_producer_ack_fd(p);
	}
}

void pl_producer_close(struct pl_producer *p)
{
	if (!p)
		return;
	if (p->sock >= 0) {
		wait_frames_taken(p);
		close_sock(p->sock);
	}
	pl__producer_forget(p);
}

int pl_producer_check(struct pl_producer *p)
{
	return daemon_gone(p) ? -EPIPE : 0;
}

int pl_producer_reopen(struct pl_producer **p)
{
	struct pl_producer *old = *p, *fresh = NULL;
	int ret;

	*p = NULL;
	if (!old)
		return -EINVAL;
	ret = pl_producer_open(&fresh, &old->o);
	pl_producer_close(old);
	if (ret == 0)
		*p = fresh;
	return ret;
}

bool pl__producer_still_ours(const struct pl_producer *p)
{
	struct stat st;

	return fstat(p->sock, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == p->sock_dev &&
	       st.st_ino == p->sock_ino;
}

void pl__producer_forget(struct pl_producer *p)
{
	if (!p)
		return;
	watch_fd(p->sock, false); /* closed already, or no longer its number */
	pl__producer_view_unmap(&p->view);
	pthread_mutex_destroy(&p->push_lock);
	pthread_mutex_destroy(&p->reply_lock);
	free(p->reply_buf);
	free(p->socket_path);
	free(p->name);
	free(p);
}

void pl__producer_abandon(struct pl_producer *p)
{
	if (!p)
		return;
	pl__producer_view_unmap(&p->view);
	close_sock(p->sock);
	/* The mutexes may have been held by a thread that does not exist in
	 * this child: neither destroyed nor freed with them. */
}

/* A wakeup byte; a full socket means perflinkd has wakeups waiting. */
static void wake_daemon(struct pl_producer *p)
{
	static const char wakeup = 'w';
	ssize_t n;

	if (p->polled)
		return;
	do
		n = send(p->sock, &wakeup, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
}

void *pl_frame_begin(struct pl_producer *p, size_t *capacity)
{
	for (uint32_t i = 0; i < p->view.slot_count; i++) {
		uint32_t expected = PL_SLOT_FREE;

		if (atomic_compare_exchange_strong_explicit(&p->view.shm->slot_state[i], &expected,
							    PL_SLOT_WRITING, memory_order_acquire,
							    memory_order_relaxed)) {
			*capacity = p->view.slot_bytes;
			return pl__producer_view_slot(&p->view, i);
		}
	}
	*capacity = 0;
	return NULL;
}

/* Which slot buf is, or -1 when it is not one of ours. */
static int slot_of(const struct pl_producer *p, const void *buf)
{
	const struct pl_producer_view *v = &p->view;
	const uint8_t *b = buf;
	size_t off;

	if (!v->slot_count || b < v->slots || b >= v->slots + (size_t)v->slot_count * v->slot_bytes)
		return -1;
	off = (size_t)(b - v->slots);
	return off % v->slot_bytes ? -1 : (int)(off / v->slot_bytes);
}

int pl_frame_commit(struct pl_producer *p, void *buf, size_t len, uint64_t frame_id)
{
	int slot = slot_of(p, buf), ret;
	struct pl_producer_frame_rec rec;

	if (slot < 0)
		return -EINVAL;
	if (len > p->view.slot_bytes)
		return -EMSGSIZE;
	if (daemon_gone(p)) {
		/* nobody will take it: the buffer is free again, the frame lost */
		atomic_store_explicit(&p->view.shm->slot_state[slot], PL_SLOT_FREE,
				      memory_order_release);
		pthread_mutex_lock(&p->push_lock);
		p->frames_lost++;
		pthread_mutex_unlock(&p->push_lock);
		return -EPIPE;
	}
	memset(&rec, 0, sizeof(rec));
	rec.slot = (uint32_t)slot;
	rec.len = (uint32_t)len;
	rec.frame_id = frame_id & PL_PRODUCER_FRAME_ID_MASK;
	pl__frame_checksum(&rec, buf, len);
	atomic_store_explicit(&p->view.shm->slot_state[slot], PL_SLOT_READY, memory_order_release);
	pthread_mutex_lock(&p->push_lock);
	ret = pl__shm_ring_push(&p->view.records, PL_REC_FRAME, &rec, sizeof(rec), NULL, 0);
	if (ret < 0)
		p->frames_lost++;
	pthread_mutex_unlock(&p->push_lock);
	if (ret < 0) {
		atomic_store_explicit(&p->view.shm->slot_state[slot], PL_SLOT_FREE,
				      memory_order_release);
		return -ENOBUFS;
	}
	atomic_fetch_add_explicit(&p->view.shm->frames_committed, 1, memory_order_relaxed);
	wake_daemon(p);
	return 0;
}

void pl_frame_abort(struct pl_producer *p, void *buf)
{
	int slot = slot_of(p, buf);

	if (slot >= 0)
		atomic_store_explicit(&p->view.shm->slot_state[slot], PL_SLOT_FREE,
				      memory_order_release);
}

int pl_reply_read(struct pl_producer *p, uint64_t *frame_id, void *buf, size_t cap, size_t *len)
{
	uint8_t *rec = p->reply_buf;
	uint32_t kind;
	size_t n;
	int ret;

	/* reply_buf is as large as the ring: one record always fits. */
	pthread_mutex_lock(&p->reply_lock);
	do
		ret = pl__shm_ring_pop(&p->view.replies, &kind, rec, p->reply_buf_len, &n);
	while (ret == 1 && (kind != PL_REC_REPLY || n < sizeof(uint64_t)));
	pthread_mutex_unlock(&p->reply_lock);
	if (ret <= 0)
		return ret == 0 ? 0 : -EPROTO;
	memcpy(frame_id, rec, sizeof(uint64_t));
	n -= sizeof(uint64_t);
	*len = n < cap ? n : cap;
	memcpy(buf, rec + sizeof(uint64_t), *len);
	return 1;
}

int pl_producer_fd(const struct pl_producer *p)
{
	return p->sock;
}

/* The wakeups that came, read without waiting; the end of the stream is
 * the daemon gone. */
void pl_producer_ack_fd(struct pl_producer *p)
{
	char bytes[64];
	ssize_t n;

	do
		n = recv(p->sock, bytes, sizeof(bytes), MSG_DONTWAIT);
	while (n > 0 || (n < 0 && errno == EINTR));
	if (n == 0)
		atomic_store_explicit(&p->gone, true, memory_order_relaxed);
}

int pl_telemetry(struct pl_producer *p, const char *json_lines)
{
	size_t len = strlen(json_lines);
	int ret;

	if (!len || json_lines[len - 1] != '\n')
		return -EINVAL;
	if (daemon_gone(p))
		return -EPIPE;
	pthread_mutex_lock(&p->push_lock);
	ret = pl__shm_ring_push(&p->view.records, PL_REC_TELEMETRY, json_lines, len, NULL, 0);
	if (ret < 0)
		p->telemetry_dropped++;
	pthread_mutex_unlock(&p->push_lock);
	if (ret < 0) {
		atomic_fetch_add_explicit(&p->view.shm->records_dropped, 1, memory_order_relaxed);
		return ret == -EMSGSIZE ? -EMSGSIZE : -ENOBUFS;
	}
	wake_daemon(p);
	return 0;
}

void pl_producer_get_stats(struct pl_producer *p, struct pl_producer_stats *st)
{
	uint32_t sent, held, not_sent, committed, queued;

	memset(st, 0, sizeof(*st));
	/* perflinkd's counts before the producer's own: a frame committed and
	 * taken between the reads is then counted queued, never in no column.
	 * Queued is what perflinkd has not counted (modulo 2^32, as the
	 * counters; a tear in perflinkd's move from sent to not sent can make
	 * it -1 for a moment). */
	sent = atomic_load_explicit(&p->view.shm->frames_sent, memory_order_acquire);
	held = atomic_load_explicit(&p->view.shm->frames_held, memory_order_acquire);
	not_sent = atomic_load_explicit(&p->view.shm->frames_not_sent, memory_order_acquire);
	committed = atomic_load_explicit(&p->view.shm->frames_committed, memory_order_acquire);
	queued = committed - sent - held - not_sent;
	st->frames_committed = committed;
	st->frames_sent = sent;
	st->frames_held = held;
	st->frames_not_sent = not_sent;
	st->frames_queued = queued > UINT32_MAX / 2 ? 0 : queued;
	pthread_mutex_lock(&p->push_lock);
	st->frames_lost = p->frames_lost;
	st->telemetry_dropped = p->telemetry_dropped;
	pthread_mutex_unlock(&p->push_lock);
	st->replies_dropped = atomic_load_explicit(&p->view.shm->replies_dropped, memory_order_relaxed);
	st->producer_id = p->id;
}
