/* The link over its TCP port, on a real loopback socket, with this test as
 * the host: frames arrive whole and checked, pings are answered with the
 * device's clock, replies come back as measured round trips (frame_latency
 * telemetry), a host that stops reading makes frames be held (newest wins)
 * and is dropped at the deadline, and a new connection replaces an old one. */
#include "stderr_capture.h"
#include "tap.h"

#include "clock.h"
#include "event_loop.h"
#include "link.h"
#include "wire.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct pl_loop *loop;
static struct pl_link *link_;
static unsigned ups, downs;
static uint64_t replies_seen;

static void on_up(void *ctx, unsigned packet_size)
{
	(void)ctx;
	(void)packet_size;
	ups++;
}

static void on_down(void *ctx, const char *why)
{
	(void)ctx;
	(void)why;
	downs++;
}

static void on_message(void *ctx, const struct pl_wire_header *hdr, const uint8_t *payload)
{
	(void)ctx;
	(void)payload;
	if (hdr->type == PL_MSG_REPLY)
		replies_seen++;
}

static void spin(int ms)
{
	uint64_t end = pl__mono_ns() + (uint64_t)ms * 1000000;

	while (pl__mono_ns() < end)
		pl__loop_run_once(loop, 5);
}

static int host_connect(unsigned port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rcvbuf = 65536;

	/* a host that stops reading fills up at once, whatever the kernel
	 * would otherwise buffer for it: frames are then held, as on a link */
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read until a message of type comes (others are skipped) or ms pass,
 * running the device's loop meanwhile. 1 with the message copied out. */
static int host_read(int fd, struct pl_wire_stream *s, int type, int ms,
		     struct pl_wire_header *hdr, uint8_t *payload, size_t cap)
{
	uint64_t end = pl__mono_ns() + (uint64_t)ms * 1000000;
	uint8_t buf[65536];
	const uint8_t *p;

	while (pl__mono_ns() < end) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t n;

		while (pl__wire_stream_next(s, hdr, &p) == 1) {
			if (hdr->type != type)
				continue;
			memcpy(payload, p, hdr->payload_len < cap ? hdr->payload_len : cap);
			return 1;
		}
		pl__loop_run_once(loop, 1);
		if (poll(&pfd, 1, 1) == 1) {
			n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (n == 0)
				return -EPIPE;
			if (n > 0) {
				size_t off = 0;

				while (off < (size_t)n) {
					off += pl__wire_stream_feed(s, buf + off, (size_t)n - off);
					if (off < (size_t)n && pl__wire_stream_next(s, hdr, &p) == 1 &&
					    hdr->type == type) {
						memcpy(payload, p, hdr->payload_len < cap ? hdr->payload_len : cap);
						return 1;
					}
				}
			}
		}
	}
	return 0;
}

static void host_send(int fd, uint64_t *seq, int type, uint64_t frame_id, uint64_t time_ns,
		      const void *payload, uint32_t len)
{
	uint8_t msg[4096] = { 0 };
	struct pl_wire_header h = { .type = (uint8_t)type, .payload_len = len, .sequence = (*seq)++,
				    .send_time_ns = time_ns, .frame_id = frame_id };

	pl__wire_encode_header(msg, &h, payload);
	if (len)
		memcpy(msg + PL_WIRE_HEADER_SIZE, payload, len);
	send(fd, msg, pl__wire_message_size(len, 64), MSG_NOSIGNAL);
}

