/* perflinkd's collector with real producers (libperflink's code) on a real
 * unix socket and real shared memory: frames arrive byte for byte without
 * a copy into the daemon, telemetry lines are split and forwarded, replies
 * find their producer, and hostile producers (a bad hello, nonsense in the
 * ring, oversized requests) are refused or counted while the others keep
 * working. The collector's loop runs in its own thread, as in perflinkd.
 *
 * Built twice: with libperflink, whose producer hashes its frames, and
 * (collector_shim_producer, --frames-unhashed) with the preload library's
 * copy of the producer code, which leaves the checksum to perflinkd
 * (client/frame_checksum.h). */
#include "stderr_capture.h"
#include "tap.h"
#include "probe_force.h"
#include "producer_view.h"
#include "fd_message.h"

#include "clock.h"
#include "collector.h"
#include "event_loop.h"
#include "json_writer.h"
#include "perflink.h"
#include "producer_proto.h"
#include "wire.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static struct pl_loop *loop;
static struct pl_collector *collector;
static atomic_bool stop;
static char sock_path[108];

/* What the sink saw (written by the loop thread, read after waits). */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t seen_frames, seen_bytes, seen_lines, last_frame_id, seen_hash_ok, seen_unhashed;
/* --frames-unhashed: this build's producer leaves checksums to perflinkd */
static bool frames_unhashed;
static uint8_t last_frame[4096];
static size_t last_frame_len;
static char last_line[256];
static int frame_result = 0; /* what the sink tells the collector */

static int sink_frame(void *ctx, uint64_t wire_frame_id, const void *data, size_t len,
		      const uint64_t *payload_xxh3)
{
	(void)ctx;
	pthread_mutex_lock(&seen_lock);
	seen_frames++;
	seen_bytes += len;
	seen_hash_ok += payload_xxh3 && *payload_xxh3 == pl__wire_payload_hash(data, len);
	seen_unhashed += !payload_xxh3;
	last_frame_id = wire_frame_id;
	last_frame_len = len < sizeof(last_frame) ? len : sizeof(last_frame);
	memcpy(last_frame, data, last_frame_len);
	pthread_mutex_unlock(&seen_lock);
	/* The host answers at once: a reply of "ack:" and the frame's first byte. */
	{
		uint8_t reply[5] = { 'a', 'c', 'k', ':', len ? ((const uint8_t *)data)[0] : 0 };

		pl__collector_reply(collector, wire_frame_id, reply, sizeof(reply));
	}
	return frame_result;
}

/* Whether the "link" has room for a frame now (keep-every-frame producers). */
static atomic_bool room = true;

static bool sink_fits(void *ctx, size_t len)
{
	(void)ctx;
	(void)len;
	return atomic_load(&room);
}

static void sink_line(void *ctx, const char *line, size_t len)
{
	(void)ctx;
	pthread_mutex_lock(&seen_lock);
	seen_lines++;
	snprintf(last_line, sizeof(last_line), "%.*s", (int)len, line);
	pthread_mutex_unlock(&seen_lock);
}

/* The collector is not thread-safe: the test's own calls into it take the
 * lock the loop thread holds while it dispatches. */
static pthread_mutex_t loop_lock = PTHREAD_MUTEX_INITIALIZER;

static void *loop_thread(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_mutex_lock(&loop_lock);
		pl__loop_run_once(loop, 5);
		pthread_mutex_unlock(&loop_lock);
		usleep(1000);
	}
	return NULL;
}

static uint64_t seen(uint64_t *what)
{
	uint64_t v;

	pthread_mutex_lock(&seen_lock);
	v = *what;
	pthread_mutex_unlock(&seen_lock);
	return v;
}

/* Wait up to 2 s for *what to reach want. */
static bool wait_seen(uint64_t *what, uint64_t want)
{
	for (int i = 0; i < 200; i++) {
		if (seen(what) >= want)
			return true;
		usleep(10000);
	}
	return false;
}

static int raw_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock_path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void status(char *buf, size_t len)
{
	struct pl_json j;
	const char *line;

	pl__json_init(&j);
	pl__json_begin_object(&j, NULL);
	pthread_mutex_lock(&loop_lock);
	pl__collector_status(collector, &j);
	pthread_mutex_unlock(&loop_lock);
	pl__json_end_object(&j);
	line = pl__json_finish(&j);
	snprintf(buf, len, "%s", line ? line : "");
	pl__json_free(&j);
}

