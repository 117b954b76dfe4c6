/* The smallest application of libperflink-host (include/perflink_host.h):
 * it answers every frame from the device with 5 bytes, the frame's length
 * (32-bit little-endian) and its first byte (0 for an empty frame), and
 * prints the type of each telemetry line it gets.
 *
 *   reply_app --tcp 127.0.0.1:7200 [--frames N]     perflinkd --link-tcp
 *   reply_app [--frames N]                          USB, perflinkd's ids
 *
 * It stops after N frames (default: on SIGINT or SIGTERM) and prints its
 * counters. Build against the installed library with
 *   cc reply_app.c -lperflink-host */
#define _POSIX_C_SOURCE 200809L /* sigaction under -std=c11 */

#include <perflink_host.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t stop;

static void on_signal(int signo)
{
	(void)signo;
	stop = 1;
}

static size_t answer(void *ctx, uint64_t frame_id, const void *frame, size_t len, void *reply,
		     size_t reply_cap)
{
	unsigned char *out = reply;
	uint32_t n = (uint32_t)len;

	(void)ctx;
	(void)frame_id;
	if (reply_cap < 5)
		return 0;
	out[0] = (unsigned char)n;
	out[1] = (unsigned char)(n >> 8);
	out[2] = (unsigned char)(n >> 16);
	out[3] = (unsigned char)(n >> 24);
	out[4] = len ? *(const unsigned char *)frame : 0;
	return 5;
}

static void telemetry(void *ctx, const char *type, const char *line, size_t len)
{
	(void)ctx;
	(void)line;
	printf("telemetry %s (%zu bytes)\n", type ? type : "-", len);
}

int main(int argc, char **argv)
{
	struct plh_options o = { 0 };
	struct plh_stats st;
	struct plh_host *h;
	unsigned long long want = 0, frames = 0;
	struct sigaction sa;
	int i, r;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--tcp") == 0 && i + 1 < argc) {
			o.tcp = argv[++i];
		} else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc) {
			want = strtoull(argv[++i], NULL, 10);
		} else {
			fprintf(stderr, "usage: reply_app [--tcp HOST:PORT] [--frames N]\n");
			return 2;
		}
	}
	if ((r = plh_open(&h, &o)) < 0) {
		fprintf(stderr, "reply_app: plh_open: %s\n", strerror(-r));
		return 1;
	}
	plh_set_telemetry(h, telemetry, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: plh_run returns at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	while (!stop && (want == 0 || frames < want)) {
		if ((r = plh_run(h, answer, NULL, 100)) < 0) {
			fprintf(stderr, "reply_app: plh_run: %s\n", strerror(-r));
			break;
		}
		frames += (unsigned long long)r;
	}
	plh_get_stats(h, &st);
	printf("frames %llu replies %llu reply_failures %llu telemetry_lines %llu "
	       "malformed %llu connects %llu\n",
	       (unsigned long long)st.frames, (unsigned long long)st.replies,
	       (unsigned long long)st.reply_failures, (unsigned long long)st.telemetry_lines,
	       (unsigned long long)st.malformed, (unsigned long long)st.connects);
	plh_close(h);
	return r < 0 ? 1 : 0;
}