int main(void)
{
	static const struct pl_link_handlers h = {
		.up = on_up,
		.down = on_down,
		.message = on_message,
	};
	static uint8_t frame[300000], got[300000];
	struct pl_link_config cfg;
	struct pl_link_stats st;
	struct pl_wire_stream s;
	struct pl_wire_header hdr;
	uint64_t seq = 0, t0;
	unsigned port;
	int fd, fd2, ret;

	if (pl__loop_new(&loop) < 0 || pl__wire_stream_init(&s, 64, 1u << 20) < 0)
		return 1;
	pl__link_config_default(&cfg);
	cfg.tcp_listen = "bad-address-without-port";
	TAP_OK(pl__link_open(&link_, &cfg, loop, &h, NULL) == -EINVAL, "a tcp address without a port is refused");
	cfg.tcp_listen = "127.0.0.1:0";
	cfg.deadline_ns = 300000000ull;
	cfg.budget_bytes = 512 * 1024;
	ret = pl__link_open(&link_, &cfg, loop, &h, NULL);
	TAP_OK(ret == 0, "link listens on tcp (%d)", ret);
	if (ret)
		return tap_done();
	port = pl__link_tcp_port(link_);
	TAP_OK(port > 0, "on an ephemeral port (%u)", port);
	TAP_OK(pl__link_send_frame(link_, 1, 0, "x", 1) == -ENOTCONN, "no host yet: -ENOTCONN");

	fd = host_connect(port);
	spin(50);
	TAP_OK(ups == 1 && pl__link_is_up(link_), "the host connected: link up");
	/* the session's first message: the device's HELLO (docs/wire.md) */
	ret = host_read(fd, &s, PL_MSG_HELLO, 2000, &hdr, got, sizeof(got) - 1);
	got[ret == 1 ? hdr.payload_len : 0] = '\0';
	TAP_OK(ret == 1 && hdr.sequence == 0 && strstr((char *)got, "\"type\":\"hello\"") &&
		       strstr((char *)got, "\"wire_version\":1") &&
		       strstr((char *)got, "\"program\":\"perflinkd\"") &&
		       strstr((char *)got, "\"packet_size\":64") &&
		       strstr((char *)got, "\"max_host_payload\":4194304") &&
		       strstr((char *)got, "\"deadline_ms\":300") &&
		       strstr((char *)got, "\"commands\":[\"ping\",\"link_diag\",\"end_of_stream\"]"),
	       "the first message is the device's HELLO, sequence 0: %.300s", (char *)got);

	for (size_t i = 0; i < sizeof(frame); i++)
		frame[i] = (uint8_t)(i * 13 + 5);
	TAP_OK(pl__link_send_frame(link_, 77, 0, frame, sizeof(frame)) == 0, "a 300 KB frame sent");
	ret = host_read(fd, &s, PL_MSG_FRAME, 2000, &hdr, got, sizeof(got));
	TAP_OK(ret == 1 && hdr.frame_id == 77 && hdr.payload_len == sizeof(frame) &&
		       !memcmp(got, frame, sizeof(frame)),
	       "the host got it whole, checked by the wire stream (ret %d)", ret);

	/* Clock offset: the device answers with the ping's time and its own. */
	t0 = pl__mono_ns();
	host_send(fd, &seq, PL_MSG_PING, 0, 123456789, NULL, 0);
	ret = host_read(fd, &s, PL_MSG_PONG, 2000, &hdr, got, 16);
	{
		uint64_t a, b;

		memcpy(&a, got, 8);
		memcpy(&b, got + 8, 8);
		a = le64toh(a);
		b = le64toh(b);
		TAP_OK(ret == 1 && hdr.payload_len == 16 && a == 123456789 && b >= t0 &&
			       b <= pl__mono_ns(),
		       "PONG carries the ping's time and the device's receive time");
	}

	/* The reply's round trip is measured on the device and reported. */
	host_send(fd, &seq, PL_MSG_REPLY, 77, pl__mono_ns(), "ok", 2);
	ret = host_read(fd, &s, PL_MSG_TELEMETRY, 2000, &hdr, got, sizeof(got) - 1);
	got[ret == 1 ? hdr.payload_len : 0] = '\0';
	TAP_OK(ret == 1 && strstr((char *)got, "\"type\":\"frame_latency\"") &&
		       strstr((char *)got, "[[\"77\","),
	       "frame_latency telemetry names the frame: %.120s", (char *)got);
	TAP_EQ_U64(replies_seen, 1, "the reply also reached the link's owner");
	/* a second reply to it, and one to a frame never sent: dropped */
	host_send(fd, &seq, PL_MSG_REPLY, 77, pl__mono_ns(), "again", 5);
	host_send(fd, &seq, PL_MSG_REPLY, 4242, pl__mono_ns(), "forged", 6);
	host_send(fd, &seq, PL_MSG_PING, 0, 1, NULL, 0);
	ret = host_read(fd, &s, PL_MSG_PONG, 2000, &hdr, got, 16);
	pl__link_get_stats(link_, &st);
	TAP_OK(ret == 1 && replies_seen == 1 && st.replies_repeated == 1 &&
		       st.replies_never_sent == 1,
	       "a second reply and a reply to a frame never sent are dropped and counted "
	       "(seen %llu, repeated %llu, never sent %llu)",
	       (unsigned long long)replies_seen, (unsigned long long)st.replies_repeated,
	       (unsigned long long)st.replies_never_sent);
	pl__link_get_stats(link_, &st);
	TAP_OK(st.replies_matched == 1 && st.last_rtt_ns > 0 && st.pings == 2,
	       "stats: one reply matched, two pings");

	/* The host stops reading: frames are held, newest wins, then the
	 * deadline drops the connection. */
	{
		int held = 0, replaced = 0;

		for (int i = 0; i < 40; i++) {
			ret = pl__link_send_frame(link_, 100 + (uint64_t)i, 0, frame, sizeof(frame));
			held += ret == 1;
			replaced += ret == 2;
			spin(5);
		}
		TAP_OK(held >= 1 && replaced >= 1, "a host that reads nothing: frames held (%d) and "
		       "replaced (%d)", held, replaced);
	}
	/* the deadline (300 ms) counts from the last byte the host's TCP took:
	 * on a loaded machine that can come late, so wait for it a while */
	for (int i = 0; i < 60; i++) {
		spin(50);
		pl__link_get_stats(link_, &st);
		if (st.rearms)
			break;
	}
	spin(50);
	pl__link_get_stats(link_, &st);
	TAP_OK(st.rearms == 1 && downs == 1 && !pl__link_is_up(link_),
	       "the deadline dropped the connection (rearms %llu; held now %d, %llu bytes "
	       "sent, %llu frames)", (unsigned long long)st.rearms, st.frames_held_now,
	       (unsigned long long)st.tx.bytes, (unsigned long long)st.frames_sent);
	close(fd);

	/* A new host connection: it gets the frame held when the last one went
	 * away (the newest, 139), right after its HELLO; then another replaces
	 * it. */
	fd = host_connect(port);
	spin(50);
	TAP_OK(ups == 2, "a host can connect again");
	pl__wire_stream_free(&s);
	pl__wire_stream_init(&s, 64, 1u << 20);
	ret = host_read(fd, &s, PL_MSG_FRAME, 2000, &hdr, got, sizeof(got));
	pl__link_get_stats(link_, &st);
	TAP_OK(ret == 1 && hdr.frame_id == 139 && hdr.sequence == 1,
	       "the frame held when the host went away goes to the next one, not lost (frame %llu)",
	       (unsigned long long)hdr.frame_id);
	TAP_OK(st.frames_lost >= 1 && st.frames_lost <= 40 - 1,
	       "the frames sent to the dropped host and never taken are counted lost (%llu)",
	       (unsigned long long)st.frames_lost);
	fd2 = host_connect(port);
	spin(50);
	TAP_OK(ups == 3 && downs == 2, "a new connection replaces the current one");
	/* The replaced host answers on: its connection drains, and its three
	 * replies (after a frame it had half sent, and around garbage) are
	 * read, thrown away and counted, none taken for the new host's. */
	{
		uint64_t old_seq = 0, before = replies_seen;
		static const char junk[100] = "not a message";

		host_send(fd, &old_seq, PL_MSG_REPLY, 138, 1, "late", 4);
		send(fd, junk, sizeof(junk), MSG_NOSIGNAL);
		host_send(fd, &old_seq, PL_MSG_PING, 0, 2, NULL, 0);
		host_send(fd, &old_seq, PL_MSG_REPLY, 139, 3, frame, 3000);
		host_send(fd, &old_seq, PL_MSG_REPLY, 139, 4, "again", 5);
		spin(100);
		pl__link_get_stats(link_, &st);
		TAP_OK(st.rx.replies_discarded == 3 && replies_seen == before,
		       "replies on the dropped connection are counted discarded (%llu), not passed on",
		       (unsigned long long)st.rx.replies_discarded);
	}
	pl__wire_stream_free(&s);
	pl__wire_stream_init(&s, 64, 1u << 20);
	TAP_OK(pl__link_send_frame(link_, 200, 0, frame, 1000) == 0, "frame to the new host");
	ret = host_read(fd2, &s, PL_MSG_FRAME, 2000, &hdr, got, sizeof(got));
	TAP_OK(ret == 1 && hdr.frame_id == 200 && hdr.sequence == 1,
	       "the new connection gets it, sequence 1: its HELLO was 0");
	/* Garbage from the host is counted, not fatal. */
	send(fd2, "garbage garbage garbage garbage garbage garbage garbage garbage!", 64, MSG_NOSIGNAL);
	host_send(fd2, &seq, PL_MSG_PING, 0, 5, NULL, 0);
	ret = host_read(fd2, &s, PL_MSG_PONG, 2000, &hdr, got, 16);
	pl__link_get_stats(link_, &st);
	TAP_OK(ret == 1 && st.rx_skipped_bytes >= 64, "after garbage (%llu bytes skipped) the "
	       "next ping is still answered", (unsigned long long)st.rx_skipped_bytes);
	close(fd);
	close(fd2);

	/* A host that connects in a loop (a fuzzer, a port scanner): every
	 * connection is still served, but the log says so once a second. */
	{
		struct stderr_capture cap;
		const char *said;
		unsigned before = ups;
		int lines;

		capture_begin(&cap);
		for (int i = 0; i < 200; i++) {
			int c = host_connect(port);

			spin(2);
			if (c >= 0)
				close(c);
		}
		spin(20);
		said = capture_end(&cap);
		lines = count_of(said, "\n");
		TAP_OK(ups - before >= 150, "200 connections in a row: served (%u)", ups - before);
		TAP_OK(lines <= 12, "and logged in %d lines, not 4 a connection", lines);
	}
	pl__link_close(link_);
	pl__wire_stream_free(&s);
	pl__loop_free(loop);
	return tap_done();
}