static void test_frames_and_replies(void)
{
	struct pl_producer_options o = { .socket_path = sock_path, .name = "camera",
					 .frame_slots = 2, .frame_bytes = 3000 };
	struct pl_producer *p;
	struct pl_producer_stats st;
	size_t cap, slot_cap, len;
	uint64_t id;
	uint8_t reply[64];
	uint8_t *buf, *buf2;
	int ret = pl_producer_open(&p, &o);

	TAP_OK(ret == 0, "a producer connects (%d)", ret);
	if (ret)
		return;
	buf = pl_frame_begin(p, &cap);
	TAP_OK(buf && cap >= 3000, "a frame buffer of at least the size asked (%zu)", cap);
	slot_cap = cap;
	buf2 = pl_frame_begin(p, &cap);
	TAP_OK(buf2 && buf2 != buf, "a second slot");
	TAP_OK(pl_frame_begin(p, &cap) == NULL && cap == 0, "no third slot: both in use");
	pl_frame_abort(p, buf2);
	for (size_t i = 0; i < 3000; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	TAP_OK(pl_frame_commit(p, buf, slot_cap + 1, 5) == -EMSGSIZE, "a frame past the slot is refused");
	TAP_OK(pl_frame_commit(p, buf, 3000, 0x123456789abcull) == 0, "frame committed");
	TAP_OK(wait_seen(&seen_frames, 1), "the daemon side got the frame");
	pthread_mutex_lock(&seen_lock);
	{
		bool same = last_frame_len == 3000;

		for (size_t i = 0; same && i < 3000; i++)
			same = last_frame[i] == (uint8_t)(i * 7 + 1);
		TAP_OK(same, "byte for byte");
		TAP_OK(last_frame_id >> 48 != 0 &&
			       (last_frame_id & PL_PRODUCER_FRAME_ID_MASK) == 0x123456789abcull,
		       "wire frame id: producer number on top, the frame's own id below");
	}
	pthread_mutex_unlock(&seen_lock);
	/* The reply comes back to this producer. */
	for (int i = 0; i < 200 && (ret = pl_reply_read(p, &id, reply, sizeof(reply), &len)) == 0; i++) {
		struct pollfd pfd = { pl_producer_fd(p), POLLIN, 0 };

		poll(&pfd, 1, 10);
		pl_producer_ack_fd(p);
	}
	TAP_OK(ret == 1 && id == 0x123456789abcull && len == 5 && !memcmp(reply, "ack:\x01", 5),
	       "the reply reaches the producer with its own frame id (ret %d len %zu)", ret, len);
	/* Slots come back: many more frames than slots. */
	for (int f = 0; f < 50; f++) {
		for (int i = 0; i < 200 && !(buf = pl_frame_begin(p, &cap)); i++)
			usleep(1000);
		if (!buf)
			break;
		buf[0] = (uint8_t)f;
		pl_frame_commit(p, buf, 1 + (size_t)f, (uint64_t)f);
	}
	TAP_OK(wait_seen(&seen_frames, 51), "50 more frames through 2 slots (%llu)",
	       (unsigned long long)seen(&seen_frames));
	if (frames_unhashed)
		TAP_EQ_U64(seen(&seen_unhashed), 51,
			   "each without a checksum, which perflinkd computes (the shim's producer)");
	else
		TAP_EQ_U64(seen(&seen_hash_ok), 51, "each with its checksum, computed by the producer");
	memset(&st, 0xa5, sizeof(st));
	pl_producer_get_stats(p, &st);
	TAP_OK(st.reserved[0] == 0 && st.reserved[6] == 0, "stats: the reserved room is zeroed");
	TAP_EQ_U64(st.frames_committed, 51, "frames committed, as the daemon counts them");
	TAP_EQ_U64(st.frames_sent, 51, "frames sent, as the daemon counts them");
	TAP_EQ_U64(st.frames_queued, 0, "none queued: the daemon took them all");
	/* Telemetry: several lines in one record are split. */
	TAP_OK(pl_telemetry(p, "no newline") == -EINVAL, "telemetry must end in a newline");
	TAP_OK(pl_telemetry(p, "{\"type\":\"a\"}\n{\"type\":\"b\"}\n") == 0, "telemetry sent");
	TAP_OK(wait_seen(&seen_lines, 2), "two lines forwarded");
	pthread_mutex_lock(&seen_lock);
	TAP_EQ_STR(last_line, "{\"type\":\"b\"}\n", "the last line, whole");
	pthread_mutex_unlock(&seen_lock);
	pl_producer_close(p);
}

/* A producer that keeps every frame closes with two frames waiting for a
 * link that has no room: the close waits for them (at most 2 s), then
 * they are counted not sent where status shows them, not dropped
 * uncounted with the producer (issue 16). */
static void test_keep_every_frame_close(void)
{
	struct pl_producer_options o = { .socket_path = sock_path, .name = "leaver",
					 .frame_slots = 2, .frame_bytes = 4096,
					 .flags = PL_PRODUCER_KEEP_EVERY_FRAME };
	struct pl_producer *p;
	uint64_t before, t0_ns, close_ns;
	char st[8192];
	size_t cap;
	bool counted = false;

	if (pl_producer_open(&p, &o) != 0) {
		TAP_OK(false, "a producer that keeps every frame connects");
		return;
	}
	atomic_store(&room, false);
	before = seen(&seen_frames);
	for (unsigned i = 0; i < 2; i++) {
		uint8_t *buf = pl_frame_begin(p, &cap);

		if (buf)
			pl_frame_commit(p, buf, 100, i);
	}
	t0_ns = pl__mono_ns();
	pl_producer_close(p);
	close_ns = pl__mono_ns() - t0_ns;
	TAP_OK(close_ns >= 1500000000ull, "the close waited for the link's room (%.2f s)",
	       (double)close_ns / 1e9);
	for (int i = 0; i < 200 && !counted; i++) {
		status(st, sizeof(st));
		counted = strstr(st, "\"frames_left_not_sent\":2,") && !strstr(st, "\"leaver\"");
		if (!counted)
			usleep(10000);
	}
	TAP_OK(counted, "the producer gone, status counts its 2 frames left not sent: %.200s", st);
	atomic_store(&room, true);
	pthread_mutex_lock(&loop_lock);
	pl__collector_writable(collector);
	pthread_mutex_unlock(&loop_lock);
	usleep(50000);
	TAP_EQ_U64(seen(&seen_frames) - before, 0, "and they were not sent");
}

/* PL_PRODUCER_KEEP_EVERY_FRAME: with no room on the link, frames wait in
 * their slots (none sent, none held or replaced) until the producer runs
 * out of slots; when room opens they go in order. */
static void test_keep_every_frame(void)
{
	struct pl_producer_options o = { .socket_path = sock_path, .name = "recorder",
					 .frame_slots = 2, .frame_bytes = 4096,
					 .flags = PL_PRODUCER_KEEP_EVERY_FRAME };
	struct pl_producer_stats ps;
	struct pl_producer *p;
	struct pl_producer_welcome w;
	struct pl_producer_hello h = { .magic = PL_PRODUCER_MAGIC, .version = PL_PRODUCER_VERSION,
				       .flags = 0x8000, .records_bytes = 4096 };
	uint64_t before, first_id = 0;
	char st[8192];
	size_t cap;
	int fd;

	o.flags = 0x2;
	TAP_OK(pl_producer_open(&p, &o) == -EINVAL, "an unknown flag: -EINVAL");
	fd = raw_connect();
	send(fd, &h, sizeof(h), 0);
	TAP_OK(recv(fd, &w, sizeof(w), 0) == (ssize_t)sizeof(w) && w.status == -EINVAL &&
		       strstr(w.message, "flags 0x8000"),
	       "a hello with a flag the daemon does not know is refused: %s", w.message);
	close(fd);
	o.flags = PL_PRODUCER_KEEP_EVERY_FRAME;
	fd = pl_producer_open(&p, &o);
	TAP_OK(fd == 0, "a producer that keeps every frame connects");
	if (fd != 0)
		return;
	atomic_store(&room, false);
	before = seen(&seen_frames);
	for (unsigned i = 0; i < 2; i++) {
		uint8_t *buf = pl_frame_begin(p, &cap);

		if (!buf)
			break;
		memset(buf, 'k' + i, 100);
		pl_frame_commit(p, buf, 100, 500 + i);
	}
	usleep(100000);
	TAP_EQ_U64(seen(&seen_frames) - before, 0, "no room: nothing sent");
	TAP_OK(pl_frame_begin(p, &cap) == NULL, "both slots wait: pl_frame_begin says no (backpressure)");
	pl_producer_get_stats(p, &ps);
	TAP_OK(ps.frames_committed == 2 && ps.frames_queued == 2 && ps.frames_sent == 0,
	       "stats: both committed frames counted queued (committed %llu queued %llu sent %llu)",
	       (unsigned long long)ps.frames_committed, (unsigned long long)ps.frames_queued,
	       (unsigned long long)ps.frames_sent);
	status(st, sizeof(st));
	TAP_OK(strstr(st, "\"name\":\"recorder\"") && strstr(st, "\"keep_every_frame\":true") &&
		       strstr(st, "\"frames_waited\":1"),
	       "status: keeps every frame, one waited (the second is behind it in the ring)");

	atomic_store(&room, true);
	pthread_mutex_lock(&loop_lock);
	pl__collector_writable(collector);
	pthread_mutex_unlock(&loop_lock);
	TAP_OK(wait_seen(&seen_frames, before + 2), "room: both frames sent (%llu)",
	       (unsigned long long)(seen(&seen_frames) - before));
	pthread_mutex_lock(&seen_lock);
	first_id = last_frame_id;
	TAP_OK((first_id & 0xffffffffffffull) == 501 && last_frame[0] == 'l',
	       "in order: the second frame last, its bytes whole");
	pthread_mutex_unlock(&seen_lock);
	{
		void *buf = NULL;

		for (int i = 0; i < 200 && !(buf = pl_frame_begin(p, &cap)); i++)
			usleep(10000);
		TAP_OK(buf != NULL, "a slot is free again");
		if (buf)
			pl_frame_abort(p, buf);
	}
	pl_producer_get_stats(p, &ps);
	TAP_OK(ps.frames_sent == 2 && ps.frames_held == 0 && ps.frames_not_sent == 0 &&
		       ps.frames_queued == 0,
	       "stats: 2 sent, none held, none not sent, none queued");
	pl_producer_close(p);
	test_keep_every_frame_close();
}

/* Out of fds: the producer socket stays readable while accept fails, and a
 * collector that kept watching it would spin the loop and log on every
 * turn. It pauses instead (one line a second at most), and takes the
 * producers that waited once fds are there again. */
static void test_out_of_fds(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stderr_capture cap;
	struct rlimit old, low;
	struct pl_producer *p;
	struct pl_producer_options o = { .socket_path = sock_path, .name = "after" };
	const char *said;
	char st[8192];
	int waiting[3], fill[64], held, lowest, n;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock_path);
	for (n = 0; n < 3; n++)
		waiting[n] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	capture_begin(&cap);
	/* the limit just above the fds in use, and every free number below
	 * it taken, so that the collector's accept has none */
	lowest = open("/dev/null", O_RDONLY);
	close(lowest);
	getrlimit(RLIMIT_NOFILE, &old);
	low = old;
	low.rlim_cur = (rlim_t)lowest + 8;
	setrlimit(RLIMIT_NOFILE, &low);
	for (held = 0; held < 64 && (fill[held] = open("/dev/null", O_RDONLY)) >= 0; held++)
		;
	for (n = 0; n < 3; n++)
		connect(waiting[n], (struct sockaddr *)&sun, sizeof(sun));
	usleep(1500 * 1000);
	while (held > 0)
		close(fill[--held]);
	setrlimit(RLIMIT_NOFILE, &old);
	said = capture_end(&cap);
	n = count_of(said, "collector: accept");
	status(st, sizeof(st));
	TAP_OK(strstr(st, "\"accept_pauses\":") && !strstr(st, "\"accept_pauses\":0"),
	       "out of fds: the collector paused its accepts (%.16s)",
	       strstr(st, "accept_pauses") ? strstr(st, "accept_pauses") : "none");
	TAP_OK(n <= 3, "out of fds for 1.5 s: said %d times, not on every turn", n);
	TAP_OK(pl_producer_open(&p, &o) == 0, "fds back: the next producer is taken");
	if (p)
		pl_producer_close(p);
	for (n = 0; n < 3; n++)
		close(waiting[n]);
}

