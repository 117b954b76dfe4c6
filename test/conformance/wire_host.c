/* A host written from docs/wire.md alone, for the conformance test: it uses
 * none of perflink's code (its own header layout, libxxhash and OpenSSL
 * directly), so what it expects is what the document promises.
 *
 * Over TCP to perflinkd: the pre-shared-key handshake ("TCP
 * authentication"), in the clear or inside TLS 1.3 ("TLS": the device's
 * certificate checked against a CA file and the address 127.0.0.1, then
 * the same handshake and messages as TLS application data); over USB ("Finding the device on USB", "Transfers"):
 * the interface found by class, subclass and protocol, with libusb, and
 * no zero-length packet ever sent. Then every message from the device
 * checked as "Receiving" says (magic, version, header check, type, length,
 * payload checksum, zero padding to the packet size, sequence from 0 and
 * +1), each FRAME
 * answered with a REPLY echoing it, PINGs answered by PONGs that carry the
 * PING's time, the device's HELLO first ("HELLO") and this host's own, the
 * COMMANDs of "COMMAND" (each answered by a command_result line), and at
 * the end one hostile message of each kind the device must reject and
 * count (docs/wire.md "Link diagnostics"), plus a REPLY to a frame never
 * sent. On SIGUSR1 it ends the stream with end_of_stream and waits for the
 * device to close the connection (on USB: to go away, as the gadget is
 * offered afresh).
 *
 * Prints what it saw as "name value" lines for the test to check.
 *
 *   wire_host tcp PORT KEY_FILE FRAMES SECONDS
 *   wire_host tls PORT KEY_FILE CA_FILE FRAMES SECONDS
 *   wire_host usb FRAMES SECONDS */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#ifdef WIRE_HOST_TLS
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#endif
#ifdef WIRE_HOST_USB
#include <libusb.h>
#endif

#include "doc_auth.h"

/* docs/wire.md, "Messages" */
#define MAGIC 0x4b4e4c50u
#define HEADER 48
#define MAX_PACKET 1024
static size_t packet = 64; /* the TCP transport's padding; on USB the endpoint's */
enum { HELLO = 1, FRAME, REPLY, TELEMETRY, PING, PONG, COMMAND };

