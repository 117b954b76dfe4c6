/* perflink-host: the machine at the other end of the cable. Receives what
 * perflinkd sends over USB, checks every message, replies to frames, and
 * counts what it saw. */
#include "log.h"
#include "options.h"
#include "pl_config.h"
#include "receiver.h"
#include "usb_link.h"
#include "clock.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static volatile sig_atomic_t stop_requested;

static void on_signal(int signo)
{
	(void)signo;
	stop_requested = 1;
}

struct host_options {
	long vendor_id, product_id;
	char *serial;
	char *reply;
	long frames;
	double timeout_s;
	char *frames_csv;
	long depth;
	long transfer_kib;
	bool integrity;
	long stall_after;
	double stall_s;
	bool drain;
	char *telemetry_dir;
	double seconds;
};

static struct host_options opt = {
	.vendor_id = 0x1d6b,
	.product_id = 0x0104,
	.frames = 0,
	.timeout_s = 0,
	.depth = 8,
	.transfer_kib = 64,
};

static const struct pl_option options[] = {
	{ "vid", PL_OPT_INT, &opt.vendor_id, 0, 0xffff, "ID", "USB vendor id of the device" },
	{ "pid", PL_OPT_INT, &opt.product_id, 0, 0xffff, "ID", "USB product id of the device" },
	{ "serial", PL_OPT_STRING, &opt.serial, 0, 0, "S", "only the device with this serial" },
	{ "reply", PL_OPT_STRING, &opt.reply, 0, 0, "MODE",
	  "answer each frame: echo, digest (SHA-256), ack (16 bytes: frame id, host time) or none" },
	{ "frames", PL_OPT_INT, &opt.frames, 0, 1e12, "N",
	  "exit after N frames (0: when the device says its stream ended, or when stopped)" },
	{ "timeout", PL_OPT_DOUBLE, &opt.timeout_s, 0, 1e9, "S",
	  "give up after S seconds without a frame (0: never)" },
	{ "frames-csv", PL_OPT_STRING, &opt.frames_csv, 0, 0, "PATH",
	  "write one line per frame: frame_id,sequence,bytes,device_send_ns,host_recv_ns" },
	{ "depth", PL_OPT_INT, &opt.depth, 8, 64, "N", "bulk IN transfers kept in flight" },
	{ "transfer-kib", PL_OPT_INT, &opt.transfer_kib, 16, 1024, "KIB", "size of each IN transfer" },
	{ "telemetry-dir", PL_OPT_STRING, &opt.telemetry_dir, 0, 0, "DIR",
	  "write the device's telemetry (stall events, resource samples, link diagnostics) "
	  "to DIR/telemetry.jsonl" },
	{ "seconds", PL_OPT_DOUBLE, &opt.seconds, 0, 1e9, "S",
	  "exit after S seconds (0: no limit)" },
	{ "drain", PL_OPT_BOOL, &opt.drain, 0, 0, NULL,
	  "benchmark baseline: count raw bytes without parsing them (with bare_aio_writer); "
	  "ends --timeout seconds after the last byte" },
	{ "stall-after", PL_OPT_INT, &opt.stall_after, 0, 1e12, "N",
	  "test: stop reading for --stall-seconds after N frames (0: never)" },
	{ "stall-seconds", PL_OPT_DOUBLE, &opt.stall_s, 0, 3600, "S",
	  "test: how long to stop reading" },
	{ "integrity", PL_OPT_BOOL, &opt.integrity, 0, 0, NULL,
	  "the byte-integrity diagnostic (with `perflink integrity` on the device): check every "
	  "payload byte, reply with SHA-256 digests" },
	PL_OPT_END,
};

struct host {
	struct pl_usb_link *usb;
	struct pl_receiver rx;
	uint64_t last_frame_ns;
	uint64_t drained_bytes, first_byte_ns, last_byte_ns;
};

static int usb_send(void *ctx, const void *msg, size_t len)
{
	struct host *h = ctx;

	return pl__usb_link_send(h->usb, msg, len);
}

static void on_connected(void *ctx, unsigned packet_size)
{
	struct host *h = ctx;

	pl__receiver_reset(&h->rx, packet_size);
	pl__log_info("connected: %u-byte packets", packet_size);
}

