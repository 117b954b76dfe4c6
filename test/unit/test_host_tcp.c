/* perflink-host over TCP, end to end: this program plays the device. It
 * listens on 127.0.0.1, speaks the wire itself (HELLO, FRAMEs, PONGs to the
 * host's PINGs, TELEMETRY with frame_latency, link_diag and hostile lines)
 * with a device clock that runs a known amount ahead of the host's, drops
 * the connection once, and checks what the real perflink-host binary
 * replied and wrote (summary.json, frames.csv, telemetry files).
 * A second run starts the host before anything listens (refused, retried)
 * and stops it with SIGTERM: the files must still be written. The device
 * side is test/unit/fake_device.h. */
#include "clock.h"
#include "fake_device.h"
#include "json_reader.h"
#include "json_find.h"
#include "read_file.h"
#include "tap.h"
#include "wire.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define OFFSET_NS 3000012345ll /* the "device" clock reads this much more */
#define FRAMES_1 20
#define FRAMES_2 30
#define FRAMES (FRAMES_1 + FRAMES_2)
#define HELD 4
#define DEADLINE_MS 20000

static const char *host_bin;
static char dir[64];

#define BIG_FRAMES 60
#define BIG_BYTES 1000000

static uint64_t send_dev[BIG_FRAMES], reply_dev[BIG_FRAMES];
static uint32_t frame_bytes[BIG_FRAMES];
static bool replied[BIG_FRAMES];

static uint64_t dev_now(void)
{
	return pl__mono_ns() + (uint64_t)OFFSET_NS;
}

static uint8_t payload_byte(uint64_t frame, size_t k)
{
	return (uint8_t)(frame * 31 + k * 7);
}

static void on_host_message(struct fake_device *c, const struct pl_wire_header *h,
			    const uint8_t *payload)
{
	uint64_t f = h->frame_id, now = fake_now(c);
	size_t k;
	bool same;

	if (h->type != PL_MSG_REPLY)
		return;
	same = f < BIG_FRAMES && h->payload_len == frame_bytes[f] && !replied[f];
	for (k = 0; same && k < h->payload_len; k++)
		same = payload[k] == payload_byte(f, k);
	if (!same) {
		c->bad_replies++;
		return;
	}
	replied[f] = true;
	reply_dev[f] = now;
	c->replies++;
}

static int start_device(struct fake_device *c, int fd)
{
	return fake_start(c, fd, OFFSET_NS, on_host_message, NULL);
}

static int send_frames(struct fake_device *c, uint64_t from, uint64_t to)
{
	uint8_t data[4096];
	uint64_t f;
	size_t k;

	for (f = from; f < to; f++) {
		frame_bytes[f] = (uint32_t)(100 + f * 53);
		for (k = 0; k < frame_bytes[f]; k++)
			data[k] = payload_byte(f, k);
		send_dev[f] = dev_now();
		if (fake_send(c, PL_MSG_FRAME, f, data, frame_bytes[f], send_dev[f]) < 0)
			return -1;
	}
	return 0;
}

/* Until every frame in [from, to) was answered (or the deadline). */
static bool wait_replies(struct fake_device *c, uint64_t from, uint64_t to)
{
	uint64_t until = pl__mono_ns() + DEADLINE_MS * 1000000ull, f;

	for (;;) {
		for (f = from; f < to && replied[f]; f++)
			;
		if (f == to)
			return true;
		if (c->closed || pl__mono_ns() > until)
			return false;
		fake_pump(c, 100);
	}
}

static int send_latency(struct fake_device *c, uint64_t from, uint64_t to, const char *extra)
{
	char text[8192];
	size_t len = 0;
	uint64_t f;

	len += (size_t)snprintf(text + len, sizeof(text) - len, "{\"type\":\"frame_latency\",\"frames\":[");
	for (f = from; f < to; f++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s[%llu,%llu,%llu]",
					f == from ? "" : ",", (unsigned long long)f,
					(unsigned long long)send_dev[f], (unsigned long long)reply_dev[f]);
	len += (size_t)snprintf(text + len, sizeof(text) - len, "],\"dropped\":0}\n%s", extra);
	return fake_send(c, PL_MSG_TELEMETRY, 0, text, (uint32_t)len, dev_now());
}