/* A reply the daemon cannot deliver says why: no such producer, its ring
 * full for now, or too big for that ring ever (perflinkd counts each). */
static void test_reply_reasons(void)
{
	struct pl_producer_options o = { .socket_path = sock_path, .name = "replies",
					 .frame_bytes = 256, .reply_bytes = 4096 };
	static uint8_t big[1 << 20];
	struct pl_producer_stats st;
	struct pl_producer *p;
	int ret = 0, n;

	if (pl_producer_open(&p, &o) < 0) {
		TAP_OK(0, "a producer for replies");
		return;
	}
	pl_producer_get_stats(p, &st);
	pthread_mutex_lock(&loop_lock);
	TAP_OK(pl__collector_reply(collector, PL_PRODUCER_FRAME_ID(st.producer_id + 1000, 1), "x",
				   1) == -ENOENT, "a reply for a producer that is not there: -ENOENT");
	TAP_OK(pl__collector_reply(collector, PL_PRODUCER_FRAME_ID(st.producer_id, 1), big,
				   sizeof(big)) == -EMSGSIZE,
	       "a reply larger than the producer's ring can ever hold: -EMSGSIZE");
	for (n = 0; n < 1000 && (ret = pl__collector_reply(collector,
			PL_PRODUCER_FRAME_ID(st.producer_id, 2), big, 512)) == 0; n++)
		;
	pthread_mutex_unlock(&loop_lock);
	TAP_OK(ret == -ENOSPC && n > 0, "replies the producer does not read fill its ring: "
	       "-ENOSPC after %d", n);
	pl_producer_close(p);
}