static void on_disconnected(void *ctx)
{
	(void)ctx;
	pl__log_info("device gone; waiting for it to come back");
}

static void on_data(void *ctx, const uint8_t *data, size_t len)
{
	struct host *h = ctx;

	if (opt.drain) {
		h->last_byte_ns = pl__mono_ns();
		if (!h->first_byte_ns)
			h->first_byte_ns = h->last_byte_ns;
		h->drained_bytes += len;
		return;
	}
	pl__receiver_feed(&h->rx, data, len);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: perflink-host [OPTIONS]\n\n"
		     "Receive what perflinkd sends over USB, check every message (sequence, length,\n"
		     "checksum, padding), reply to frames, and print a summary on exit.\n\n"
		     "options:\n");
	pl__options_print_help(options, out);
}

int main(int argc, char **argv)
{
	static const struct pl_usb_link_handlers handlers = { on_connected, on_disconnected, on_data };
	char err[PL_ERRBUF];
	struct pl_usb_link_config ucfg;
	struct pl_usb_link_stats us;
	enum pl_reply_mode mode = PL_REPLY_ECHO;
	struct host h;
	int next, r, status = 0;
	uint64_t start;

	pl__log_init("perflink-host", true, 0);
	r = pl__options_parse_argv(options, argc, argv, &next, err, sizeof(err));
	if (r == 1) {
		usage(stdout);
		return 0;
	}
	if (r < 0 || next < argc) {
		fprintf(stderr, "perflink-host: %s\n", r < 0 ? err : "unexpected argument");
		return 2;
	}
	if (opt.reply) {
		if (strcmp(opt.reply, "echo") == 0)
			mode = PL_REPLY_ECHO;
		else if (strcmp(opt.reply, "digest") == 0)
			mode = PL_REPLY_DIGEST;
		else if (strcmp(opt.reply, "none") == 0)
			mode = PL_REPLY_NONE;
		else if (strcmp(opt.reply, "ack") == 0)
			mode = PL_REPLY_ACK;
		else {
			fprintf(stderr, "perflink-host: --reply must be echo, digest, ack or none\n");
			return 2;
		}
	}
	if (opt.integrity)
		mode = PL_REPLY_DIGEST;
	memset(&h, 0, sizeof(h));
	if (pl__receiver_init(&h.rx, mode, PL_WIRE_MAX_PAYLOAD, usb_send, &h) < 0)
		pl__fatalx("out of memory");
	if (opt.frames_csv) {
		h.rx.frames_csv = fopen(opt.frames_csv, "w");
		if (!h.rx.frames_csv)
			pl__fatal("%s", opt.frames_csv);
		fprintf(h.rx.frames_csv, "frame_id,sequence,bytes,device_send_ns,host_recv_ns\n");
	}
	if (opt.telemetry_dir) {
		char path[4096];

		if (mkdir(opt.telemetry_dir, 0755) < 0 && errno != EEXIST)
			pl__fatal("%s", opt.telemetry_dir);
		snprintf(path, sizeof(path), "%s/telemetry.jsonl", opt.telemetry_dir);
		h.rx.telemetry_out = fopen(path, "a");
		if (!h.rx.telemetry_out)
			pl__fatal("%s", path);
	}
	memset(&ucfg, 0, sizeof(ucfg));
	ucfg.vendor_id = (uint16_t)opt.vendor_id;
	ucfg.product_id = (uint16_t)opt.product_id;
	ucfg.serial = opt.serial;
	ucfg.depth = (unsigned)opt.depth;
	ucfg.transfer_bytes = (size_t)opt.transfer_kib * 1024;
	if (pl__usb_link_open(&h.usb, &ucfg, &handlers, &h) < 0)
		pl__fatalx("cannot start libusb");
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	start = h.last_frame_ns = pl__mono_ns();
	while (!stop_requested) {
		uint64_t frames_before = h.rx.frames;

		if (opt.stall_after > 0 && h.rx.frames >= (uint64_t)opt.stall_after) {
			struct timespec nap = { (time_t)opt.stall_s,
						(long)((opt.stall_s - (double)(time_t)opt.stall_s) * 1e9) };

			/* a host that stops taking data: nothing is read while
			 * it sleeps, so the device's budget fills up */
			pl__log_info("stalling for %.1f s after %llu frames", opt.stall_s,
				     (unsigned long long)h.rx.frames);
			opt.stall_after = 0;
			nanosleep(&nap, NULL);
			h.last_frame_ns = pl__mono_ns();
		}
		if (pl__usb_link_poll(h.usb, 100) < 0)
			break;
		if (h.rx.frames != frames_before)
			h.last_frame_ns = pl__mono_ns();
		if (opt.drain) {
			if (h.first_byte_ns &&
			    pl__mono_ns() - h.last_byte_ns > (uint64_t)(opt.timeout_s * 1e9))
				break;
			continue;
		}
		if (opt.frames > 0 && h.rx.frames >= (uint64_t)opt.frames)
			break;
		if (h.rx.stream_ended)
			break;
		if (opt.seconds > 0 && pl__mono_ns() - start > (uint64_t)(opt.seconds * 1e9))
			break;
		if (opt.timeout_s > 0 && opt.seconds <= 0 &&
		    pl__mono_ns() - h.last_frame_ns > (uint64_t)(opt.timeout_s * 1e9)) {
			pl__log_warnx("no frame for %.1f s; giving up", opt.timeout_s);
			status = 1;
			break;
		}
	}
	/* let the last replies go out */
	for (r = 0; r < 5; r++)
		pl__usb_link_poll(h.usb, 20);
	pl__usb_link_get_stats(h.usb, &us);
	if (opt.drain) {
		double s_ = (double)(h.last_byte_ns - h.first_byte_ns) / 1e9;

		printf("drained %llu bytes in %.3f s: MB/s %.1f\n",
		       (unsigned long long)h.drained_bytes, s_,
		       s_ > 0 ? (double)h.drained_bytes / 1e6 / s_ : 0.0);
		pl__usb_link_close(h.usb);
		pl__receiver_free(&h.rx);
		pl__options_free(options);
		return h.drained_bytes ? 0 : 1;
	}
	printf("frames %llu  bytes %llu  malformed %llu  sequence_gaps %llu  replies %llu  "
	       "reply_failures %llu  telemetry %llu  connects %llu  seconds %.1f\n",
	       (unsigned long long)h.rx.frames, (unsigned long long)h.rx.frame_bytes,
	       (unsigned long long)pl__receiver_malformed(&h.rx),
	       (unsigned long long)h.rx.sequence_gaps, (unsigned long long)h.rx.replies_sent,
	       (unsigned long long)h.rx.reply_failures, (unsigned long long)h.rx.telemetry,
	       (unsigned long long)us.connects, (double)(pl__mono_ns() - start) / 1e9);
	if (opt.integrity || h.rx.integrity_frames)
		printf("integrity: frames %llu, frames with wrong bytes %llu, wrong bytes %llu\n",
		       (unsigned long long)h.rx.integrity_frames,
		       (unsigned long long)h.rx.integrity_bad_frames,
		       (unsigned long long)h.rx.integrity_bad_bytes);
	if (pl__receiver_malformed(&h.rx) || h.rx.sequence_gaps || h.rx.integrity_bad_frames)
		status = 1;
	if (opt.frames > 0 && h.rx.frames < (uint64_t)opt.frames && !h.rx.stream_ended)
		status = 1;
	if (h.rx.stream_ended && (h.rx.frames > h.rx.stream_end_frames ||
				  h.rx.frames + h.rx.stream_end_unconfirmed < h.rx.stream_end_frames)) {
		pl__log_warnx("the device sent %llu frames (%llu unconfirmed), %llu arrived",
			      (unsigned long long)h.rx.stream_end_frames,
			      (unsigned long long)h.rx.stream_end_unconfirmed,
			      (unsigned long long)h.rx.frames);
		status = 1;
	}
	if (h.rx.frames_csv)
		fclose(h.rx.frames_csv);
	if (h.rx.telemetry_out)
		fclose(h.rx.telemetry_out);
	pl__usb_link_close(h.usb);
	pl__receiver_free(&h.rx);
	pl__options_free(options);
	return status;
}
