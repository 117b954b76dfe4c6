/* The TCP link's authentication (docs/wire.md, "TCP authentication"), on a
 * real loopback socket. This test is the host, and it speaks the handshake
 * as the document says, with OpenSSL's HMAC directly (not common/auth/):
 * - the MACs are HMAC-SHA256 over label, Nd, Nh (a known answer, computed
 *   with Python's hmac module);
 * - the key file is refused when it is a link, a FIFO, too short, or
 *   readable by others;
 * - without a key the port listens on loopback only, and refuses to be put
 *   on another address;
 * - with a key, a connection that is silent, answers wrongly or has the
 *   wrong key never becomes the host: it gets nothing but the challenge,
 *   does not displace the host there, and is counted by its reason;
 * - one that proves the key gets the device's proof (which this test checks)
 *   and then the stream; the PLAUTH01 handshake, then frames.
 * - a flood of silent connections is bounded: the oldest is closed. */
#include "tap.h"
#include "../conformance/doc_auth.h"

#include "clock.h"
#include "event_loop.h"
#include "link.h"
#include "link_auth.h"
#include "wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static struct pl_loop *loop;
static unsigned ups, downs;

static void on_up(void *ctx, unsigned packet_size)
{
	(void)ctx, (void)packet_size;
	ups++;
}

static void on_down(void *ctx, const char *why)
{
	(void)ctx, (void)why;
	downs++;
}

static void on_message(void *ctx, const struct pl_wire_header *hdr, const uint8_t *payload)
{
	(void)ctx, (void)hdr, (void)payload;
}

static void spin(int ms)
{
	uint64_t end = pl__mono_ns() + (uint64_t)ms * 1000000;

	while (pl__mono_ns() < end)
		pl__loop_run_once(loop, 5);
}

static int connect_to(uint32_t addr, unsigned port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				   .sin_addr.s_addr = addr };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read exactly len bytes within ms, running the device's loop meanwhile:
 * len, fewer when the device closed or time ran out. */
static size_t read_exact(int fd, uint8_t *buf, size_t len, int ms)
{
	uint64_t end = pl__mono_ns() + (uint64_t)ms * 1000000;
	size_t got = 0;

	while (got < len && pl__mono_ns() < end) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t n;

		pl__loop_run_once(loop, 1);
		if (poll(&pfd, 1, 1) != 1)
			continue;
		n = recv(fd, buf + got, len - got, MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n > 0)
			got += (size_t)n;
	}
	return got;
}

/* Has the device closed fd (within ms)? */
static bool closed_by_device(int fd, int ms)
{
	uint64_t end = pl__mono_ns() + (uint64_t)ms * 1000000;
	uint8_t b[256];

	while (pl__mono_ns() < end) {
		ssize_t n;

		pl__loop_run_once(loop, 2);
		n = recv(fd, b, sizeof(b), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN))
			return true;
	}
	return false;
}

static const uint8_t test_key[24] = "a pre-shared test key!!";

/* Connect and do the host's half of the handshake with key. The fd, or -1
 * with *why set. proof_ok: the device's proof checked. */
static int host_handshake(unsigned port, const uint8_t *key, size_t key_len, bool *proof_ok)
{
	uint8_t challenge[40], response[72], proof[32], want[32];
	int fd = connect_to(htonl(INADDR_LOOPBACK), port);

	*proof_ok = false;
	if (fd < 0 || read_exact(fd, challenge, 40, 2000) != 40 || memcmp(challenge, "PLAUTH01", 8)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	memcpy(response, "PLAUTH01", 8);
	for (int i = 0; i < 32; i++)
		response[8 + i] = (uint8_t)(rand() & 0xff);
	doc_auth_mac(key, key_len, "perflink-host-auth", challenge + 8, response + 8, response + 40);
	send(fd, response, sizeof(response), MSG_NOSIGNAL);
	if (read_exact(fd, proof, 32, 2000) == 32) {
		doc_auth_mac(key, key_len, "perflink-device-auth", challenge + 8, response + 8, want);
		*proof_ok = !memcmp(proof, want, 32);
	}
	return fd;
}

static int write_key(const char *path, const void *bytes, size_t len, mode_t mode)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, bytes, len) != (ssize_t)len)
		return -1;
	fchmod(fd, mode);
	return close(fd);
}

/* An IPv4 address of this machine that is not loopback, or 0. */
static uint32_t other_address(void)
{
	struct ifaddrs *ifs, *i;
	uint32_t a = 0;

	if (getifaddrs(&ifs) < 0)
		return 0;
	for (i = ifs; i && !a; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET) {
			uint32_t v = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;

			if ((ntohl(v) >> 24) != 127)
				a = v;
		}
	freeifaddrs(ifs);
	return a;
}