/* Whether the loop thread is free within ms (a daemon stuck in a blocking
 * call holds loop_lock for good). */
static bool loop_answers_within(int ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	if (pthread_mutex_timedlock(&loop_lock, &until) != 0)
		return false;
	pthread_mutex_unlock(&loop_lock);
	return true;
}

/* A hostile producer makes the descriptor it waits on blocking and writes
 * the largest count into it, then frames flow and the daemon wakes it for
 * each freed slot. When that descriptor was an eventfd shared with the
 * daemon, perflinkd then blocked in write() for good; wakeups on the socket
 * are sent with MSG_DONTWAIT and dropped when it is full. */
static void test_wakeups_unread(void)
{
	struct pl_producer_options o = { .socket_path = sock_path, .name = "sleeper",
					 .frame_slots = 2, .frame_bytes = 256 };
	const uint64_t most = UINT64_C(0xfffffffffffffffe);
	uint64_t before = seen(&seen_frames);
	struct pl_producer *p;
	int fd, sent = 0;
	ssize_t w;

	if (pl_producer_open(&p, &o) < 0) {
		TAP_OK(0, "a producer that never reads its wakeups");
		return;
	}
	fd = pl_producer_fd(p);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	w = write(fd, &most, sizeof(most));
	(void)w;
	for (int i = 0; i < 20000 && sent < 2000; i++) {
		size_t cap;
		void *buf = pl_frame_begin(p, &cap);

		if (!buf) {
			usleep(50);
			continue;
		}
		if (pl_frame_commit(p, buf, 16, (uint64_t)sent) == 0)
			sent++;
	}
	TAP_OK(loop_answers_within(3000), "its wakeups unread: the daemon's loop still runs");
	for (int i = 0; i < 300 && seen(&seen_frames) < before + (uint64_t)sent; i++)
		usleep(10000);
	TAP_OK(sent == 2000 && seen(&seen_frames) == before + 2000,
	       "and took all %d of its frames (%llu)", sent,
	       (unsigned long long)(seen(&seen_frames) - before));
	pl_producer_close(p);
}

