/* `perflink stream` and `perflink integrity`: send frames over the USB link
 * and check every reply. The same link code perflinkd uses, driven by a
 * frame timer instead of producers.
 *
 * stream: the host echoes each frame (compared byte for byte) or answers with
 * its SHA-256 (compared with the device's own digest); the round trip is
 * measured.
 * integrity (the USB link's byte-integrity-under-signals diagnostic): payloads that both
 * ends regenerate (common/wire/integrity_payload.h); the host checks every byte
 * and replies with the SHA-256 of what it received, which must equal the
 * device's own digest; meanwhile a thread sends SIGUSR2 to the thread that
 * submits the USB writes at a high rate, counting what was delivered. */
#include "cli.h"
#include "clock.h"
#include "event_loop.h"
#include "frame_source.h"
#include "link.h"
#include "log.h"
#include "options.h"
#include "payload_hash.h"
#include "stat_cpu.h"
#include "integrity_payload.h"

#include <openssl/sha.h>
#include <pthread.h>
#include <time.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct stream_options {
	char *ffs_dir;
	bool setup_gadget;
	long frames;
	long payload_bytes;
	double fps;
	long write_chunk;
	long budget_kib;
	long make_ahead;
	double timeout_s;
	double deadline_s;
	bool integrity;
	double signal_interval_us; /* integrity: 0 for no signals */
	long seed;
	bool sync;
	long sync_bytes;
	bool no_replies;
	bool no_check;
	char *frames_csv;
};

/* Signals delivered to the submitting thread during an integrity run. The
 * handler does nothing else: what is checked is that the link's writes are
 * not disturbed by them. */
static volatile sig_atomic_t signals_seen;

static void count_signal(int signo)
{
	(void)signo;
	signals_seen++;
}

struct signal_storm {
	pthread_t target, thread;
	double interval_us;
	volatile int stop;
	uint64_t sent;
};

static void *storm(void *arg)
{
	struct signal_storm *st = arg;
	long ns = (long)(st->interval_us * 1000);
	struct timespec nap = { ns / 1000000000L, ns % 1000000000L };

	while (!st->stop) {
		if (pthread_kill(st->target, SIGUSR2) == 0)
			st->sent++;
		nanosleep(&nap, NULL);
	}
	return NULL;
}

struct stream {
	struct stream_options opt;
	struct pl_loop *loop;
	struct pl_link *link;
	struct pl_loop_watch *frame_timer;
	uint8_t *payload;
	uint64_t *send_ns;   /* by frame id */
	double *latency_ms;  /* by reply order */
	uint64_t *reply_frame; /* by reply order */
	uint64_t sent, replies, bad_replies, not_sent;
	/* per frame: 0 waiting, 1 answered, 2 unconfirmed (in flight when the
	 * link went down; its reply can no longer come, unless it was still
	 * held and goes out after the reconnect) */
	uint8_t *answer;
	uint64_t unconfirmed, downs, replaced;
	uint64_t held_id; /* the frame the link holds, when have_held */
	bool stop;        /* SIGINT or SIGTERM */
	bool have_held;
	uint8_t digest[SHA256_DIGEST_LENGTH];
	/* Frames are made, and their wire checksum computed, right after the
	 * frame before went out (while it is in flight), or with --make-ahead
	 * on a thread of their own, as a producer makes them in its own process
	 * beside perflinkd. Replies are checked in a buffer of their own. */
	struct pl_frame_source *source;
	uint8_t *check;
	uint64_t last_activity_ns;
	uint64_t first_up_ns; /* throughput counts from the first connection */
	struct pl_stat_cpu first_up_cpu; /* the machine's, for system_busy_pct */
	bool up;
	bool heard_host; /* a message from the host came: its program is reading */
	struct pl_option options[18]; /* the command line's, pointing into opt */
};

/* At a set rate the first frame waits for the host's first message (a host
 * that answers frames pings at once), at most this long after the link came
 * up: until the host program reads, a frame's round trip would time the
 * program's start, not the link. */
#define HOST_WAIT_NS (1000ull * 1000 * 1000)

/* Fill the payload with bytes that depend on the frame id, so an echo of
 * another frame's bytes is noticed. */
