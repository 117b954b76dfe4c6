/* libperflink-host (include/perflink_host.h) against a device played over
 * TCP (fake_device.h): the application's replies reach the device with the
 * right frame ids and bytes, frames it does not answer get no reply, a
 * reply too long for the buffer is counted and not sent, telemetry lines
 * come out whole and valid, garbage on the stream is skipped, the clock
 * offset is estimated, and a dropped connection comes back. Then the
 * example program host/examples/reply_app (its path is the argument) as a
 * process against the same device. */
#include "fake_device.h"
#include "perflink_host.h"
#include "tap.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>

#define OFFSET_NS 2000000777ll
#define DEADLINE_NS 20000000000ull
#define FRAMES 24
#define BIG_BYTES 200000
#define APP_FRAMES 6

static uint64_t frame_ids[FRAMES];
static uint32_t frame_len[FRAMES];

/* what the application saw and what the device got back */
struct seen {
	struct plh_host *h;
	unsigned frames, wrong_bytes, unknown, reentered;
	bool got[FRAMES];
};
struct back {
	unsigned replies, wrong, unexpected;
	bool got[FRAMES];
};

static uint8_t frame_byte(unsigned i, size_t k)
{
	return (uint8_t)(i * 13 + k * 5 + 1);
}

/* Frame i's reply: none for every 5th, one longer than the buffer for
 * frame 7, else its id and its bytes with every bit flipped. */
static bool wants_reply(unsigned i)
{
	return i % 5 != 0 && i != 7;
}

static int index_of(uint64_t frame_id)
{
	unsigned i;

	for (i = 0; i < FRAMES; i++)
		if (frame_ids[i] == frame_id)
			return (int)i;
	return -1;
}

static size_t answer(void *ctx, uint64_t frame_id, const void *frame, size_t len, void *reply,
		     size_t reply_cap)
{
	struct seen *s = ctx;
	const uint8_t *in = frame;
	uint8_t *out = reply;
	int i = index_of(frame_id);
	size_t k;

	if (i < 0 || s->got[i]) {
		s->unknown++;
		return 0;
	}
	s->got[i] = true;
	s->frames++;
	for (k = 0; k < len && len == frame_len[i]; k++)
		if (in[k] != frame_byte((unsigned)i, k))
			break;
	if (len != frame_len[i] || k != len)
		s->wrong_bytes++;
	if (plh_run(s->h, answer, s, 0) != -EBUSY)
		s->reentered++;
	if (i == 7)
		return reply_cap + 1;
	if (!wants_reply((unsigned)i) || reply_cap < 8 + len)
		return 0;
	memcpy(out, &frame_id, 8);
	for (k = 0; k < len; k++)
		out[8 + k] = (uint8_t)~in[k];
	return 8 + len;
}

static void on_reply(struct fake_device *d, const struct pl_wire_header *h, const uint8_t *payload)
{
	struct back *b = d->ctx;
	int i = index_of(h->frame_id);
	uint64_t id;
	size_t k;

	if (h->type != PL_MSG_REPLY)
		return;
	if (i < 0 || b->got[i] || !wants_reply((unsigned)i)) {
		b->unexpected++;
		return;
	}
	b->got[i] = true;
	b->replies++;
	memcpy(&id, payload, h->payload_len >= 8 ? 8 : 0);
	for (k = 0; h->payload_len == 8 + frame_len[i] && k < frame_len[i]; k++)
		if (payload[8 + k] + frame_byte((unsigned)i, k) != 0xff) /* ~byte */
			break;
	if (h->payload_len != 8 + frame_len[i] || id != h->frame_id || k != frame_len[i])
		b->wrong++;
}

struct lines {
	unsigned n, typed, untyped, bad_len;
	char last_type[48];
	bool saw_latency, saw_sample, saw_hostile;
};

static void on_line(void *ctx, const char *type, const char *line, size_t len)
{
	struct lines *l = ctx;

	l->n++;
	if (strlen(line) != len || line[0] != '{' || line[len - 1] != '}')
		l->bad_len++;
	if (type) {
		l->typed++;
		snprintf(l->last_type, sizeof(l->last_type), "%s", type);
		l->saw_latency |= strcmp(type, "frame_latency") == 0;
		l->saw_sample |= strcmp(type, "sample") == 0;
	} else {
		l->untyped++;
		l->saw_hostile |= strstr(line, "../escape") != NULL;
	}
}