/* The welcome and the memory's fd, as the library receives them. */
static int raw_welcome(int fd, struct pl_producer_welcome *w)
{
	int shm;

	if (pl__recv_fd_message(fd, w, sizeof(*w), 0, &shm) != (ssize_t)sizeof(*w) ||
	    w->status < 0) {
		if (shm >= 0)
			close(shm);
		return -1;
	}
	return shm;
}

/* Where the kernel has no memfd (forced here), the memory is an unlinked
 * file the producer can truncate: a producer that does, with a frame
 * waiting in it, makes the daemon's next read of it raise SIGBUS. The
 * daemon drops that producer and counts it, and goes on serving. */
static void test_truncated_memory(void)
{
	struct pl_producer_hello h = { .magic = PL_PRODUCER_MAGIC, .version = PL_PRODUCER_VERSION,
				       .slot_count = 1, .slot_bytes = 4096,
				       .records_bytes = 65536, .replies_bytes = 65536,
				       .name = "cutter" };
	struct pl_producer_frame_rec rec = { .slot = 0, .len = 4096, .frame_id = 1 };
	struct pl_producer_options o = { .socket_path = sock_path, .name = "after",
					 .frame_bytes = 256 };
	struct pl_producer_welcome w;
	struct pl_producer_view v = { 0 };
	struct pl_producer *good = NULL;
	char st[8192];
	int fd, shm;

	probe_force("memfd");
	fd = raw_connect();
	shm = fd >= 0 && send(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) ? raw_welcome(fd, &w) : -1;
	probe_force(NULL);
	if (shm < 0 || pl__producer_view_map(&v, shm, &w) < 0) {
		TAP_OK(0, "a producer with unsealed memory (%d)", shm);
		return;
	}
	atomic_store(&v.shm->slot_state[0], PL_SLOT_READY);
	pl__shm_ring_push(&v.records, PL_REC_FRAME, &rec, sizeof(rec), NULL, 0);
	TAP_OK(ftruncate(shm, 0) == 0, "the producer cuts its memory to nothing");
	send(fd, "w", 1, MSG_DONTWAIT); /* and wakes the daemon to read it */
	for (int i = 0; i < 200; i++) {
		status(st, sizeof(st));
		if (strstr(st, "\"shm_faults\":1"))
			break;
		usleep(10000);
	}
	TAP_OK(strstr(st, "\"shm_faults\":1") && !strstr(st, "cutter"),
	       "the daemon caught the SIGBUS, dropped that producer and counted it");
	TAP_OK(loop_answers_within(2000) && pl_producer_open(&good, &o) == 0,
	       "and goes on: the next producer is taken");
	if (good)
		pl_producer_close(good);
	pl__producer_view_unmap(&v);
	close(shm);
	close(fd);
}