static pid_t start_host(const char *addr, const char *out, const char *log, const char *mode)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		execl(host_bin, "perflink-host", "--tcp", addr, "--out", out, "--reply", mode,
		      "--seconds", "60", (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int wait_host(pid_t pid, int timeout_ms)
{
	int status, i;

	for (i = 0; i < timeout_ms / 10; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		usleep(10000); /* a child's exit has no fd to poll */
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	while (hay && (hay = strstr(hay, needle))) {
		n++;
		hay++;
	}
	return n;
}

static double json_num(const char *doc, const char *path)
{
	struct json_found f = json_find(doc, path);

	return f.hits == 1 ? strtod(f.value, NULL) : NAN;
}

static void check_csv(const char *path)
{
	char *text = test_read_file(path), *line, *save = NULL;
	int rows = 0, good = 0, one_way_sane = 0;

	TAP_OK(text != NULL, "frames.csv written");
	if (!text)
		return;
	line = strtok_r(text, "\n", &save);
	TAP_EQ_STR(line, "frame_id,sequence,bytes,device_send_ns,host_recv_device_ns,one_way_ms,"
			 "round_trip_ms", "frames.csv header");
	while ((line = strtok_r(NULL, "\n", &save))) {
		unsigned long long id, seq, send, recv;
		unsigned bytes;
		double one_way, rtt;

		rows++;
		if (sscanf(line, "%llu,%llu,%u,%llu,%llu,%lf,%lf", &id, &seq, &bytes, &send, &recv,
			   &one_way, &rtt) != 7 || id >= FRAMES)
			continue;
		if (bytes == frame_bytes[id] && send == send_dev[id] &&
		    fabs(rtt - (double)(reply_dev[id] - send_dev[id]) / 1e6) < 1e-5)
			good++;
		/* The host had the frame after it was sent and before the
		 * device had the reply, give or take the error of the offset
		 * known when it arrived: at most half the round trip of that
		 * ping, which this program cannot see (only the final one).
		 * A loopback ping takes far less than 100 ms even on a busy
		 * machine; a missing or inverted offset is 3000 ms off. */
		if (one_way >= -50 && one_way <= rtt + 50 &&
		    fabs((double)(long long)(recv - send) / 1e6 - one_way) < 1e-5)
			one_way_sane++;
	}
	TAP_EQ_U64(rows, FRAMES, "one row per frame");
	TAP_EQ_U64(good, FRAMES, "id, bytes, device send time and the device's round trip per row");
	TAP_EQ_U64(one_way_sane, FRAMES, "one-way latency between 0 and the round trip, within the offset's error");
	free(text);
}

static void run_full(void)
{
	char addr[64], log[128], path[128];
	int lfd, fd, port = 0, rc;
	struct fake_device c;
	uint64_t max_rtt = 0, f, gone_ns;
	pid_t pid;
	char *summary, *host_log, *text;
	double offset, offset_rtt;

	lfd = fake_listen(&port);
	TAP_OK(lfd >= 0, "listening on 127.0.0.1:%d", port);
	if (lfd < 0)
		return;
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	snprintf(log, sizeof(log), "%s/host.log", dir);
	snprintf(path, sizeof(path), "%s/out", dir);
	pid = start_host(addr, path, log, "echo");

	/* session 1: frames, replies, round trips, then the device goes away */
	fd = fake_accept(lfd, DEADLINE_MS);
	TAP_OK(fd >= 0 && start_device(&c, fd) == 0, "the host connected");
	if (fd < 0)
		goto out;
	TAP_OK(send_frames(&c, 0, FRAMES_1) == 0, "session 1: %d frames sent", FRAMES_1);
	TAP_OK(wait_replies(&c, 0, FRAMES_1), "session 1: every frame echoed");
	send_latency(&c, 0, FRAMES_1, "");
	fake_pump(&c, 50);
	fake_end(&c);
	gone_ns = pl__mono_ns();

	/* session 2: the host comes back by itself */
	fd = fake_accept(lfd, DEADLINE_MS);
	TAP_OK(fd >= 0 && start_device(&c, fd) == 0, "the host reconnected after the drop");
	if (fd < 0)
		goto out;
	TAP_OK(pl__mono_ns() - gone_ns < 5000000000ull, "within a few retries (%.2f s)",
	       (double)(pl__mono_ns() - gone_ns) / 1e9);
	send_frames(&c, FRAMES_1, FRAMES);
	TAP_OK(wait_replies(&c, FRAMES_1, FRAMES), "session 2: every frame echoed");
	TAP_EQ_U64(c.bad_replies, 0, "no reply differed from its frame");
	/* a ping arrives at connection; wait for one in this session */
	{
		uint64_t until = pl__mono_ns() + DEADLINE_MS * 1000000ull;

		while (!c.pongs && !c.closed && pl__mono_ns() < until)
			fake_pump(&c, 100);
	}
	TAP_OK(c.pongs > 0, "the host pinged and got pongs");
	send_latency(&c, FRAMES_1, FRAMES,
		     "{\"type\":\"link_diag\",\"last_send\":{\"bytes\":1234,\"submit_us\":5.5},"
		     "\"totals\":{\"frames_sent\":50,\"frames_held\":4}}\n"
		     "{\"type\":\"sample\",\"pid\":1}\n{\"type\":\"../../escape\"}\n{broken\n");
	{
		static const char end[] = "{\"event\":\"stream_end\",\"frames\":50,\"unconfirmed\":0}";

		fake_send(&c, PL_MSG_TELEMETRY, 0, end, sizeof(end) - 1, dev_now());
	}
	/* the stream ended: the host writes its files and closes */
	{
		uint64_t until = pl__mono_ns() + DEADLINE_MS * 1000000ull;

		while (!c.closed && pl__mono_ns() < until)
			fake_pump(&c, 100);
	}
	fake_end(&c);
out:
	rc = wait_host(pid, DEADLINE_MS);
	TAP_EQ_U64(rc, 0, "perflink-host exited 0");
	close(lfd);
	host_log = test_read_file(log);
	TAP_EQ_U64(count(host_log, "lost"), 1, "the drop was reported once");
	TAP_EQ_U64(count(host_log, "connected to"), 2, "each connection once");
	if (rc != 0 && host_log)
		printf("# host log:\n# %s\n", host_log);
	free(host_log);

	for (f = 0; f < FRAMES; f++)
		if (reply_dev[f] - send_dev[f] > max_rtt)
			max_rtt = reply_dev[f] - send_dev[f];
	snprintf(path, sizeof(path), "%s/out/summary.json", dir);
	summary = test_read_file(path);
	TAP_OK(summary && json_find(summary, "frames").hits == 1, "summary.json written and valid");
	TAP_OK(json_num(summary, "frames") == FRAMES, "frames %s", json_find(summary, "frames").value);
	TAP_EQ_STR(json_find(summary, "latency_source").value, "device_round_trip",
		   "latency from the device's round trips");
	TAP_OK(json_num(summary, "latency_frames") == FRAMES, "for every frame");
	TAP_OK(fabs(json_num(summary, "max_ms") - (double)max_rtt / 1e6) < 0.0011,
	       "max_ms is the largest round trip the device reported (%s vs %.4f)",
	       json_find(summary, "max_ms").value, (double)max_rtt / 1e6);
	TAP_OK(json_num(summary, "p50_ms") <= json_num(summary, "p99_ms") &&
		       json_num(summary, "p99_ms") <= json_num(summary, "p999_ms") &&
		       json_num(summary, "p999_ms") <= json_num(summary, "max_ms"),
	       "p50 <= p99 <= p99.9 <= max");
	TAP_OK(json_num(summary, "held_frames") == HELD, "held_frames from the device's link_diag");
	TAP_OK(json_num(summary, "device_send.totals.frames_sent") == 50 &&
		       json_num(summary, "device_send.last_send.submit_us") == 5.5,
	       "the device's last_send and totals copied");
	{
		uint64_t bytes = 0;

		for (f = 0; f < FRAMES; f++)
			bytes += frame_bytes[f];
		TAP_OK(json_num(summary, "bytes") == (double)bytes, "bytes");
	}
	offset = json_num(summary, "clock_offset_ns");
	offset_rtt = json_num(summary, "clock_offset_rtt_ns");
	TAP_OK(!isnan(offset) && fabs(offset - (double)OFFSET_NS) <= offset_rtt / 2 + 1,
	       "clock offset %.0f ns within rtt/2 (%.0f ns) of the true %lld", offset, offset_rtt / 2,
	       OFFSET_NS);
	TAP_OK(json_num(summary, "connects") == 2, "two connections counted");
	TAP_OK(json_num(summary, "replies") == FRAMES, "replies");
	TAP_OK(json_num(summary, "sequence_gaps") == 0, "no sequence gap across the reconnect");
	TAP_OK(json_num(summary, "malformed.telemetry.bad_json") == 1 &&
		       json_num(summary, "malformed.telemetry.bad_type") == 1,
	       "the broken line and the hostile type counted");
	TAP_OK(json_num(summary, "mbps") > 0, "a throughput");
	free(summary);

	snprintf(path, sizeof(path), "%s/out/frames.csv", dir);
	check_csv(path);

	snprintf(path, sizeof(path), "%s/out/telemetry/link_diag.jsonl", dir);
	text = test_read_file(path);
	TAP_OK(count(text, "\"frames_held\":4") == 1, "telemetry/link_diag.jsonl");
	free(text);
	snprintf(path, sizeof(path), "%s/out/telemetry/resources.jsonl", dir);
	text = test_read_file(path);
	TAP_OK(count(text, "\"sample\"") == 1, "telemetry/resources.jsonl");
	free(text);
	snprintf(path, sizeof(path), "%s/out/telemetry/other.jsonl", dir);
	text = test_read_file(path);
	TAP_OK(count(text, "escape") == 1 && count(text, "stream_end") == 1,
	       "telemetry/other.jsonl: the hostile type and the untyped line");
	free(text);
	snprintf(path, sizeof(path), "%s/out/telemetry/frame_latency.jsonl", dir);
	TAP_OK(access(path, F_OK) != 0, "no file for frame_latency");
}

/* Refused at first, retried, then stopped by SIGTERM. */
static void run_refused_then_term(void)
{
	char addr[64], log[128], out[128], path[160];
	int lfd, fd, port = 0, rc, i;
	struct fake_device c;
	pid_t pid;
	char *text = NULL, *summary;

	/* a free port: bind, learn it, close; nothing listens there now */
	lfd = fake_listen(&port);
	close(lfd);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	snprintf(log, sizeof(log), "%s/host2.log", dir);
	snprintf(out, sizeof(out), "%s/out2", dir);
	memset(replied, 0, sizeof(replied));
	pid = start_host(addr, out, log, "echo");
	for (i = 0; i < DEADLINE_MS / 50; i++) {
		free(text);
		text = test_read_file(log);
		if (count(text, "cannot connect"))
			break;
		usleep(50000); /* a log file has no event to wait for */
	}
	TAP_OK(count(text, "cannot connect") == 1, "refused: said so");
	free(text);
	usleep(1600000); /* three more retries happen now, silently */
	lfd = fake_listen(&port);
	TAP_OK(lfd >= 0, "listening on the port now");
	fd = lfd >= 0 ? fake_accept(lfd, DEADLINE_MS) : -1;
	TAP_OK(fd >= 0 && start_device(&c, fd) == 0, "the host connected once something listened");
	if (fd >= 0) {
		send_frames(&c, 0, 5);
		TAP_OK(wait_replies(&c, 0, 5), "5 frames echoed");
	}
	kill(pid, SIGTERM);
	rc = wait_host(pid, DEADLINE_MS);
	TAP_OK(rc == 0, "SIGTERM: the host ended cleanly (%d)", rc);
	if (fd >= 0)
		fake_end(&c);
	if (lfd >= 0)
		close(lfd);
	text = test_read_file(log);
	TAP_EQ_U64(count(text, "cannot connect"), 1, "the refusals were reported once, not per retry");
	free(text);
	snprintf(path, sizeof(path), "%s/summary.json", out);
	summary = test_read_file(path);
	TAP_OK(json_num(summary, "frames") == 5, "SIGTERM: summary.json written with the 5 frames");
	TAP_EQ_STR(json_find(summary, "latency_source").value, "one_way",
		   "without the device's round trips the latency is one way");
	free(summary);
	snprintf(path, sizeof(path), "%s/frames.csv", out);
	text = test_read_file(path);
	TAP_EQ_U64(count(text, "\n"), 6, "SIGTERM: frames.csv written");
	free(text);
}

/* A device that does not read while it sends 60 MB: the host buffers its
 * echoes up to its limit, drops whole replies beyond it (counted), and
 * every reply that arrives is intact. */
static void run_backpressure(void)
{
	static const char end[] = "{\"event\":\"stream_end\",\"frames\":60,\"unconfirmed\":0}";
	char addr[64], log[128], out[128], path[160];
	int lfd, fd, port = 0, rc;
	struct fake_device c;
	uint8_t *data = malloc(BIG_BYTES);
	uint64_t f, until;
	size_t k;
	pid_t pid;
	char *summary;

	lfd = fake_listen(&port);
	/* A fixed receive buffer (inherited by the accepted socket, and it
	 * turns autotuning off): where tcp_rmem's maximum is 32 MB, as here,
	 * the kernel could otherwise hold enough of the echoes that the host's
	 * 32 MB limit was never reached (seen once: reply_drops 0). */
	if (lfd >= 0) {
		int rcvbuf = 256 * 1024;

		setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	}
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	snprintf(log, sizeof(log), "%s/host3.log", dir);
	snprintf(out, sizeof(out), "%s/out3", dir);
	memset(replied, 0, sizeof(replied));
	pid = start_host(addr, out, log, "echo");
	fd = lfd >= 0 ? fake_accept(lfd, DEADLINE_MS) : -1;
	TAP_OK(data && fd >= 0 && start_device(&c, fd) == 0, "backpressure: connected");
	if (!data || fd < 0)
		goto out;
	for (f = 0; f < BIG_FRAMES; f++) {
		frame_bytes[f] = BIG_BYTES;
		for (k = 0; k < BIG_BYTES; k++)
			data[k] = payload_byte(f, k);
		send_dev[f] = dev_now();
		if (fake_send(&c, PL_MSG_FRAME, f, data, BIG_BYTES, send_dev[f]) < 0)
			break;
	}
	TAP_EQ_U64(f, BIG_FRAMES, "60 MB of frames went out while nothing was read");
	fake_send(&c, PL_MSG_TELEMETRY, 0, end, sizeof(end) - 1, dev_now());
	until = pl__mono_ns() + DEADLINE_MS * 1000000ull;
	while (!c.closed && pl__mono_ns() < until)
		fake_pump(&c, 100);
	fake_end(&c);
out:
	rc = wait_host(pid, DEADLINE_MS);
	TAP_EQ_U64(rc, 0, "backpressure: the host exited 0");
	if (lfd >= 0)
		close(lfd);
	snprintf(path, sizeof(path), "%s/summary.json", out);
	summary = test_read_file(path);
	TAP_EQ_U64(c.bad_replies, 0, "every reply that arrived is its frame's echo");
	TAP_OK(json_num(summary, "reply_drops") > 0, "replies beyond the buffer were dropped (%s)",
	       json_find(summary, "reply_drops").value);
	TAP_OK(json_num(summary, "replies") == (double)c.replies,
	       "the host's replies (%s) all arrived (%llu)", json_find(summary, "replies").value,
	       (unsigned long long)c.replies);
	TAP_OK(json_num(summary, "replies") + json_num(summary, "reply_drops") == BIG_FRAMES,
	       "replies + drops = frames");
	free(summary);
	free(data);
}

int main(int argc, char **argv)
{
	char cmd[128];

	if (argc < 2) {
		printf("usage: test_host_tcp PERFLINK-HOST\n");
		return 2;
	}
	host_bin = argv[1];
	snprintf(dir, sizeof(dir), "/tmp/test_host_tcp.XXXXXX");
	if (!mkdtemp(dir)) {
		TAP_OK(0, "mkdtemp");
		return tap_done();
	}
	signal(SIGPIPE, SIG_IGN);
	run_full();
	run_refused_then_term();
	run_backpressure();
	if (!tap_failed) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
	} else {
		printf("# files kept in %s\n", dir);
	}
	return tap_done();
}