struct header {
	uint8_t version, type;
	uint16_t flags;
	uint32_t payload_len, header_check;
	uint64_t sequence, payload_xxh3, send_time_ns, frame_id;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static size_t padded(size_t payload_len)
{
	size_t n = HEADER + payload_len;

	return (n + packet - 1) / packet * packet;
}

/* A whole message into out (padded(len) bytes). */
static size_t encode(uint8_t *out, const struct header *h, const void *payload, size_t len)
{
	size_t total = padded(len);

	memset(out, 0, total);
	put32(out, MAGIC);
	out[4] = h->version;
	out[5] = h->type;
	out[6] = (uint8_t)h->flags;
	out[7] = (uint8_t)(h->flags >> 8);
	put32(out + 8, (uint32_t)len);
	put64(out + 16, h->sequence);
	put64(out + 24, XXH3_64bits(payload, len));
	put64(out + 32, h->send_time_ns);
	put64(out + 40, h->frame_id);
	if (len) /* a PING has no payload: NULL */
		memcpy(out + HEADER, payload, len);
	put32(out + 12, (uint32_t)XXH3_64bits(out, HEADER));
	return total;
}

static int fd = -1;
static uint64_t my_sequence, last_send_time;
static bool device_gone; /* the connection closed, or the device left */
#ifdef WIRE_HOST_TLS
static SSL *tls; /* NULL: TCP in the clear */
#endif

#ifdef WIRE_HOST_USB
static libusb_device_handle *usb;
static uint8_t ep_in, ep_out;
static uint8_t usb_rx[16384];
static size_t usb_rx_len, usb_rx_off;

/* "Finding the device on USB": the interface by class 0xff, subclass 0x50,
 * protocol 0x01, and its two bulk endpoints. */
static bool usb_find(void)
{
	libusb_device **list;
	ssize_t n = libusb_get_device_list(NULL, &list);
	bool found = false;

	for (ssize_t i = 0; i < n && !found; i++) {
		struct libusb_config_descriptor *cfg;

		if (libusb_get_active_config_descriptor(list[i], &cfg) != 0)
			continue;
		for (int k = 0; k < cfg->bNumInterfaces && !found; k++) {
			const struct libusb_interface_descriptor *alt = &cfg->interface[k].altsetting[0];

			if (alt->bInterfaceClass != 0xff || alt->bInterfaceSubClass != 0x50 ||
			    alt->bInterfaceProtocol != 0x01)
				continue;
			for (int e = 0; e < alt->bNumEndpoints; e++) {
				const struct libusb_endpoint_descriptor *d = &alt->endpoint[e];

				if ((d->bmAttributes & 3) != LIBUSB_TRANSFER_TYPE_BULK)
					continue;
				if (d->bEndpointAddress & LIBUSB_ENDPOINT_IN)
					ep_in = d->bEndpointAddress;
				else
					ep_out = d->bEndpointAddress;
				packet = d->wMaxPacketSize;
			}
			if (ep_in && ep_out && libusb_open(list[i], &usb) == 0 &&
			    libusb_claim_interface(usb, alt->bInterfaceNumber) == 0)
				found = true;
		}
		libusb_free_config_descriptor(cfg);
	}
	libusb_free_device_list(list, 1);
	return found;
}

/* A fresh libusb context for each look: where no udev runs (the rig's
 * initramfs), a context's device list never learns of devices that came
 * after it was made. */
static bool usb_connect(int seconds)
{
	for (uint64_t end = now_ns() + (uint64_t)seconds * 1000000000u; now_ns() < end;) {
		if (libusb_init(NULL) != 0)
			return false;
		if (usb_find())
			return true;
		libusb_exit(NULL);
		usleep(100000);
	}
	return false;
}
#endif

/* One transfer of exactly len bytes: on USB no zero-length packet follows,
 * whatever len is ("Transfers": the device needs none). */
static bool write_all(const void *buf, size_t len)
{
	const uint8_t *p = buf;

#ifdef WIRE_HOST_USB
	if (usb) {
		int done = 0, r = libusb_bulk_transfer(usb, ep_out, (uint8_t *)p, (int)len, &done,
						       2000);

		if (r == LIBUSB_ERROR_NO_DEVICE || r == LIBUSB_ERROR_IO)
			device_gone = true;
		return r == 0 && (size_t)done == len;
	}
#endif
#ifdef WIRE_HOST_TLS
	while (tls && len) {
		int n = SSL_write(tls, p, (int)len);

		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
#endif
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* Up to len bytes the device sent, waiting at most 50 ms: 0 when none came,
 * -1 when the connection or the device is gone. */
static ssize_t read_some(uint8_t *p, size_t len)
{
	ssize_t n;

#ifdef WIRE_HOST_USB
	if (usb) {
		if (usb_rx_off == usb_rx_len) {
			int got = 0, r = libusb_bulk_transfer(usb, ep_in, usb_rx, sizeof(usb_rx),
							      &got, 50);

			if (r != 0 && r != LIBUSB_ERROR_TIMEOUT) {
				device_gone = true;
				return -1;
			}
			usb_rx_off = 0;
			usb_rx_len = (size_t)got; /* a zero-length transfer: nothing */
		}
		n = (ssize_t)(usb_rx_len - usb_rx_off < len ? usb_rx_len - usb_rx_off : len);
		memcpy(p, usb_rx + usb_rx_off, (size_t)n);
		usb_rx_off += (size_t)n;
		return n;
	}
#endif
	{
		struct pollfd pfd = { fd, POLLIN, 0 };
		bool ready = false;

#ifdef WIRE_HOST_TLS
		/* what TLS decrypted already is no longer on the socket */
		ready = tls && SSL_pending(tls) > 0;
#endif
		if (!ready && poll(&pfd, 1, 50) < 0)
			return errno == EINTR ? 0 : -1;
		if (!ready && !(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			return 0;
#ifdef WIRE_HOST_TLS
		if (tls)
			n = SSL_read(tls, p, (int)len); /* 0: close_notify or the end */
		else
#endif
			n = recv(fd, p, len, 0);
		if (n <= 0) {
			device_gone = true;
			return -1;
		}
		return n;
	}
}

static bool read_all(void *buf, size_t len, int ms)
{
	uint8_t *p = buf;
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u;

	while (len) {
		ssize_t n;

		if (now_ns() > end || (n = read_some(p, len)) < 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static bool send_message(int type, uint64_t frame_id, const void *payload, size_t len)
{
	static uint8_t out[HEADER + (4u << 20) + MAX_PACKET];
	struct header h = { .version = 1, .type = (uint8_t)type, .sequence = my_sequence++,
			    .send_time_ns = now_ns(), .frame_id = frame_id };

	last_send_time = h.send_time_ns;
	return write_all(out, encode(out, &h, payload, len));
}

/* "TCP authentication": true when both sides proved the key. */
static bool handshake(const uint8_t *key, size_t key_len)
{
	uint8_t challenge[40], answer[72], proof[32], want[32];

	if (!read_all(challenge, sizeof(challenge), 5000) || memcmp(challenge, "PLAUTH01", 8))
		return false;
	memcpy(answer, "PLAUTH01", 8);
	if (getrandom(answer + 8, 32, 0) != 32)
		return false;
	doc_auth_mac(key, key_len, "perflink-host-auth", challenge + 8, answer + 8, answer + 40);
	if (!write_all(answer, sizeof(answer)) || !read_all(proof, sizeof(proof), 5000))
		return false;
	doc_auth_mac(key, key_len, "perflink-device-auth", challenge + 8, answer + 8, want);
	return memcmp(proof, want, 32) == 0;
}

/* What the device sent, checked as "Receiving" says. */
static struct {
	uint64_t messages, frames, telemetry, pongs, other;
	uint64_t bad; /* anything that failed a check */
	uint64_t sequence_ok, padding_ok;
	uint64_t telemetry_lines_ok;
	uint64_t max_pong_ns, pong_time_ok;
	uint64_t replies_sent;
	uint64_t device_hello_ok, link_diag_lines;
	uint64_t ping_ok, link_diag_ok, unknown_refused, malformed_refused, end_ok;
} seen = { .sequence_ok = 1, .padding_ok = 1, .telemetry_lines_ok = 1, .pong_time_ok = 1 };
static uint64_t expect_sequence;
/* The PINGs sent and not yet answered (a PING goes every 200 ms, so under
 * load several can be out): a PONG must carry one of their times. */
#define PINGS_OUT 64
static uint64_t pings_out[PINGS_OUT];
static unsigned nr_pings_out;

static void ping_sent(uint64_t t)
{
	if (nr_pings_out == PINGS_OUT)
		memmove(pings_out, pings_out + 1, sizeof(pings_out) - sizeof(pings_out[0]));
	else
		nr_pings_out++;
	pings_out[nr_pings_out - 1] = t;
}

/* The PING a PONG answers, taken off the list; 0 when none has its time. */
static uint64_t ping_answered(uint64_t echoed)
{
	for (unsigned i = 0; i < nr_pings_out; i++) {
		if (pings_out[i] == echoed) {
			memmove(pings_out + i, pings_out + i + 1,
				(nr_pings_out - i - 1) * sizeof(pings_out[0]));
			nr_pings_out--;
			return echoed;
		}
	}
	return 0;
}

/* One TELEMETRY message may hold several lines. */
static void note_command_results(const char *text)
{
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);
		char one[2048];

		snprintf(one, sizeof(one), "%.*s", (int)(n < sizeof(one) ? n : sizeof(one) - 1), line);
		if (strstr(one, "\"type\":\"link_diag\""))
			seen.link_diag_lines++;
		if (strstr(one, "\"type\":\"command_result\"")) {
			bool ok = strstr(one, "\"ok\":true") != NULL;

			if (ok && strstr(one, "\"command\":\"ping\""))
				seen.ping_ok++;
			else if (ok && strstr(one, "\"command\":\"link_diag\""))
				seen.link_diag_ok++;
			else if (ok && strstr(one, "\"command\":\"end_of_stream\""))
				seen.end_ok++;
			else if (!ok && strstr(one, "\"command\":\"bogus\"") &&
				 strstr(one, "unknown command"))
				seen.unknown_refused++;
			else if (!ok && strstr(one, "\"command\":\"\""))
				seen.malformed_refused++;
		}
		line = end ? end + 1 : NULL;
	}
}

static bool read_message(int ms)
{
	static uint8_t payload[(16u << 20) + MAX_PACKET];
	uint8_t hb[HEADER], check[HEADER];
	struct header h;
	size_t rest;

	if (!read_all(hb, HEADER, ms))
		return false;
	memcpy(check, hb, HEADER);
	memset(check + 12, 0, 4);
	h.version = hb[4];
	h.type = hb[5];
	h.flags = (uint16_t)(hb[6] | hb[7] << 8);
	h.payload_len = get32(hb + 8);
	h.header_check = get32(hb + 12);
	h.sequence = get64(hb + 16);
	h.payload_xxh3 = get64(hb + 24);
	h.send_time_ns = get64(hb + 32);
	h.frame_id = get64(hb + 40);
	if (get32(hb) != MAGIC || (uint32_t)XXH3_64bits(check, HEADER) != h.header_check ||
	    h.version != 1 || h.type < HELLO || h.type > COMMAND || h.payload_len > (16u << 20) ||
	    (h.flags & ~1u)) {
		seen.bad++;
		return false; /* a stream this host cannot trust any more */
	}
	rest = padded(h.payload_len) - HEADER;
	if (!read_all(payload, rest, ms))
		return false;
	seen.messages++;
	if (XXH3_64bits(payload, h.payload_len) != h.payload_xxh3)
		seen.bad++;
	for (size_t i = h.payload_len; i < rest; i++)
		if (payload[i])
			seen.padding_ok = 0;
	if (h.sequence != expect_sequence)
		seen.sequence_ok = 0;
	expect_sequence = h.sequence + 1;
	switch (h.type) {
	case FRAME:
		seen.frames++;
		if (send_message(REPLY, h.frame_id, payload, h.payload_len))
			seen.replies_sent++;
		break;
	case TELEMETRY:
		seen.telemetry++;
		if (h.payload_len == 0 || payload[h.payload_len - 1] != '\n' || payload[0] != '{')
			seen.telemetry_lines_ok = 0;
		payload[h.payload_len] = '\0'; /* there is room: the padding's buffer */
		note_command_results((const char *)payload);
		break;
	case HELLO:
		payload[h.payload_len] = '\0';
		seen.device_hello_ok = h.sequence == 0 &&
				       strstr((char *)payload, "\"wire_version\":1") &&
				       strstr((char *)payload, "\"commands\":[");
		break;
	case PONG: {
		uint64_t echoed = h.payload_len == 16 ? get64(payload) : 0;
		uint64_t sent = echoed ? ping_answered(echoed) : 0;
		uint64_t rtt = sent ? now_ns() - sent : 0;

		seen.pongs++;
		if (!sent)
			seen.pong_time_ok = 0;
		if (rtt > seen.max_pong_ns)
			seen.max_pong_ns = rtt;
		break;
	}
	case PING: {
		uint8_t times[16];

		put64(times, h.send_time_ns);
		put64(times + 8, now_ns());
		send_message(PONG, 0, times, sizeof(times));
		break;
	}
	default:
		seen.other++;
	}
	return true;
}

/* One message of each kind the device must reject, by its reason. */
static void send_hostile(void)
{
	static uint8_t m[HEADER + MAX_PACKET * 2];
	struct header h = { .version = 1, .type = REPLY, .frame_id = 1 };
	size_t n;

	/* bad_header_check: one header byte changed after the check */
	h.sequence = my_sequence++;
	n = encode(m, &h, "x", 1);
	m[40] ^= 0x55;
	write_all(m, n);
	/* bad_checksum: the payload changed after the checksum */
	h.sequence = my_sequence++;
	n = encode(m, &h, "payload", 7);
	m[HEADER] ^= 1;
	write_all(m, n);
	/* bad_flags: a flag bit the document says is 0 */
	h.sequence = my_sequence++;
	h.flags = 0x8000;
	n = encode(m, &h, "y", 1);
	write_all(m, n);
	h.flags = 0;
	/* bad_version */
	h.sequence = my_sequence++;
	h.version = 2;
	n = encode(m, &h, "z", 1);
	write_all(m, n);
	h.version = 1;
	/* bad_padding: a nonzero byte in the padding */
	h.sequence = my_sequence++;
	n = encode(m, &h, "w", 1);
	m[n - 1] = 0xee;
	write_all(m, n);
	/* a well-formed REPLY to a frame never sent */
	send_message(REPLY, 0x7777000000001234ull, "forged", 6);
}

#ifdef WIRE_HOST_TLS
/* "TLS": TLS 1.3 only, the certificate checked against ca_file and the
 * address connected to, before the key's handshake. */
static bool tls_start(const char *ca_file)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

	if (!ctx || !SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
	    SSL_CTX_load_verify_locations(ctx, ca_file, NULL) != 1)
		return false;
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	if (!(tls = SSL_new(ctx)) || !SSL_set_fd(tls, fd) ||
	    !X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(tls), "127.0.0.1"))
		return false;
	if (SSL_connect(tls) != 1) {
		fprintf(stderr, "wire_host: TLS handshake failed (verify: %s)\n",
			X509_verify_cert_error_string(SSL_get_verify_result(tls)));
		return false;
	}
	printf("tls %s\n", SSL_get_version(tls));
	return true;
}
#endif

/* "TCP": connect to the device on loopback and prove the key. */
static bool tcp_connect(const char *port, const char *key_file, const char *ca_file)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	uint8_t key[1024];
	ssize_t key_len;
	int kfd, one = 1;

	sin.sin_port = htons((uint16_t)atoi(port));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	kfd = open(key_file, O_RDONLY | O_CLOEXEC);
	key_len = kfd >= 0 ? read(kfd, key, sizeof(key)) : -1;
	if (key_len < 16) {
		fprintf(stderr, "wire_host: cannot read the key %s\n", key_file);
		return false;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		perror("wire_host: connect");
		return false;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (ca_file) {
#ifdef WIRE_HOST_TLS
		if (!tls_start(ca_file))
			return false;
#else
		fprintf(stderr, "wire_host: built without libssl\n");
		return false;
#endif
	}
	printf("handshake %s\n", handshake(key, (size_t)key_len) ? "ok" : "failed");
	return true;
}

int main(int argc, char **argv)
{
	long frames, seconds;
	uint64_t end, next_ping = 0;
	sigset_t usr1;
	bool on_usb = argc == 4 && strcmp(argv[1], "usb") == 0;
	bool on_tls = argc == 7 && strcmp(argv[1], "tls") == 0;
	int at = on_usb ? 2 : on_tls ? 5 : 4; /* FRAMES, then SECONDS */

	/* SIGUSR1 is waited for at the end, never delivered */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	if (!on_usb && !on_tls && !(argc == 6 && strcmp(argv[1], "tcp") == 0)) {
		fprintf(stderr, "usage: wire_host tcp PORT KEY_FILE FRAMES SECONDS\n"
				"       wire_host tls PORT KEY_FILE CA_FILE FRAMES SECONDS\n"
				"       wire_host usb FRAMES SECONDS\n");
		return 2;
	}
	frames = atol(argv[at]);
	seconds = atol(argv[at + 1]);
	if (on_usb) {
#ifdef WIRE_HOST_USB
		if (!usb_connect((int)seconds)) {
			fprintf(stderr, "wire_host: no perflink interface on USB\n");
			return 2;
		}
		printf("usb_packet %zu\n", packet);
#else
		fprintf(stderr, "wire_host: built without libusb\n");
		return 2;
#endif
	} else if (!tcp_connect(argv[2], argv[3], on_tls ? argv[4] : NULL)) {
		return 2;
	}
	end = now_ns() + (uint64_t)seconds * 1000000000u;
	while (now_ns() < end && seen.frames < (uint64_t)frames) {
		if (now_ns() >= next_ping) {
			send_message(PING, 0, NULL, 0);
			ping_sent(last_send_time);
			next_ping = last_send_time + 200000000u;
		}
		if (!read_message(300) && seen.bad)
			break;
	}
	/* "HELLO": what this host is; "COMMAND": each answered in the stream */
	{
		static const char hello[] =
			"{\"type\":\"hello\",\"wire_version\":1,\"program\":\"wire_host\","
			"\"version\":\"1\"}";
		static const char *const commands[] = {
			"{\"command\":\"ping\"}", "{\"command\":\"link_diag\"}",
			"{\"command\":\"bogus\"}", "[\"not an object\"]",
		};
		uint64_t diag_before = seen.link_diag_lines;

		send_message(HELLO, 0, hello, sizeof(hello) - 1);
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			send_message(COMMAND, 0, commands[i], strlen(commands[i]));
		for (uint64_t until = now_ns() + 2000000000u;
		     now_ns() < until && seen.malformed_refused == 0;)
			read_message(100);
		printf("link_diag_on_command %d\n", seen.link_diag_lines > diag_before);
	}
	/* a few more pings once the frames are done: each answered at once */
	for (int i = 0; i < 3; i++) {
		uint64_t until;

		send_message(PING, 0, NULL, 0);
		ping_sent(last_send_time);
		until = now_ns() + 1000000000u;
		for (uint64_t p = seen.pongs; seen.pongs == p && now_ns() < until;)
			read_message(100);
	}
	send_hostile();
	/* let the device read them before the test asks its status */
	for (uint64_t until = now_ns() + 500000000u; now_ns() < until;)
		read_message(100);
	printf("device_hello_ok %llu\nping_ok %llu\nlink_diag_ok %llu\nunknown_refused %llu\n"
	       "malformed_refused %llu\n",
	       (unsigned long long)seen.device_hello_ok, (unsigned long long)seen.ping_ok,
	       (unsigned long long)seen.link_diag_ok, (unsigned long long)seen.unknown_refused,
	       (unsigned long long)seen.malformed_refused);
	printf("messages %llu\nframes %llu\ntelemetry %llu\npongs %llu\nbad %llu\n"
	       "sequence_ok %llu\npadding_ok %llu\ntelemetry_lines_ok %llu\npong_time_ok %llu\n"
	       "max_pong_ms %.3f\nreplies_sent %llu\n",
	       (unsigned long long)seen.messages, (unsigned long long)seen.frames,
	       (unsigned long long)seen.telemetry, (unsigned long long)seen.pongs,
	       (unsigned long long)seen.bad, (unsigned long long)seen.sequence_ok,
	       (unsigned long long)seen.padding_ok, (unsigned long long)seen.telemetry_lines_ok,
	       (unsigned long long)seen.pong_time_ok, (double)seen.max_pong_ns / 1e6,
	       (unsigned long long)seen.replies_sent);
	fflush(stdout);
	/* stay connected until the test has read the device's status, then
	 * end the stream: the device answers and closes the connection */
	{
		int sig;

		sigwait(&usr1, &sig);
	}
	{
		static const char end_cmd[] = "{\"command\":\"end_of_stream\"}";

		send_message(COMMAND, 0, end_cmd, sizeof(end_cmd) - 1);
	}
	{
		bool closed = false;

		/* the rest of the stream, then its end: the connection closed,
		 * or on USB the device gone */
		for (uint64_t until = now_ns() + 3000000000u; now_ns() < until && !closed;) {
			read_message(100);
			closed = seen.end_ok && device_gone;
		}
		printf("end_of_stream_ok %llu\nend_of_stream_closed %d\n",
		       (unsigned long long)seen.end_ok, closed);
	}
	return 0;
}