/* perflinkd goes away under a producer: the producer learns it (its fd
 * readable, check, commit and telemetry say -EPIPE, the frame counted
 * lost), and pl_producer_reopen connects again once a daemon is back. */
static void test_daemon_gone(const struct pl_collector_config *cfg,
			     const struct pl_collector_sink *sink)
{
	struct pl_producer_options o = { .socket_path = sock_path, .name = "survivor",
					 .frame_slots = 2, .frame_bytes = 256 };
	struct pl_producer_stats st;
	struct pl_producer *p;
	struct pollfd pfd;
	uint64_t before;
	size_t cap;
	void *buf;
	int ret;

	if (pl_producer_open(&p, &o) < 0) {
		TAP_OK(0, "a producer to lose its daemon");
		return;
	}
	TAP_OK(pl_producer_check(p) == 0, "the daemon is there");
	pthread_mutex_lock(&loop_lock);
	pl__collector_close(collector);
	collector = NULL;
	pthread_mutex_unlock(&loop_lock);
	pfd = (struct pollfd){ pl_producer_fd(p), POLLIN, 0 };
	TAP_OK(poll(&pfd, 1, 2000) == 1, "the daemon gone: the producer's fd is readable");
	TAP_OK(pl_producer_check(p) == -EPIPE, "and pl_producer_check says -EPIPE");
	buf = pl_frame_begin(p, &cap);
	ret = buf ? pl_frame_commit(p, buf, 16, 1) : 0;
	pl_producer_get_stats(p, &st);
	TAP_OK(buf && ret == -EPIPE && st.frames_lost == 1,
	       "a frame committed then: -EPIPE, counted lost (%d, %llu)", ret,
	       (unsigned long long)st.frames_lost);
	TAP_OK(pl_frame_begin(p, &cap) != NULL, "and its buffer is free again");
	TAP_OK(pl_telemetry(p, "{\"type\":\"x\"}\n") == -EPIPE, "telemetry then: -EPIPE");

	pthread_mutex_lock(&loop_lock);
	ret = pl__collector_open(&collector, loop, cfg, sink, NULL);
	pthread_mutex_unlock(&loop_lock);
	TAP_OK(ret == 0, "a daemon is back");
	before = seen(&seen_frames);
	ret = pl_producer_reopen(&p);
	TAP_OK(ret == 0 && p && pl_producer_check(p) == 0, "pl_producer_reopen connects again (%d)",
	       ret);
	if (!p)
		return;
	buf = pl_frame_begin(p, &cap);
	TAP_OK(buf && pl_frame_commit(p, buf, 16, 2) == 0, "with the same options: a frame goes");
	for (int i = 0; i < 200 && seen(&seen_frames) == before; i++)
		usleep(10000);
	TAP_OK(seen(&seen_frames) == before + 1, "and reaches the daemon");
	pl_producer_close(p);
	p = NULL;
	TAP_OK(pl_producer_reopen(&p) == -EINVAL && !p, "reopening nothing: -EINVAL");
}