static void test_known_answer(void)
{
	struct pl_link_key key = { .len = 32 };
	uint8_t nd[32], nh[32], mac[32];
	char hex[65];

	for (int i = 0; i < 32; i++) {
		key.bytes[i] = (uint8_t)i;
		nd[i] = (uint8_t)(0xd0 + i % 16);
		nh[i] = (uint8_t)(0x40 + i);
	}
	pl__link_auth_mac(&key, PL_AUTH_HOST, nd, nh, mac);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", mac[i]);
	TAP_EQ_STR(hex, "97c4b0b6e6d945d61f2aa55a616e6a4ce52e3cc0006a2de246e81a2f37375626",
		   "the host's MAC is HMAC-SHA256(K, \"perflink-host-auth\" Nd Nh)");
	pl__link_auth_mac(&key, PL_AUTH_DEVICE, nd, nh, mac);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", mac[i]);
	TAP_EQ_STR(hex, "77ba50cbae699f833548ef388a6f0cf7aea91bde373f8624108c1b195520f501",
		   "the device's is HMAC-SHA256(K, \"perflink-device-auth\" Nd Nh)");
}

static void test_key_files(const char *dir)
{
	struct pl_link_key key;
	char path[300], link_path[300], why[512];

	snprintf(path, sizeof(path), "%s/key", dir);
	snprintf(link_path, sizeof(link_path), "%s/key-link", dir);
	write_key(path, test_key, sizeof(test_key), 0600);
	TAP_OK(pl__link_key_load(&key, path, why, sizeof(why)) == 0 && key.len == sizeof(test_key) &&
		       !memcmp(key.bytes, test_key, sizeof(test_key)),
	       "a 0600 key file loads, its bytes exactly");
	symlink(path, link_path);
	TAP_OK(pl__link_key_load(&key, link_path, why, sizeof(why)) < 0 && strstr(why, "symbolic"),
	       "a symbolic link to it is refused: %s", why);
	chmod(path, 0640);
	TAP_OK(pl__link_key_load(&key, path, why, sizeof(why)) == -EPERM && strstr(why, "chmod 600"),
	       "a group-readable key is refused: %s", why);
	write_key(path, "short", 5, 0600);
	TAP_OK(pl__link_key_load(&key, path, why, sizeof(why)) == -EINVAL && strstr(why, "16 to"),
	       "a 5-byte key is refused: %s", why);
	unlink(path);
	mkfifo(path, 0600);
	TAP_OK(pl__link_key_load(&key, path, why, sizeof(why)) == -EINVAL &&
		       strstr(why, "not a regular file"),
	       "a FIFO is refused without blocking: %s", why);
	unlink(path);
	unlink(link_path);
}

static void test_no_key(void)
{
	static const struct pl_link_handlers h = { .up = on_up, .down = on_down, .message = on_message };
	struct pl_link_config cfg;
	struct pl_link *l;
	uint32_t other = other_address();
	unsigned port;
	int fd;

	pl__link_config_default(&cfg);
	cfg.tcp_listen = "0.0.0.0:0";
	TAP_OK(pl__link_open(&l, &cfg, loop, &h, NULL) == -EPERM,
	       "without a key, 0.0.0.0 is refused");
	cfg.tcp_listen = ":0";
	TAP_OK(pl__link_open(&l, &cfg, loop, &h, NULL) == 0, "without a key, :0 opens");
	port = pl__link_tcp_port(l);
	fd = connect_to(htonl(INADDR_LOOPBACK), port);
	TAP_OK(fd >= 0, "and takes a connection on 127.0.0.1");
	if (fd >= 0)
		close(fd);
	if (other) {
		fd = connect_to(other, port);
		TAP_OK(fd < 0, "but none on this machine's other address (%s)",
		       inet_ntoa((struct in_addr){ other }));
		if (fd >= 0)
			close(fd);
	} else {
		TAP_SKIP("no address other than loopback here");
	}
	spin(20);
	pl__link_close(l);
}