static void fill_payload(uint8_t *p, size_t len, uint64_t frame_id)
{
	uint64_t x = frame_id * 0x9e3779b97f4a7c15ull + 1;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

static void make_payload(struct stream *s, uint8_t *buf, uint64_t frame_id)
{
	if (s->opt.no_check && !s->opt.integrity) {
		memcpy(buf, &frame_id, sizeof(frame_id) < (size_t)s->opt.payload_bytes
					       ? sizeof(frame_id)
					       : (size_t)s->opt.payload_bytes);
		return;
	}
	if (s->opt.integrity)
		pl__integrity_fill(buf, (size_t)s->opt.payload_bytes, (uint64_t)s->opt.seed, frame_id);
	else
		fill_payload(buf, (size_t)s->opt.payload_bytes, frame_id);
}

/* On the frame source's thread: reads only the options. */
static void make_frame(void *ctx, uint8_t *buf, size_t len, uint64_t frame_id)
{
	(void)len; /* the source's frames are payload_bytes long */
	make_payload(ctx, buf, frame_id);
}

static void send_next(struct stream *s)
{
	const uint8_t *payload;
	uint64_t hash;
	int err;

	if (!s->up || s->stop || s->sent >= (uint64_t)s->opt.frames)
		return;
	if (s->opt.fps > 0 && !s->heard_host && pl__mono_ns() - s->first_up_ns < HOST_WAIT_NS)
		return;
	/* made ahead: a wait here only when the maker is behind the link */
	payload = pl__frame_source_take(s->source, s->sent, &hash);
	s->send_ns[s->sent] = pl__mono_ns();
	err = pl__link_send_frame_hashed(s->link, s->sent,
					 s->opt.integrity ? PL_WIRE_FLAG_INTEGRITY : 0, payload,
					 (size_t)s->opt.payload_bytes, hash);
	if (err < 0) {
		s->not_sent++;
		return;
	}
	if (err == 2) {
		/* held in place of the frame held before it, which then never
		 * goes out and has no reply to wait for */
		s->answer[s->held_id] = 3;
		s->replaced++;
	}
	/* with 0 or 1, a frame held before went out first */
	s->have_held = err > 0;
	if (err > 0)
		s->held_id = s->sent;
	s->sent++;
	/* the link copied or submitted the bytes: the buffer is free again */
	pl__frame_source_release(s->source);
}

static void on_frame_timer(void *ctx, uint64_t expirations)
{
	(void)expirations;
	send_next(ctx);
}

static void on_writable(void *ctx)
{
	struct stream *s = ctx;

	/* at full speed the next frame goes as soon as there is room for it,
	 * so none is held and replaced */
	if (s->opt.fps <= 0 && pl__link_frame_fits(s->link, (size_t)s->opt.payload_bytes))
		send_next(s);
}

static void on_up(void *ctx, unsigned packet_size)
{
	struct stream *s = ctx;

	(void)packet_size;
	s->up = true;
	s->last_activity_ns = pl__mono_ns();
	if (!s->first_up_ns) {
		s->first_up_ns = s->last_activity_ns;
		pl__stat_cpu_now(&s->first_up_cpu);
	}
	if (s->opt.fps <= 0)
		send_next(s);
}

static void on_down(void *ctx, const char *why)
{
	struct stream *s = ctx;

	uint64_t i;

	(void)why;
	s->up = false;
	s->downs++;
	for (i = 0; i < s->sent; i++) {
		/* the held frame is still in the link and goes out after the
		 * reconnect */
		if (s->answer[i] == 0 && !(s->have_held && i == s->held_id)) {
			s->answer[i] = 2;
			s->unconfirmed++;
		}
	}
}

static void on_message(void *ctx, const struct pl_wire_header *hdr, const uint8_t *payload)
{
	struct stream *s = ctx;
	uint64_t now = pl__mono_ns(); /* before any checking work */

	s->last_activity_ns = now;
	s->heard_host = true;
	if (hdr->type != PL_MSG_REPLY)
		return;
	if (hdr->frame_id >= s->sent || s->answer[hdr->frame_id] == 1 ||
	    s->answer[hdr->frame_id] == 3) {
		s->bad_replies++; /* a frame never sent, or a second reply */
		return;
	}
	if (s->opt.no_check)
		goto answered;
	make_payload(s, s->check, hdr->frame_id);
	if (s->opt.integrity) {
		SHA256(s->check, (size_t)s->opt.payload_bytes, s->digest);
		if (hdr->payload_len != sizeof(s->digest) ||
		    memcmp(payload, s->digest, sizeof(s->digest)) != 0) {
			s->bad_replies++;
			return;
		}
	} else if (hdr->payload_len == sizeof(s->digest)) {
		/* a small reply, like a model's output: the host's digest */
		SHA256(s->check, (size_t)s->opt.payload_bytes, s->digest);
		if (memcmp(payload, s->digest, sizeof(s->digest)) != 0) {
			s->bad_replies++;
			return;
		}
	} else if (hdr->payload_len != (uint32_t)s->opt.payload_bytes ||
		   memcmp(payload, s->check, hdr->payload_len) != 0) {
		s->bad_replies++;
		return;
	}
answered:
	if (s->answer[hdr->frame_id] == 2)
		s->unconfirmed--;
	s->answer[hdr->frame_id] = 1;
	s->reply_frame[s->replies] = hdr->frame_id;
	s->latency_ms[s->replies++] = (double)(now - s->send_ns[hdr->frame_id]) / 1e6;
}

/* Done when every frame that went out was answered: a frame replaced while
 * held never went out (newest wins), so it has no reply to wait for. */
static bool all_answered(struct stream *s)
{
	struct pl_link_stats st;

	pl__link_get_stats(s->link, &st);
	if (s->opt.no_replies && s->opt.sync)
		return st.frames_sent + st.frames_replaced >= (uint64_t)s->opt.frames;
	if (s->opt.no_replies)
		return st.frames_sent + st.frames_replaced >= (uint64_t)s->opt.frames &&
		       st.usb.completed_requests + st.usb.cancelled_requests +
				       st.usb.failed_requests >=
			       st.usb.requests;
	return s->sent >= (uint64_t)s->opt.frames &&
	       s->replies + s->replaced + s->unconfirmed >= (uint64_t)s->opt.frames &&
	       !st.frames_held_now;
}

static void on_signal(void *ctx, int signo)
{
	(void)signo;
	((struct stream *)ctx)->stop = true;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double quantile(const double *sorted, uint64_t n, double q)
{
	uint64_t i;

	if (n == 0)
		return 0;
	i = (uint64_t)(q * (double)(n - 1) + 0.5);
	return sorted[i < n ? i : n - 1];
}

/* The command line: the option table points into s->opt. */
static void options_table(struct stream *s)
{
	const struct pl_option table[] = {
		{ "ffs-dir", PL_OPT_STRING, &s->opt.ffs_dir, 0, 0, "DIR",
		  "the mounted functionfs instance" },
		{ "setup-gadget", PL_OPT_BOOL, &s->opt.setup_gadget, 0, 0, NULL,
		  "make the gadget through configfs and bind it to the first UDC" },
		{ "frames", PL_OPT_INT, &s->opt.frames, 1, 1e8, "N", "frames to send" },
		{ "payload-bytes", PL_OPT_INT, &s->opt.payload_bytes, 1, 4 << 20, "B",
		  "bytes per frame" },
		{ "fps", PL_OPT_DOUBLE, &s->opt.fps, 0, 10000, "R",
		  "frames per second (0: as fast as the link takes them); at a set rate the "
		  "first frame waits up to 1 s for the host's first message" },
		{ "write-chunk", PL_OPT_INT, &s->opt.write_chunk, 8192, 16384, "B",
		  "AIO request size: 8192 or 16384" },
		{ "budget-kib", PL_OPT_INT, &s->opt.budget_kib, 64, 65536, "KIB",
		  "at most this much submitted and not completed" },
		{ "make-ahead", PL_OPT_INT, &s->opt.make_ahead, 0, 8, "N",
		  "frames made and hashed ahead on a thread of their own, as a producer "
		  "does (0: in the sending thread, each right after the one before is sent)" },
		{ "deadline", PL_OPT_DOUBLE, &s->opt.deadline_s, 0.1, 3600, "S",
		  "drop and re-arm the gadget when the host takes nothing for this long" },
		{ "timeout", PL_OPT_DOUBLE, &s->opt.timeout_s, 1, 1e6, "S",
		  "give up after this long without a reply" },
		{ "signal-interval-us", PL_OPT_DOUBLE, &s->opt.signal_interval_us, 0, 1e6, "US",
		  "integrity: send SIGUSR2 to the submitting thread this often (0: never)" },
		{ "seed", PL_OPT_INT, &s->opt.seed, 0, 1e15, "N",
		  "integrity: the payload seed (0: from the clock)" },
		{ "sync", PL_OPT_BOOL, &s->opt.sync, 0, 0, NULL,
		  "baseline for benchmarks: blocking write()s of --sync-bytes instead of AIO" },
		{ "sync-bytes", PL_OPT_INT, &s->opt.sync_bytes, 512, 1 << 20, "B",
		  "size of each synchronous write" },
		{ "no-replies", PL_OPT_BOOL, &s->opt.no_replies, 0, 0, NULL,
		  "the host does not reply (perflink-host --reply none): a frame is done when "
		  "sent; for throughput runs" },
		{ "no-check", PL_OPT_BOOL, &s->opt.no_check, 0, 0, NULL,
		  "benchmarks: send the same bytes each frame (frame id stamped) and count "
		  "replies without checking them, so the device's CPU goes to the link" },
		{ "frames-csv", PL_OPT_STRING, &s->opt.frames_csv, 0, 0, "PATH",
		  "one line per answered frame: frame_id,bytes,send_ns,reply_ns,latency_ms" },
		PL_OPT_END,
	};

	_Static_assert(sizeof(table) == sizeof(s->options), "stream: the option table's size");
	memcpy(s->options, table, sizeof(table));
}

static void options_defaults(struct stream_options *o, bool integrity)
{
	*o = (struct stream_options){
		.frames = integrity ? 100000 : 500,
		.payload_bytes = 393216,
		.write_chunk = 8192,
		.fps = integrity ? 0 : 20,
		.budget_kib = 1024,
		.sync_bytes = 32768,
		.signal_interval_us = integrity ? 100 : 0,
		/* in the sending thread: in the rig the device shares two CPUs
		 * with the host, and a maker thread's hashing takes the host's
		 * (perflink-bench link: 0.835 of the bare stream inline, 0.772
		 * with 3 ahead) */
		.make_ahead = 0,
		.deadline_s = 2,
		.integrity = integrity,
		.timeout_s = 30,
	};
	o->ffs_dir = strdup("/dev/ffs-perflink");
}

static void usage(const struct stream *s)
{
	if (s->opt.integrity)
		printf("usage: perflink integrity [OPTIONS]\n\nThe byte-integrity diagnostic: "
		       "send frames whose bytes both ends regenerate\nto `perflink-host "
		       "--integrity`, which checks every byte and replies with the\nSHA-256 "
		       "of what it received; compare it with the device's own digest while\n"
		       "SIGUSR2 hits the submitting thread. Mismatches must be 0.\n\n"
		       "options:\n");
	else
		printf("usage: perflink stream [OPTIONS]\n\nSend frames to perflink-host "
		       "over the USB link (one io_submit of --write-chunk\nrequests per "
		       "frame) and measure the time until each frame's reply arrives.\n\n"
		       "options:\n");
	pl__options_print_help(s->options, stdout);
}

/* -1: go on; else the exit status (0 after --help, 2 for a usage error). */
static int parse_command_line(struct stream *s, int argc, char **argv, bool integrity)
{
	char err[PL_ERRBUF];
	int next, r;

	options_table(s);
	options_defaults(&s->opt, integrity);
	r = pl__options_parse_argv(s->options, argc, argv, &next, err, sizeof(err));
	if (r < 0 || (r == 0 && next < argc)) {
		fprintf(stderr, "perflink stream: %s\n", r < 0 ? err : "unexpected argument");
		return 2;
	}
	if (r == 1)
		usage(s); /* --help */
	return r == 1 ? 0 : -1;
}

/* What the run keeps per frame, and the frames themselves. */
static void prepare_frames(struct stream *s)
{
	size_t frames = (size_t)s->opt.frames;

	if (s->opt.seed == 0)
		s->opt.seed = (long)(pl__wall_ns() & 0xffffffffffffll);
	s->check = malloc((size_t)s->opt.payload_bytes);
	s->send_ns = calloc(frames, sizeof(*s->send_ns));
	s->latency_ms = calloc(frames, sizeof(*s->latency_ms));
	s->answer = calloc(frames, 1);
	s->reply_frame = calloc(frames, sizeof(*s->reply_frame));
	if (!s->check || !s->send_ns || !s->latency_ms || !s->answer || !s->reply_frame)
		pl__fatalx("out of memory");
	/* chosen before the first frame is made, so none pays for it */
	pl__payload_hash_choose();
	if (pl__frame_source_start(&s->source, (size_t)s->opt.payload_bytes,
				   (uint64_t)s->opt.frames, (unsigned)s->opt.make_ahead, make_frame,
				   s) < 0)
		pl__fatalx("cannot start making frames");
}

static void open_link(struct stream *s, struct pl_link_config *lc)
{
	static const struct pl_link_handlers handlers = {
		.up = on_up,
		.down = on_down,
		.message = on_message,
		.writable = on_writable,
	};

	pl__link_config_default(lc);
	lc->program = "perflink stream";
	lc->ffs_dir = s->opt.ffs_dir;
	lc->setup_gadget = s->opt.setup_gadget;
	lc->gadget.mount_dir = s->opt.ffs_dir;
	lc->chunk_bytes = (size_t)s->opt.write_chunk;
	lc->budget_bytes = (size_t)s->opt.budget_kib * 1024;
	lc->deadline_ns = (uint64_t)(s->opt.deadline_s * 1e9);
	if (s->opt.sync)
		lc->sync_write_bytes = (size_t)s->opt.sync_bytes;
	if (pl__loop_new(&s->loop) < 0)
		pl__fatalx("cannot make the event loop");
	pl__loop_add_signal(s->loop, SIGINT, on_signal, s);
	pl__loop_add_signal(s->loop, SIGTERM, on_signal, s);
	if (pl__link_open(&s->link, lc, s->loop, &handlers, s) < 0)
		pl__fatalx("cannot open the link in %s", s->opt.ffs_dir);
	if (s->opt.fps > 0) {
		uint64_t period_ns = (uint64_t)(1e9 / s->opt.fps);

		pl__loop_add_timer(s->loop, period_ns, period_ns, on_frame_timer, s,
				   &s->frame_timer);
	}
}

/* integrity: SIGUSR2 at the thread that submits the writes */
static void start_signal_storm(struct stream *s, struct signal_storm *st)
{
	struct sigaction sa;

	memset(st, 0, sizeof(*st));
	if (!s->opt.integrity || s->opt.signal_interval_us <= 0)
		return;
	/* no SA_RESTART: every interruptible call sees EINTR, which is
	 * the harshest case for the send path */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = count_signal;
	sigaction(SIGUSR2, &sa, NULL);
	st->target = pthread_self();
	st->interval_us = s->opt.signal_interval_us;
	if (pthread_create(&st->thread, NULL, storm, st) != 0)
		pl__fatalx("cannot start the signal thread");
}

static void stop_signal_storm(struct signal_storm *st)
{
	if (st->interval_us > 0) {
		st->stop = 1;
		pthread_join(st->thread, NULL);
	}
}

/* Until every frame is answered, a signal, or the timeout: 0 or 1 (timeout). */
static int stream_frames(struct stream *s)
{
	while (!s->stop && !all_answered(s)) {
		/* synchronous sends complete inside the call, so no completion
		 * says "room again": at full speed the loop offers the next
		 * frame itself */
		bool spin = s->opt.sync && s->opt.fps <= 0 && s->sent < (uint64_t)s->opt.frames;

		if (spin)
			send_next(s);
		if (pl__loop_run_once(s->loop, spin ? 0 : 200) < 0)
			break;
		if (pl__mono_ns() - s->last_activity_ns > (uint64_t)(s->opt.timeout_s * 1e9)) {
			pl__log_warnx("no reply for %.0f s; giving up", s->opt.timeout_s);
			return 1;
		}
	}
	return 0;
}

/* Tell the host how many frames went out, and give the message a moment to
 * leave before the gadget goes away. */
static void send_end(struct stream *s, const struct pl_link_stats *ls)
{
	char end[96];
	int n;

	if (!s->link || !pl__link_is_up(s->link))
		return;
	n = snprintf(end, sizeof(end),
		     "{\"event\":\"stream_end\",\"frames\":%llu,\"unconfirmed\":%llu}",
		     (unsigned long long)ls->frames_sent, (unsigned long long)s->unconfirmed);
	pl__link_send(s->link, PL_MSG_TELEMETRY, end, (size_t)n);
	for (int i = 0; i < 10; i++)
		pl__loop_run_once(s->loop, 20);
}

static void write_frames_csv(const struct stream *s)
{
	/* a symbolic link planted where the file goes is refused */
	int fd = open(s->opt.frames_csv, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	uint64_t i;

	if (!f) {
		pl__log_warn("%s", s->opt.frames_csv);
		if (fd >= 0)
			close(fd);
		return;
	}
	fprintf(f, "frame_id,bytes,send_ns,reply_ns,latency_ms\n");
	for (i = 0; i < s->replies; i++)
		fprintf(f, "%llu,%ld,%llu,%llu,%.3f\n", (unsigned long long)s->reply_frame[i],
			s->opt.payload_bytes, (unsigned long long)s->send_ns[s->reply_frame[i]],
			(unsigned long long)(s->send_ns[s->reply_frame[i]] +
					     (uint64_t)(s->latency_ms[i] * 1e6)),
			s->latency_ms[i]);
	fclose(f);
}

/* The run's span for MB/s and CPU %: from the start (or the first
 * connection) to the moment the last frame was out and answered. */
struct run_span {
	uint64_t start_ns, done_ns;
	struct timespec done_cpu;          /* this process's */
	struct pl_stat_cpu done_system_cpu; /* the machine's */
};

static void print_results(struct stream *s, const struct pl_link_config *lc,
			  const struct pl_link_stats *ls, const struct run_span *span,
			  const struct signal_storm *st)
{
	const struct timespec cpu = span->done_cpu;
	double elapsed = (double)(span->done_ns - span->start_ns) / 1e9;
	uint64_t first_ns = s->first_up_ns ? s->first_up_ns : span->start_ns;
	struct pl_payload_hash_choice hash;
	uint64_t malformed = 0;

	qsort(s->latency_ms, s->replies, sizeof(double), cmp_double);
	printf("frames_offered %llu frames_sent %llu replies %llu unconfirmed %llu link_downs %llu "
	       "bad_replies %llu held %llu replaced %llu rearms %llu failed_requests %llu\n",
	       (unsigned long long)s->sent, (unsigned long long)ls->frames_sent,
	       (unsigned long long)s->replies, (unsigned long long)s->unconfirmed,
	       (unsigned long long)s->downs, (unsigned long long)s->bad_replies,
	       (unsigned long long)ls->frames_held, (unsigned long long)ls->frames_replaced,
	       (unsigned long long)ls->rearms, (unsigned long long)ls->usb.failed_requests);
	for (int e = 0; e < PL_WIRE_ERROR_COUNT; e++)
		malformed += ls->rx_errors[e];
	printf("from the host: messages %llu malformed %llu skipped_bytes %llu\n",
	       (unsigned long long)ls->rx_messages, (unsigned long long)malformed,
	       (unsigned long long)ls->rx_skipped_bytes);
	pl__payload_hash_describe(&hash);
	/* hash_pct: of the elapsed time, spent on the payloads' XXH3 */
	/* zero_length_requests: how many messages needed one (link_aio_tx.c) */
	printf("mode %s chunk %zu bytes %llu seconds %.2f cpu_pct %.1f max_submit_us %.0f "
	       "max_backlog_kb %.0f hash_pct %.1f hash_impl %s zero_length_requests %llu\n",
	       s->opt.sync ? "sync" : "aio",
	       s->opt.sync ? (size_t)s->opt.sync_bytes : lc->chunk_bytes,
	       (unsigned long long)ls->tx.bytes, elapsed,
	       100.0 * ((double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9) / elapsed,
	       (double)ls->tx.max_submit_ns / 1e3, (double)ls->tx.max_backlog_bytes / 1024,
	       100.0 * (double)(ls->hash_ns + pl__frame_source_hash_ns(s->source)) / 1e9 / elapsed,
	       hash.name, (unsigned long long)ls->usb.zero_length_requests);
	/* system_busy_pct: of all the machine's CPUs over the same span as MB/s */
	printf("latency_ms p50 %.3f p99 %.3f p99.9 %.3f max %.3f  MB/s %.1f  last_submit_us %.0f "
	       "system_busy_pct %.1f\n",
	       quantile(s->latency_ms, s->replies, 0.5), quantile(s->latency_ms, s->replies, 0.99),
	       quantile(s->latency_ms, s->replies, 0.999),
	       s->replies ? s->latency_ms[s->replies - 1] : 0.0,
	       (double)ls->frames_sent * (double)s->opt.payload_bytes / 1e6 /
		       ((double)(span->done_ns - first_ns) / 1e9),
	       (double)ls->last_send.submit_ns / 1e3,
	       pl__stat_cpu_busy_pct(&s->first_up_cpu, &span->done_system_cpu));
	if (s->opt.integrity)
		printf("integrity: frames %llu, mismatched digests %llu, signals sent %llu, "
		       "delivered %llu, seed %ld\n",
		       (unsigned long long)s->replies, (unsigned long long)s->bad_replies,
		       (unsigned long long)st->sent, (unsigned long long)signals_seen, s->opt.seed);
}

/* 1 when a reply was wrong or a frame is unaccounted for, else status. */
static int check_results(const struct stream *s, const struct pl_link_stats *ls,
			 bool stopped_by_signal, int status)
{
	if (s->bad_replies) {
		pl__log_warnx("%llu replies did not match what was sent",
			      (unsigned long long)s->bad_replies);
		status = 1;
	}
	if (!stopped_by_signal && !s->opt.no_replies &&
	    s->replies + s->replaced + s->unconfirmed < (uint64_t)s->opt.frames) {
		pl__log_warnx("%llu of %ld frames are unaccounted for",
			      (unsigned long long)((uint64_t)s->opt.frames - s->replies -
						   s->replaced - s->unconfirmed),
			      s->opt.frames);
		status = 1;
	}
	if (s->replaced != ls->frames_replaced) {
		pl__log_warnx("the link replaced %llu held frames, the stream counted %llu",
			      (unsigned long long)ls->frames_replaced,
			      (unsigned long long)s->replaced);
		status = 1;
	}
	return status;
}

static void stream_free(struct stream *s)
{
	pl__loop_remove(s->frame_timer);
	pl__link_close(s->link);
	pl__loop_free(s->loop);
	pl__frame_source_stop(s->source);
	free(s->check);
	free(s->send_ns);
	free(s->latency_ms);
	free(s->answer);
	free(s->reply_frame);
	pl__options_free(s->options);
}

static int run(int argc, char **argv, bool integrity)
{
	struct stream s;
	struct pl_link_config lc;
	struct pl_link_stats ls;
	struct signal_storm st;
	struct run_span span;
	bool stopped_by_signal;
	int status;

	memset(&s, 0, sizeof(s));
	status = parse_command_line(&s, argc, argv, integrity);
	if (status >= 0) {
		pl__options_free(s.options);
		return status;
	}
	pl__log_init(integrity ? "perflink integrity" : "perflink stream", true, 0);
	prepare_frames(&s);
	open_link(&s, &lc);
	start_signal_storm(&s, &st);
	span.start_ns = s.last_activity_ns = pl__mono_ns();
	status = stream_frames(&s);
	/* the run's end for MB/s and CPU %: the last frame is out (and answered);
	 * what follows (the end message and the moment it is given to leave,
	 * the CSV) is not the link's throughput */
	span.done_ns = pl__mono_ns();
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &span.done_cpu);
	pl__stat_cpu_now(&span.done_system_cpu);
	stop_signal_storm(&st);
	/* no frame may follow the count that the end message carries */
	stopped_by_signal = s.stop;
	s.stop = true;
	pl__loop_remove(s.frame_timer);
	s.frame_timer = NULL;
	pl__link_get_stats(s.link, &ls);
	send_end(&s, &ls);
	if (s.opt.frames_csv)
		write_frames_csv(&s);
	print_results(&s, &lc, &ls, &span, &st);
	status = check_results(&s, &ls, stopped_by_signal, status);
	stream_free(&s);
	return status;
}

int pl__cmd_stream(int argc, char **argv)
{
	return run(argc, argv, false);
}

int pl__cmd_integrity(int argc, char **argv)
{
	return run(argc, argv, true);
}