static int send_frame(struct fake_device *d, unsigned i)
{
	static uint8_t data[BIG_BYTES];
	size_t k;

	for (k = 0; k < frame_len[i]; k++)
		data[k] = frame_byte(i, k);
	return fake_send(d, PL_MSG_FRAME, frame_ids[i], data, frame_len[i], fake_now(d));
}

/* Run the host and the device (d may be NULL) in turn until cond holds or
 * the deadline passes. */
#define UNTIL(cond, h, fn, ctx, d)                                                 \
	do {                                                                       \
		uint64_t until_ = pl__mono_ns() + DEADLINE_NS;                     \
		struct fake_device *d_ = (d);                                      \
		while (!(cond) && pl__mono_ns() < until_) {                        \
			plh_run(h, fn, ctx, 20);                                   \
			if (d_)                                                    \
				fake_pump(d_, 0);                                  \
		}                                                                  \
	} while (0)

static int connect_host(struct plh_host *h, int lfd, struct fake_device *d, void *seen,
			struct back *b)
{
	uint64_t until = pl__mono_ns() + DEADLINE_NS;
	int fd = -1;

	while (fd < 0 && pl__mono_ns() < until) {
		plh_run(h, answer, seen, 20);
		fd = fake_accept(lfd, 0);
	}
	if (fd < 0 || fake_start(d, fd, OFFSET_NS, on_reply, b) < 0)
		return -1;
	UNTIL(plh_connected(h), h, answer, seen, (struct fake_device *)NULL);
	return plh_connected(h) ? 0 : -1;
}

static bool have_offset(const struct plh_host *h)
{
	struct plh_stats st;

	plh_get_stats(h, &st);
	return st.have_clock_offset;
}