static void test_hostile(void)
{
	struct pl_producer_options o = { .socket_path = sock_path, .name = "evil",
					 .frame_slots = 1, .frame_bytes = 256 };
	struct pl_producer_welcome w;
	struct pl_producer *p, *good;
	char st[8192];
	uint64_t before;
	int fd, ret;
	ssize_t n;

	/* A connection that never says anything is dropped after 2 s. */
	fd = raw_connect();
	{
		struct pollfd pfd = { fd, POLLIN, 0 };
		char byte;

		TAP_OK(poll(&pfd, 1, 4000) == 1 && recv(fd, &byte, 1, 0) == 0,
		       "a connection that says no hello is closed by the daemon");
		close(fd);
	}

	/* Not a hello at all. */
	fd = raw_connect();
	TAP_OK(fd >= 0, "raw connection");
	send(fd, "hello?", 6, 0);
	n = recv(fd, &w, sizeof(w), 0);
	TAP_OK(n == (ssize_t)sizeof(w) && w.status == -EPROTO && strstr(w.message, "hello"),
	       "garbage instead of a hello is refused with a reason: %s", n > 0 ? w.message : "");
	close(fd);

	/* Sizes beyond the daemon's limits. */
	o.frame_bytes = 64u << 20;
	ret = pl_producer_open(&p, &o);
	TAP_OK(ret == -EINVAL, "a 64 MiB frame slot is refused (%d)", ret);
	o.frame_bytes = 256;
	o.frame_slots = 1000;
	ret = pl_producer_open(&p, &o);
	TAP_OK(ret == -EINVAL, "1000 slots are refused (%d)", ret);
	o.frame_slots = 1;

	/* A producer that writes nonsense records; a good one beside it. */
	TAP_OK(pl_producer_open(&p, &o) == 0, "evil producer connects");
	o.name = "good";
	TAP_OK(pl_producer_open(&good, &o) == 0, "good producer connects");
	{
		/* Reach into the shared memory the way a hostile producer can. */
		struct pl_producer_frame_rec bad = { .slot = 7, .len = 10 };
		struct pl_shm_ring ring;
		struct pl_producer_shm *shm;
		size_t cap;
		uint8_t *slot = pl_frame_begin(p, &cap);

		/* The slot's address tells where the memory is; the header is at
		 * the start of the mapping (page-aligned layout). */
		shm = (struct pl_producer_shm *)((uintptr_t)slot & ~(uintptr_t)4095);
		while (shm->magic != PL_PRODUCER_MAGIC)
			shm = (struct pl_producer_shm *)((uint8_t *)shm - 4096);
		pl_frame_abort(p, slot);
		pl__shm_ring_attach(&ring, &shm->records, (uint8_t *)shm + 4096, 64 * 1024);
		before = seen(&seen_frames);
		pl__shm_ring_push(&ring, PL_REC_FRAME, &bad, sizeof(bad), NULL, 0);
		bad.slot = 0;
		bad.len = 100000;
		pl__shm_ring_push(&ring, PL_REC_FRAME, &bad, sizeof(bad), NULL, 0);
		bad.len = 10; /* slot 0 is FREE, not READY */
		pl__shm_ring_push(&ring, PL_REC_FRAME, &bad, sizeof(bad), NULL, 0);
		pl__shm_ring_push(&ring, 99, "x", 1, NULL, 0);
		pl__shm_ring_push(&ring, PL_REC_TELEMETRY, "a\0b\n", 4, NULL, 0);
		pl_telemetry(p, "{\"wake\":1}\n");
		/* and then a head that makes no sense */
		usleep(100000);
		atomic_store(&shm->records.head, atomic_load(&shm->records.tail) + 3);
		pl_telemetry(good, "{\"good\":1}\n");
		pl_telemetry(p, "{\"wake\":2}\n"); /* lands after a misaligned head */
	}
	{
		size_t cap;
		uint8_t *b = pl_frame_begin(good, &cap);

		b[0] = 0x42;
		pl_frame_commit(good, b, 1, 9);
	}
	TAP_OK(wait_seen(&seen_frames, before + 1), "the good producer's frame still goes through");
	usleep(100000);
	TAP_EQ_U64(seen(&seen_frames), before + 1, "none of the evil records became a frame");
	status(st, sizeof(st));
	{
		char *evil = strstr(st, "\"name\":\"evil\"");
		char *bad = evil ? strstr(evil, "\"bad_records\":") : NULL;
		unsigned long nbad = bad ? strtoul(bad + 14, NULL, 10) : 0;

		TAP_OK(nbad >= 5, "the evil producer's bad records are counted (%lu): %s", nbad, st);
	}
	pl_producer_close(p);
	pl_producer_close(good);
}