static void test_with_key(const char *dir)
{
	static const struct pl_link_handlers h = { .up = on_up, .down = on_down, .message = on_message };
	static const uint8_t wrong_key[24] = "not the key at all......";
	struct pl_link_tcp_totals t;
	struct pl_link_config cfg;
	struct pl_wire_stream s;
	struct pl_wire_header hdr;
	const uint8_t *payload;
	struct pl_link *l;
	char path[300];
	uint8_t buf[4096];
	unsigned port, up0;
	bool proof_ok;
	int host, intruder, silent[6];
	size_t n;

	snprintf(path, sizeof(path), "%s/key", dir);
	write_key(path, test_key, sizeof(test_key), 0600);
	pl__link_config_default(&cfg);
	cfg.tcp_listen = ":0";
	cfg.tcp_key_file = path;
	TAP_OK(pl__link_open(&l, &cfg, loop, &h, NULL) == 0, "with a key, :0 opens");
	port = pl__link_tcp_port(l);

	/* the right key */
	up0 = ups;
	downs = 0;
	host = host_handshake(port, test_key, sizeof(test_key), &proof_ok);
	spin(20);
	TAP_OK(host >= 0 && proof_ok, "a host with the key gets the device's proof, and it checks");
	TAP_OK(ups == up0 + 1 && pl__link_is_up(l), "then it is the host: link up");
	pl__wire_stream_init(&s, 64, 1u << 20);
	pl__link_send_frame(l, 7, 0, "frame after the handshake", 25);
	{
		bool hello = false, frame = false;
		uint64_t until = pl__mono_ns() + 2000000000u;

		while (!frame && pl__mono_ns() < until) {
			n = read_exact(host, buf, 64, 100);
			pl__wire_stream_feed(&s, buf, n);
			while (pl__wire_stream_next(&s, &hdr, &payload) == 1) {
				hello |= hdr.type == PL_MSG_HELLO && hdr.sequence == 0;
				frame |= hello && hdr.type == PL_MSG_FRAME && hdr.frame_id == 7 &&
					 hdr.sequence == 1;
			}
		}
		TAP_OK(hello && frame, "and the stream follows: the device's HELLO (0), then the frame (1)");
	}
	pl__wire_stream_free(&s);

	/* the wrong key, no answer at all, garbage: never the host */
	intruder = host_handshake(port, wrong_key, sizeof(wrong_key), &proof_ok);
	TAP_OK(intruder >= 0 && !proof_ok && closed_by_device(intruder, 1000),
	       "a host with the wrong key gets no proof and is closed");
	if (intruder >= 0)
		close(intruder);
	intruder = connect_to(htonl(INADDR_LOOPBACK), port);
	n = read_exact(intruder, buf, 40, 1000);
	{
		static const char not_an_answer[] = "PLNK this is not an answer to the challenge "
						    "at all, nor anything else a device takes";

		send(intruder, not_an_answer, sizeof(not_an_answer) - 1, MSG_NOSIGNAL);
	}
	TAP_OK(n == 40 && closed_by_device(intruder, 1000),
	       "one that answers the challenge with wire bytes is closed");
	close(intruder);
	pl__link_tcp_totals(l, &t);
	TAP_OK(ups == up0 + 1 && downs == 0 && pl__link_is_up(l) && t.replaced == 0,
	       "neither displaced the host (ups %u, downs %u, replaced %llu)", ups - up0, downs,
	       (unsigned long long)t.replaced);
	TAP_OK(t.keyed && t.auth_passed == 1 && t.auth_failed == 2,
	       "status counts them: passed %llu, failed %llu", (unsigned long long)t.auth_passed,
	       (unsigned long long)t.auth_failed);

	/* a flood of silent connections: at most PL_TCP_AUTH_PENDING wait,
	 * the oldest goes first, and the host stays */
	for (int i = 0; i < 6; i++) {
		silent[i] = connect_to(htonl(INADDR_LOOPBACK), port);
		spin(10);
	}
	TAP_OK(closed_by_device(silent[0], 200) && closed_by_device(silent[1], 200) &&
		       !closed_by_device(silent[5], 100),
	       "6 silent connections: the 2 oldest closed for the newer ones");
	pl__link_tcp_totals(l, &t);
	TAP_EQ_U64(t.auth_evicted, 2, "counted as evicted");
	TAP_OK(closed_by_device(silent[5], PL_AUTH_TIMEOUT_MS + 1000),
	       "the rest are closed when the %d ms to answer are up", PL_AUTH_TIMEOUT_MS);
	pl__link_tcp_totals(l, &t);
	TAP_EQ_U64(t.auth_timed_out, 4, "and counted as timed out");
	for (int i = 0; i < 6; i++)
		close(silent[i]);
	TAP_OK(pl__link_is_up(l) && downs == 0, "the host is still the host");

	/* a second host that proves the key does replace the first */
	intruder = host_handshake(port, test_key, sizeof(test_key), &proof_ok);
	spin(20);
	pl__link_tcp_totals(l, &t);
	TAP_OK(proof_ok && downs == 1 && ups == up0 + 2 && t.replaced == 1,
	       "a new host that proves the key replaces the old one");
	close(intruder);
	close(host);
	spin(20);
	pl__link_close(l);
	unlink(path);
}

int main(void)
{
	char dir[] = "/tmp/pl-tcp-auth-XXXXXX";

	if (!mkdtemp(dir) || pl__loop_new(&loop) < 0) {
		printf("Bail out! no scratch directory or loop\n");
		return 1;
	}
	test_known_answer();
	test_key_files(dir);
	test_no_key();
	test_with_key(dir);
	pl__loop_free(loop);
	rmdir(dir);
	return tap_done();
}