static void run_library(void)
{
	static const char telemetry[] =
		"{\"type\":\"sample\",\"pid\":1,\"cpu\":[1,2]}\n"
		"\n"
		"{broken\n"
		"{\"type\":\"../escape\",\"x\":1}\n"
		"{\"type\":\"frame_latency\",\"frames\":[[1,2,3]],\"dropped\":0}";
	static const uint8_t garbage[200] = { 'P', 'L', 'N', 'K', 1, 2, 3 };
	struct plh_options o = { 0 };
	struct fake_device d;
	struct plh_stats st;
	struct plh_host *h;
	struct seen seen = { 0 };
	struct back back = { 0 };
	struct lines lines = { 0 };
	char addr[64];
	int lfd, port = 0, r;
	unsigned i, want_replies = 0, errno_changed = 0;

	o.tcp = "127.0.0.1:notaport";
	TAP_OK(plh_open(&h, &o) == -EINVAL, "a bad address: -EINVAL");
	TAP_OK(plh_open(&h, NULL) == -EINVAL, "no options: -EINVAL");
	o.tcp = "127.0.0.1:7200";
	o.reserved[0] = 1;
	TAP_OK(plh_open(&h, &o) == -EINVAL,
	       "an option this library does not know (reserved not zero): -EINVAL");
	o.reserved[0] = 0;
	o.tcp_key_file = "/proc/self/status"; /* mode 0444: others may read it */
	TAP_OK(plh_open(&h, &o) == -EINVAL, "a key file others can read: -EINVAL");
	o.tcp_key_file = NULL;

	lfd = fake_listen(&port);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	o.tcp = addr;
	r = plh_open(&h, &o);
	TAP_OK(lfd >= 0 && r == 0, "plh_open %s", addr);
	if (lfd < 0 || r < 0)
		return;
	seen.h = h;
	TAP_OK(plh_run(h, answer, &seen, -1) == -EINVAL, "plh_run: negative timeout refused");
	plh_set_telemetry(h, on_line, &lines);
	TAP_OK(!plh_connected(h), "not connected before plh_run");
	TAP_OK(connect_host(h, lfd, &d, &seen, &back) == 0, "the host connected");

	for (i = 0; i < FRAMES; i++) {
		/* the producer's number in the top 16 bits, as perflinkd sends */
		frame_ids[i] = ((uint64_t)(i % 3 + 1) << 48) | (1000 + i);
		frame_len[i] = i == 3 ? BIG_BYTES : i == 4 ? 0 : 1 + i * 331;
		want_replies += wants_reply(i);
	}
	for (i = 0; i < FRAMES; i++) {
		if (i == FRAMES / 2) {
			/* garbage between messages is skipped, the stream goes on */
			fake_write_all(d.fd, garbage, sizeof(garbage));
			fake_send(&d, PL_MSG_TELEMETRY, 0, telemetry, sizeof(telemetry) - 1,
				  fake_now(&d));
		}
		if (send_frame(&d, i) < 0)
			break;
		/* inside, every read that finds nothing more sets EAGAIN */
		errno = 4242;
		UNTIL(seen.frames == i + 1, h, answer, &seen, &d);
		errno_changed += errno != 4242;
	}
	TAP_EQ_U64(seen.frames, FRAMES, "the application saw every frame once");
	TAP_EQ_U64(seen.wrong_bytes + seen.unknown, 0, "with its id, length and bytes");
	TAP_EQ_U64(seen.reentered, 0, "plh_run from inside the callback: -EBUSY");
	TAP_EQ_U64(errno_changed, 0, "errno left alone");
	UNTIL(back.replies == want_replies, h, answer, &seen, &d);
	TAP_EQ_U64(back.replies, want_replies, "every reply the application made reached the device");
	TAP_EQ_U64(back.wrong, 0, "each with its frame's id and the application's bytes");
	TAP_EQ_U64(back.unexpected, 0, "no reply for the frames it did not answer, none twice");
	TAP_OK(back.got[3], "the 200,000-byte reply too");

	UNTIL(lines.n == 3, h, answer, &seen, &d);
	TAP_EQ_U64(lines.n, 3, "telemetry: the three JSON lines, not the blank or the broken one");
	TAP_EQ_U64(lines.bad_len, 0, "each whole and NUL-terminated");
	TAP_OK(lines.saw_sample && lines.saw_latency, "typed lines with their type");
	TAP_OK(lines.saw_hostile && lines.untyped == 1, "a hostile type comes as NULL");

	UNTIL(have_offset(h), h, answer, &seen, &d);
	memset(&st, 0xa5, sizeof(st));
	plh_get_stats(h, &st);
	TAP_OK(st.reserved[0] == 0 && st.reserved[7] == 0, "stats: the reserved room is zeroed");
	TAP_EQ_U64(st.frames, FRAMES, "stats: frames");
	TAP_EQ_U64(st.replies, want_replies, "stats: replies");
	TAP_EQ_U64(st.reply_failures, 1, "stats: the reply longer than the buffer failed");
	TAP_EQ_U64(st.telemetry_lines, 4, "stats: telemetry lines (the blank one aside)");
	TAP_EQ_U64(st.telemetry_bad_lines, 1, "stats: the broken line");
	TAP_OK(st.malformed > 0, "stats: the garbage counted as malformed (%llu)",
	       (unsigned long long)st.malformed);
	TAP_EQ_U64(st.sequence_gaps, 0, "no sequence gap");
	TAP_OK(st.have_clock_offset &&
		       fabs((double)st.clock_offset_ns - (double)OFFSET_NS) <=
			       (double)st.clock_offset_rtt_ns / 2 + 1,
	       "clock offset %lld ns within rtt/2 of %lld", (long long)st.clock_offset_ns,
	       OFFSET_NS);

	/* the device goes away and comes back */
	fake_end(&d);
	UNTIL(!plh_connected(h), h, answer, &seen, (struct fake_device *)NULL);
	TAP_OK(!plh_connected(h), "the drop was noticed");
	memset(&back, 0, sizeof(back));
	memset(&seen, 0, sizeof(seen));
	seen.h = h;
	TAP_OK(connect_host(h, lfd, &d, &seen, &back) == 0, "the host reconnected");
	send_frame(&d, 1);
	UNTIL(back.replies == 1, h, answer, &seen, &d);
	TAP_OK(back.replies == 1 && back.got[1] && back.wrong == 0,
	       "a frame after the reconnect is answered");
	plh_get_stats(h, &st);
	TAP_OK(st.connects == 2 && st.disconnects == 1, "two connects, one disconnect");
	plh_close(h);
	{
		uint64_t until = pl__mono_ns() + DEADLINE_NS;

		while (!d.closed && pl__mono_ns() < until)
			fake_pump(&d, 100);
	}
	TAP_OK(d.closed, "plh_close closed the connection");
	fake_end(&d);
	close(lfd);
}

