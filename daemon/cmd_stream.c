/* `perflink stream`: send frames over the USB link and measure the round
 * trip to the host's reply. The thin end-to-end path of the link: the same
 * link code perflinkd uses, driven by a frame timer instead of producers. */
#include "cli.h"
#include "clock.h"
#include "event_loop.h"
#include "link.h"
#include "log.h"
#include "options.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct stream_options {
	char *ffs_dir;
	bool setup_gadget;
	long frames;
	long payload_bytes;
	double fps;
	long write_chunk;
	long budget_kib;
	double timeout_s;
	double deadline_s;
};

struct stream {
	struct stream_options opt;
	struct pl_loop *loop;
	struct pl_link *link;
	struct pl_loop_watch *frame_timer;
	uint8_t *payload;
	uint64_t *send_ns;   /* by frame id */
	double *latency_ms;  /* by reply order */
	uint64_t sent, replies, bad_replies, not_sent;
	uint64_t last_activity_ns;
	bool up;
};

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

static void send_next(struct stream *s)
{
	int err;

	if (!s->up || s->sent >= (uint64_t)s->opt.frames)
		return;
	fill_payload(s->payload, (size_t)s->opt.payload_bytes, s->sent);
	s->send_ns[s->sent] = pl__mono_ns();
	err = pl__link_send_frame(s->link, s->sent, 0, s->payload, (size_t)s->opt.payload_bytes);
	if (err < 0) {
		s->not_sent++;
		return;
	}
	s->sent++;
}

static void on_frame_timer(void *ctx, uint64_t expirations)
{
	(void)expirations;
	send_next(ctx);
}

static void on_writable(void *ctx)
{
	struct stream *s = ctx;

	/* at full speed the next frame goes as soon as there is room */
	if (s->opt.fps <= 0)
		send_next(s);
}

static void on_up(void *ctx, unsigned packet_size)
{
	struct stream *s = ctx;

	(void)packet_size;
	s->up = true;
	s->last_activity_ns = pl__mono_ns();
	if (s->opt.fps <= 0)
		send_next(s);
}

static void on_down(void *ctx, const char *why)
{
	struct stream *s = ctx;

	(void)why;
	s->up = false;
}

static void check_done(struct stream *s);

static void on_message(void *ctx, const struct pl_wire_header *hdr, const uint8_t *payload)
{
	struct stream *s = ctx;
	uint64_t now = pl__mono_ns();

	s->last_activity_ns = now;
	if (hdr->type != PL_MSG_REPLY)
		return;
	if (hdr->frame_id >= s->sent || hdr->payload_len != (uint32_t)s->opt.payload_bytes) {
		s->bad_replies++;
		return;
	}
	fill_payload(s->payload, (size_t)s->opt.payload_bytes, hdr->frame_id);
	if (memcmp(payload, s->payload, hdr->payload_len) != 0) {
		s->bad_replies++;
		return;
	}
	s->latency_ms[s->replies++] = (double)(now - s->send_ns[hdr->frame_id]) / 1e6;
	check_done(s);
}

/* Done when every frame that went out was answered: a frame replaced while
 * held never went out (newest wins), so it has no reply to wait for. */
static bool all_answered(struct stream *s)
{
	struct pl_link_stats st;

	pl__link_get_stats(s->link, &st);
	return s->sent >= (uint64_t)s->opt.frames &&
	       s->replies + st.frames_replaced >= (uint64_t)s->opt.frames;
}

static void check_done(struct stream *s)
{
	if (all_answered(s))
		pl__loop_stop(s->loop);
}