/* A "daemon" whose socket takes connections (the kernel's backlog) but
 * never answers: opening gives up after the 2 s the library allows. */
static void test_silent_daemon(const char *dir)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct pl_producer_options o = { .frame_bytes = 4096 };
	struct pl_producer *p = NULL;
	struct timespec t0, t1;
	double s;
	int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), ret;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/silent", dir);
	o.socket_path = sun.sun_path;
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(lfd, 4) < 0) {
		TAP_OK(0, "a silent socket to open against");
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = pl_producer_open(&p, &o);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	TAP_OK(ret == -ETIMEDOUT && s > 1.5 && s < 4,
	       "a daemon that never answers: -ETIMEDOUT after %.1f s, not a hang (got %d)", s, ret);
	if (ret == 0)
		pl_producer_close(p);
	close(lfd);
	unlink(sun.sun_path);
}

int main(int argc, char **argv)
{
	static const struct pl_collector_sink sink = {
		.frame = sink_frame,
		.telemetry = sink_line,
		.frame_fits = sink_fits,
	};
	struct pl_collector_config cfg = { .max_frame_bytes = 1u << 20 };
	char dir[] = "/tmp/pl-test-collector-XXXXXX", err[256];
	struct stderr_capture cap;
	pthread_t t;
	int ret;

	frames_unhashed = argc > 1 && strcmp(argv[1], "--frames-unhashed") == 0;
	if (!mkdtemp(dir))
		return 1;
	snprintf(sock_path, sizeof(sock_path), "%s/producers", dir);
	cfg.path = sock_path;
	if (pl__loop_new(&loop) < 0)
		return 1;
	capture_begin(&cap);
	ret = pl__collector_open(&collector, loop, &cfg, &sink, NULL);
	capture_end_line(&cap, err, sizeof(err));
	TAP_OK(ret == 0, "collector listens (%s)", ret ? err : "ok");
	if (ret)
		return tap_done();
	capture_begin(&cap);
	ret = pl__collector_open(&collector, loop, &cfg, &sink, NULL) == 0;
	capture_end_line(&cap, err, sizeof(err));
	TAP_OK(!ret && strstr(err, "another perflinkd"), "a second collector on the same path is refused: %s", err);
	pthread_create(&t, NULL, loop_thread, NULL);
	{
		struct pl_producer *p;
		struct pl_producer_options o = { .socket_path = "/tmp/pl-test-collector-none/x" };

		TAP_OK(pl_producer_open(&p, &o) == -ENOENT, "no daemon: -ENOENT, not a crash");
		o.reserved[6] = 1;
		TAP_OK(pl_producer_open(&p, &o) == -EINVAL,
		       "an option this library does not know (reserved not zero): -EINVAL");
	}
	/* first, while no producer's fds can be closed by the loop under it */
	test_out_of_fds();
	test_frames_and_replies();
	test_keep_every_frame();
	test_hostile();
	test_wakeups_unread();
	test_reply_reasons();
	test_truncated_memory();
	test_daemon_gone(&cfg, &sink);
	test_silent_daemon(dir);
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	pl__collector_close(collector);
	pl__loop_free(loop);
	rmdir(dir);
	return tap_done();
}