/* reply_app's 5-byte replies: the frame's length and first byte. */
static void on_app_reply(struct fake_device *d, const struct pl_wire_header *h,
			 const uint8_t *payload)
{
	unsigned *good = d->ctx;
	int i = index_of(h->frame_id);
	uint32_t len;

	if (h->type != PL_MSG_REPLY || i < 0 || i >= APP_FRAMES || h->payload_len != 5)
		return;
	len = (uint32_t)payload[0] | (uint32_t)payload[1] << 8 | (uint32_t)payload[2] << 16 |
	      (uint32_t)payload[3] << 24;
	if (len == frame_len[i] && payload[4] == (len ? frame_byte((unsigned)i, 0) : 0))
		(*good)++;
}

/* host/examples/reply_app as a process against the same device. */
static void run_example(const char *app)
{
	static const char line[] = "{\"type\":\"link_diag\",\"totals\":{\"frames_held\":0}}\n";
	char addr[64], out[] = "/tmp/test_host_lib.XXXXXX", text[1024] = "";
	struct fake_device d;
	int lfd, fd, port = 0, status = -1, ofd;
	unsigned i, good = 0;
	uint64_t until;
	ssize_t n;
	pid_t pid;

	lfd = fake_listen(&port);
	ofd = mkstemp(out);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	pid = fork();
	if (pid == 0) {
		char frames[16];

		snprintf(frames, sizeof(frames), "%d", APP_FRAMES);
		if (dup2(ofd, 1) < 0)
			_exit(127);
		execl(app, "reply_app", "--tcp", addr, "--frames", frames, (char *)NULL);
		_exit(127);
	}
	fd = lfd >= 0 && ofd >= 0 ? fake_accept(lfd, 20000) : -1;
	TAP_OK(fd >= 0 && fake_start(&d, fd, 0, on_app_reply, &good) == 0, "reply_app connected");
	if (fd < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
	fake_send(&d, PL_MSG_TELEMETRY, 0, line, sizeof(line) - 1, fake_now(&d));
	for (i = 0; i < APP_FRAMES; i++) {
		frame_ids[i] = 77 + i;
		frame_len[i] = i * 100 + (i == 2 ? 70000 : 0);
		send_frame(&d, i);
	}
	/* it ends after the last frame: the connection closes */
	until = pl__mono_ns() + DEADLINE_NS;
	while (!d.closed && pl__mono_ns() < until)
		fake_pump(&d, 100);
	TAP_EQ_U64(good, APP_FRAMES, "reply_app: each frame's length and first byte came back");
	for (i = 0; i < 400 && waitpid(pid, &status, WNOHANG) == 0; i++)
		usleep(50000); /* a child's exit has no fd to poll */
	if (i == 400) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	TAP_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "reply_app exited 0 after %d frames",
	       APP_FRAMES);
	n = pread(ofd, text, sizeof(text) - 1, 0);
	if (n > 0)
		text[n] = '\0';
	TAP_OK(strstr(text, "telemetry link_diag") != NULL, "reply_app: the telemetry line");
	TAP_OK(strstr(text, "frames 6 replies 6 reply_failures 0") != NULL, "reply_app: its counters");
	if (tap_failed)
		printf("# reply_app said: %s\n", text);
	fake_end(&d);
	close(lfd);
	close(ofd);
	unlink(out);
}

/* USB with no perflink device on the bus (an id nothing has): looking for
 * it is not an error, and nothing connects. */
static void run_usb_absent(void)
{
	struct plh_options o = { .vid = 0x1d6b, .pid = 0xfff0, .serial = "no-such-device" };
	struct plh_host *h;
	int r = plh_open(&h, &o);

	if (r == -EIO) {
		TAP_SKIP("libusb cannot start here");
		return;
	}
	TAP_OK(r == 0, "USB: plh_open");
	if (r < 0)
		return;
	TAP_EQ_U64(plh_run(h, answer, NULL, 50), 0, "USB, no device: plh_run handles nothing");
	TAP_OK(!plh_connected(h), "USB, no device: not connected");
	plh_close(h);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	run_library();
	run_usb_absent();
	if (argc > 1)
		run_example(argv[1]);
	else
		TAP_SKIP("no reply_app given");
	return tap_done();
}