static void on_signal(void *ctx, int signo)
{
	(void)signo;
	pl__loop_stop(((struct stream *)ctx)->loop);
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

int pl__cmd_stream(int argc, char **argv)
{
	static const struct pl_link_handlers handlers = { on_up, on_down, on_message, on_writable };
	struct stream s;
	struct pl_link_config lc;
	struct pl_link_stats st;
	char err[PL_ERRBUF];
	int next, r, status = 0;
	uint64_t start;
	const struct pl_option options[] = {
		{ "ffs-dir", PL_OPT_STRING, &s.opt.ffs_dir, 0, 0, "DIR",
		  "the mounted functionfs instance" },
		{ "setup-gadget", PL_OPT_BOOL, &s.opt.setup_gadget, 0, 0, NULL,
		  "make the gadget through configfs and bind it to the first UDC" },
		{ "frames", PL_OPT_INT, &s.opt.frames, 1, 1e8, "N", "frames to send" },
		{ "payload-bytes", PL_OPT_INT, &s.opt.payload_bytes, 1, 4 << 20, "B",
		  "bytes per frame" },
		{ "fps", PL_OPT_DOUBLE, &s.opt.fps, 0, 10000, "R",
		  "frames per second (0: as fast as the link takes them)" },
		{ "write-chunk", PL_OPT_INT, &s.opt.write_chunk, 8192, 16384, "B",
		  "AIO request size: 8192 or 16384" },
		{ "budget-kib", PL_OPT_INT, &s.opt.budget_kib, 64, 65536, "KIB",
		  "at most this much submitted and not completed" },
		{ "deadline", PL_OPT_DOUBLE, &s.opt.deadline_s, 0.1, 3600, "S",
		  "drop and re-arm the gadget when the host takes nothing for this long" },
		{ "timeout", PL_OPT_DOUBLE, &s.opt.timeout_s, 1, 1e6, "S",
		  "give up after this long without a reply" },
		PL_OPT_END,
	};

	memset(&s, 0, sizeof(s));
	s.opt.ffs_dir = strdup("/dev/ffs-perflink");
	s.opt.frames = 500;
	s.opt.payload_bytes = 393216;
	s.opt.fps = 20;
	s.opt.write_chunk = 8192;
	s.opt.budget_kib = 1024;
	s.opt.deadline_s = 2;
	s.opt.timeout_s = 30;
	r = pl__options_parse_argv(options, argc, argv, &next, err, sizeof(err));
	if (r == 1) {
		printf("usage: perflink stream [OPTIONS]\n\nSend frames to perflink-host over the "
		       "USB link (one io_submit of --write-chunk\nrequests per frame) and measure "
		       "the time until each frame's reply arrives.\n\noptions:\n");
		pl__options_print_help(options, stdout);
		pl__options_free(options);
		return 0;
	}
	if (r < 0 || next < argc) {
		fprintf(stderr, "perflink stream: %s\n", r < 0 ? err : "unexpected argument");
		pl__options_free(options);
		return 2;
	}
	pl__log_init("perflink stream", true, 0);
	s.payload = malloc((size_t)s.opt.payload_bytes);
	s.send_ns = calloc((size_t)s.opt.frames, sizeof(*s.send_ns));
	s.latency_ms = calloc((size_t)s.opt.frames, sizeof(*s.latency_ms));
	if (!s.payload || !s.send_ns || !s.latency_ms)
		pl__fatalx("out of memory");

	pl__link_config_default(&lc);
	lc.ffs_dir = s.opt.ffs_dir;
	lc.setup_gadget = s.opt.setup_gadget;
	lc.gadget.mount_dir = s.opt.ffs_dir;
	lc.chunk_bytes = (size_t)s.opt.write_chunk;
	lc.budget_bytes = (size_t)s.opt.budget_kib * 1024;
	lc.deadline_ns = (uint64_t)(s.opt.deadline_s * 1e9);
	if (pl__loop_new(&s.loop) < 0)
		pl__fatalx("cannot make the event loop");
	pl__loop_add_signal(s.loop, SIGINT, on_signal, &s);
	pl__loop_add_signal(s.loop, SIGTERM, on_signal, &s);
	if (pl__link_open(&s.link, &lc, s.loop, &handlers, &s) < 0)
		pl__fatalx("cannot open the link in %s", s.opt.ffs_dir);
	if (s.opt.fps > 0)
		pl__loop_add_timer(s.loop, (uint64_t)(1e9 / s.opt.fps), (uint64_t)(1e9 / s.opt.fps),
				   on_frame_timer, &s, &s.frame_timer);

	start = s.last_activity_ns = pl__mono_ns();
	while (!all_answered(&s)) {
		if (pl__loop_run_once(s.loop, 200) < 0)
			break;
		if (pl__mono_ns() - s.last_activity_ns > (uint64_t)(s.opt.timeout_s * 1e9)) {
			pl__log_warnx("no reply for %.0f s; giving up", s.opt.timeout_s);
			status = 1;
			break;
		}
	}
	pl__link_get_stats(s.link, &st);
	if (s.link && pl__link_is_up(s.link)) {
		char end[64];
		int n = snprintf(end, sizeof(end), "{\"event\":\"stream_end\",\"frames\":%llu}",
				 (unsigned long long)(st.frames_sent));

		/* tell the host how many frames went out, and give the
		 * message a moment to leave before the gadget goes away */
		pl__link_send(s.link, PL_MSG_TELEMETRY, end, (size_t)n);
		for (int i = 0; i < 10; i++)
			pl__loop_run_once(s.loop, 20);
	}
	qsort(s.latency_ms, s.replies, sizeof(double), cmp_double);
	printf("frames_offered %llu frames_sent %llu replies %llu bad_replies %llu held %llu "
	       "replaced %llu rearms %llu failed_requests %llu\n",
	       (unsigned long long)s.sent, (unsigned long long)st.frames_sent,
	       (unsigned long long)s.replies,
	       (unsigned long long)s.bad_replies, (unsigned long long)st.frames_held,
	       (unsigned long long)st.frames_replaced, (unsigned long long)st.rearms,
	       (unsigned long long)st.tx.failed_requests);
	printf("latency_ms p50 %.3f p99 %.3f p99.9 %.3f max %.3f  MB/s %.1f  last_submit_us %.0f\n",
	       quantile(s.latency_ms, s.replies, 0.5), quantile(s.latency_ms, s.replies, 0.99),
	       quantile(s.latency_ms, s.replies, 0.999),
	       s.replies ? s.latency_ms[s.replies - 1] : 0.0,
	       (double)s.sent * (double)s.opt.payload_bytes / 1e6 /
		       ((double)(pl__mono_ns() - start) / 1e9),
	       (double)st.last_send.submit_ns / 1e3);
	if (s.bad_replies || s.replies + st.frames_replaced < (uint64_t)s.opt.frames)
		status = 1;
	pl__loop_remove(s.frame_timer);
	pl__link_close(s.link);
	pl__loop_free(s.loop);
	free(s.payload);
	free(s.send_ns);
	free(s.latency_ms);
	pl__options_free(options);
	return status;
}
