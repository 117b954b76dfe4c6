/* perflink-host: the machine at the other end of the cable. Receives what
 * perflinkd sends over USB (or TCP), checks every message, replies to
 * frames, estimates the device's clock offset, records per-frame latency,
 * and writes what arrived as files. */
#include "clock.h"
#include "clock_offset.h"
#include "compare.h"
#include "export.h"
#include "latency_table.h"
#include "log.h"
#include "options.h"
#include "payload_hash.h"
#include "pl_config.h"
#include "progress.h"
#include "host.h"
#include "run_output.h"
#include "session.h"

#include <endian.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* at the end, how long buffered replies may take to leave */
#define FLUSH_NS 2000000000ull

static volatile sig_atomic_t stop_requested;

static void on_signal(int signo)
{
	(void)signo;
	stop_requested = 1;
}

static struct pl_host_options opt = {
	.depth = 8,
	.transfer_kib = 64,
	.latency_wait_s = 2,
	.max_frames_kept = 8000000,
	.trace_max_mb = PL_TRACE_MAX_BYTES_DEFAULT / 1e6,
	.metrics_every_s = 5,
};

static const struct pl_option options[] = {
	{ "tcp", PL_OPT_STRING, &opt.tcp, 0, 0, "HOST:PORT",
	  "connect to perflinkd over TCP instead of USB (retried every 0.5 s while refused or "
	  "after the connection drops)" },
	{ "tcp-key", PL_OPT_STRING, &opt.tcp_key, 0, 0, "FILE",
	  "TCP: the pre-shared key (mode 0600, the same file as perflinkd's link-tcp-key-file): "
	  "the device must prove it holds it, and this host proves it too" },
	{ "tls-ca", PL_OPT_STRING, &opt.tls_ca, 0, 0, "FILE",
	  "TCP: TLS 1.3 to a device with link-tcp-tls-cert, its certificate checked against "
	  "this CA file (PEM) and the name or address connected to; needs --tcp-key" },
	{ "tls-fingerprint", PL_OPT_STRING, &opt.tls_fingerprint, 0, 0, "SHA256",
	  "TCP: TLS 1.3 as --tls-ca, the device's certificate pinned by its SHA-256 fingerprint "
	  "(`openssl x509 -noout -fingerprint -sha256 -in CERT`) instead of a CA" },
	{ "vid", PL_OPT_HEX, &opt.vendor_id, 0, 0xffff, "ID",
	  "USB: only a device with this vendor id (default: any device with a perflink "
	  "interface, found by its class, as docs/wire.md says)" },
	{ "pid", PL_OPT_HEX, &opt.product_id, 0, 0xffff, "ID",
	  "USB: only a device with this product id (default: any)" },
	{ "serial", PL_OPT_STRING, &opt.serial, 0, 0, "S", "USB: only the device with this serial" },
	{ "reply", PL_OPT_STRING, &opt.reply, 0, 0, "MODE",
	  "answer each frame: echo (when not given), digest (SHA-256), ack (16 bytes: frame id, "
	  "host time) or none" },
	{ "frames", PL_OPT_INT, &opt.frames, 0, 1e12, "N",
	  "exit after N frames (0: when the device says its stream ended, or when stopped)" },
	{ "seconds", PL_OPT_DOUBLE, &opt.seconds, 0, 1e9, "S",
	  "exit after S seconds (0: no limit)" },
	{ "timeout", PL_OPT_DOUBLE, &opt.timeout_s, 0, 1e9, "S",
	  "give up (exit 1) after S seconds without a frame, unless --seconds is set (0: never)" },
	{ "out", PL_OPT_STRING, &opt.out, 0, 0, "DIR",
	  "write DIR/frames.csv and DIR/summary.json at exit (also on SIGINT/SIGTERM) and the "
	  "device's telemetry as DIR/telemetry/TYPE.jsonl while it arrives; then, from them, "
	  "DIR/metrics.prom, DIR/trace.perfetto-trace, the pprof profiles DIR/profile.pb.gz "
	  "and DIR/profiles/window-N.pb.gz and DIR/report.html as `perflink-host export DIR` "
	  "does" },
	{ "trace-max-mb", PL_OPT_DOUBLE, &opt.trace_max_mb, 0.001, 1e6, "MB",
	  "with --out (and for export): a trace longer than this many MB (1e6 bytes; default "
	  "256) goes into parts trace.perfetto-trace, trace.1.perfetto-trace, ... that each "
	  "open on their own" },
	{ "metrics-every", PL_OPT_DOUBLE, &opt.metrics_every_s, 0, 86400, "S",
	  "with --out: replace DIR/metrics.prom every S seconds while the run goes on, for "
	  "node_exporter's textfile collector (0: only at exit)" },
	{ "sysroot", PL_OPT_STRING, &opt.sysroot, 0, 0, "DIR",
	  "with --out (and for export): name the render sampler's frames the device left as "
	  "module+offset (stripped code) from debug files found by the module's build-id, "
	  "DIR/usr/lib/debug/.build-id/xx/rest.debug, or from the module's path under DIR "
	  "when its build-id matches; a file of another build-id is never used (said once)" },
	{ "debug-dir", PL_OPT_STRING, &opt.debug_dir, 0, 0, "DIR",
	  "with --out (and for export): a folder of the /usr/lib/debug layout, "
	  "DIR/.build-id/xx/rest.debug, looked in before --sysroot; build-ids checked alike" },
	{ "frames-csv", PL_OPT_STRING, &opt.frames_csv, 0, 0, "PATH",
	  "write frames.csv (the --out format: frame_id,sequence,bytes,device_send_ns,"
	  "host_recv_device_ns,one_way_ms,round_trip_ms) to PATH at exit" },
	{ "telemetry-dir", PL_OPT_STRING, &opt.telemetry_dir, 0, 0, "DIR",
	  "append every telemetry payload as received to DIR/telemetry.jsonl (--out sorts them "
	  "into one file per type instead)" },
	{ "latency-wait", PL_OPT_DOUBLE, &opt.latency_wait_s, 0, 60, "S",
	  "at the end, wait up to S seconds for the device's round trips of the last frames "
	  "(only when the device sends frame_latency)" },
	{ "max-frames-kept", PL_OPT_INT, &opt.max_frames_kept, 1000, 100000000, "N",
	  "frames kept for frames.csv and the percentiles (about 80 bytes each); later frames "
	  "are counted only" },
	{ "depth", PL_OPT_INT, &opt.depth, 8, 64, "N", "USB: bulk IN transfers kept in flight" },
	{ "transfer-kib", PL_OPT_INT, &opt.transfer_kib, 16, 1024, "KIB",
	  "USB: size of each IN transfer" },
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

/* --drain: the bytes are counted, never parsed */
static void on_raw(void *ctx, size_t len)
{
	struct pl_host *h = ctx;

	h->last_byte_ns = pl__mono_ns();
	h->last_byte_cpu_ns = pl__process_cpu_ns();
	if (!h->first_byte_ns) {
		h->first_byte_ns = h->last_byte_ns;
		h->first_byte_cpu_ns = h->last_byte_cpu_ns;
	}
	h->drained_bytes += len;
}

/* every valid telemetry line: what metrics.prom uses of it, kept */
static void on_line(void *ctx, const char *type, const char *line, size_t len)
{
	struct pl_host *h = ctx;

	pl__live_metrics_line(&h->metrics, type, line, len);
}

static void on_frame(void *ctx, const struct pl_wire_header *hdr, uint64_t now_ns)
{
	struct pl_host *h = ctx;
	int64_t offset = 0;
	uint64_t rtt;
	bool have = pl__clock_offset_best(&h->session.clock, &offset, &rtt);

	if (!h->first_frame_ns)
		h->first_frame_ns = now_ns;
	h->last_frame_ns = now_ns;
	pl__latency_table_add(&h->table, hdr->frame_id, hdr->sequence, hdr->payload_len,
			      hdr->send_time_ns, now_ns, have, offset);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: perflink-host [OPTIONS]\n"
		     "       perflink-host export [--trace-max-mb MB] [--sysroot DIR] [--debug-dir DIR] DIR\n"
		     "       perflink-host compare [--label-a T] [--label-b T] [--markdown] A B\n\n"
		     "Receive what perflinkd sends over USB (or TCP with --tcp), check every message\n"
		     "(sequence, length, checksum, padding), reply to frames, ping the device once a\n"
		     "second for the clock offset, and print a summary on exit. With --out, write\n"
		     "frames.csv, summary.json and the device's telemetry into a directory, and\n"
		     "at exit metrics.prom, trace.perfetto-trace, the pprof profiles and\n"
		     "report.html from them (as export does).\n"
		     "A progress line is shown once a second when stdout is a terminal.\n\n"
		     "export DIR: read what --out wrote into DIR and (re)write DIR/metrics.prom\n"
		     "(Prometheus text, for node_exporter's textfile collector),\n"
		     "DIR/trace.perfetto-trace (open it in ui.perfetto.dev): frame latencies and\n"
		     "slices, device link totals, stage calls and times, stall events, process CPU\n"
		     "and memory; and, when the render sampler sent windows, DIR/profile.pb.gz\n"
		     "(pprof: its stacks over the whole run, samples and CPU nanoseconds; open it\n"
		     "with go tool pprof) and DIR/profiles/window-N.pb.gz (one per window, N from\n"
		     "1); and DIR/report.html, one page that needs no network (open it in a\n"
		     "browser from disk): the run's header and drops, latency percentiles,\n"
		     "histogram and time series with stalls, the worst frames with what the\n"
		     "device did during each, the stage table, the render thread's flame graph,\n"
		     "per-process CPU and RSS; and DIR/stacks.folded (every render stack, for\n"
		     "flamegraph.pl). With --sysroot or --debug-dir (as the options below say),\n"
		     "frames the device could only give as module+offset get their names, and\n"
		     "file:line in the profiles, from debug files of the module's build-id.\n"
		     "A trace past --trace-max-mb (256 MB) goes into parts that each open on\n"
		     "their own. Lines that do not parse are skipped and counted (stderr and\n"
		     "perflink_export_skipped_lines_total). Exit 0, or 1 when DIR holds no\n"
		     "recording or a file could not be read or written.\n\n"
		     "compare A B: the A/B table (Metric | A | B | Change) of two directories\n"
		     "--out recorded: frames, latency quantiles, held frames, MB/s from their\n"
		     "summary.json; the sampled processes' CPU and the stage totals from their\n"
		     "telemetry. Exit 2 when a summary.json is missing or malformed\n"
		     "(perflink-host compare --help says more).\n"
		     "See docs/host-export.md.\n\n"
		     "options:\n");
	pl__options_print_help(options, out);
}

static int parse_reply(enum pl_reply_mode *mode)
{
	*mode = PL_REPLY_ECHO;
	if (!opt.reply || strcmp(opt.reply, "echo") == 0)
		*mode = PL_REPLY_ECHO;
	else if (strcmp(opt.reply, "digest") == 0)
		*mode = PL_REPLY_DIGEST;
	else if (strcmp(opt.reply, "none") == 0)
		*mode = PL_REPLY_NONE;
	else if (strcmp(opt.reply, "ack") == 0)
		*mode = PL_REPLY_ACK;
	else
		return -EINVAL;
	if (opt.integrity)
		*mode = PL_REPLY_DIGEST;
	return 0;
}

static void open_session(struct pl_host *h)
{
	const struct pl_host_session_open_config cfg = {
		.tcp = opt.tcp,
		.tcp_key_file = opt.tcp_key,
		.tcp_tls_ca_file = opt.tls_ca,
		.tcp_tls_fingerprint = opt.tls_fingerprint,
		.usb = {
			.vendor_id = (uint16_t)opt.vendor_id,
			.product_id = (uint16_t)opt.product_id,
			.serial = opt.serial,
			.depth = (unsigned)opt.depth,
			.transfer_bytes = (size_t)opt.transfer_kib * 1024,
		},
		.table = &h->table,
		.files = h->have_files ? &h->files : NULL,
		.log_changes = true,
	};

	if (pl__host_session_open(&h->session, &cfg) < 0) {
		/* a bad address or key was said by the TCP transport */
		if (opt.tcp)
			exit(2);
		pl__fatalx("cannot start libusb");
	}
}

/* Keep the link going (with its pings), progress, telemetry files. */
static int run_step(struct pl_host *h, int timeout_ms)
{
	uint64_t now;

	if (pl__host_session_step(&h->session, timeout_ms) < 0)
		return -1;
	now = pl__mono_ns();
	/* telemetry files are readable while the run goes on, a second late */
	if (h->have_files && now - h->last_flush_ns >= 1000000000u) {
		pl__telemetry_files_flush(&h->files);
		h->last_flush_ns = now;
	}
	pl__progress_tick(&h->progress, now, h->session.rx.frames, h->session.rx.frame_bytes,
			  &h->table);
	if (h->metrics.interval_ns) {
		int64_t offset = 0;
		uint64_t rtt;
		bool have = pl__clock_offset_best(&h->session.clock, &offset, &rtt);

		pl__live_metrics_tick(&h->metrics, now, &h->table, have, offset);
	}
	return 0;
}

static int run(struct pl_host *h)
{
	const struct pl_receiver *rx = &h->session.rx;
	uint64_t start = pl__mono_ns(), last_frame = start;
	int status = 0;

	h->start_ns = start;
	while (!stop_requested) {
		uint64_t frames_before = rx->frames;

		if (opt.stall_after > 0 && rx->frames >= (uint64_t)opt.stall_after) {
			struct timespec nap = { (time_t)opt.stall_s,
						(long)((opt.stall_s - (double)(time_t)opt.stall_s) * 1e9) };

			/* a host that stops taking data: nothing is read while
			 * it sleeps, so the device's budget fills up */
			pl__log_info("stalling for %.1f s after %llu frames", opt.stall_s,
				     (unsigned long long)rx->frames);
			opt.stall_after = 0;
			nanosleep(&nap, NULL);
			last_frame = pl__mono_ns();
		}
		if (run_step(h, 100) < 0)
			break;
		if (rx->frames != frames_before)
			last_frame = pl__mono_ns();
		if (opt.drain) {
			if (h->first_byte_ns &&
			    pl__mono_ns() - h->last_byte_ns > (uint64_t)(opt.timeout_s * 1e9))
				break;
			continue;
		}
		if (opt.frames > 0 && rx->frames >= (uint64_t)opt.frames)
			break;
		if (rx->stream_ended)
			break;
		if (opt.seconds > 0 && pl__mono_ns() - start > (uint64_t)(opt.seconds * 1e9))
			break;
		if (opt.timeout_s > 0 && opt.seconds <= 0 &&
		    pl__mono_ns() - last_frame > (uint64_t)(opt.timeout_s * 1e9)) {
			pl__log_warnx("no frame for %.1f s; giving up", opt.timeout_s);
			status = 1;
			break;
		}
	}
	/* The device reports round trips after the replies reached it: give
	 * the last frames' reports time to come, if it reports them at all. */
	if (!opt.drain && h->session.dt.latency_lines > 0) {
		uint64_t until = pl__mono_ns() + (uint64_t)(opt.latency_wait_s * 1e9);

		while (!stop_requested && h->session.connected && h->table.rtt_known < h->table.n &&
		       pl__mono_ns() < until)
			if (run_step(h, 50) < 0)
				break;
	}
	/* let the last replies go out */
	pl__host_transport_flush(h->session.link, FLUSH_NS);
	h->end_ns = pl__mono_ns();
	return status;
}

static void prepare_outputs(struct pl_host *h)
{
	if (opt.out) {
		char path[4096];
		int err;

		if (mkdir(opt.out, 0755) < 0 && errno != EEXIST)
			pl__fatal("%s", opt.out);
		if ((size_t)snprintf(path, sizeof(path), "%s/telemetry", opt.out) >= sizeof(path))
			pl__fatalx("--out: path too long");
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			pl__fatal("%s", path);
		if ((err = pl__telemetry_files_open(&h->files, path)) < 0) {
			pl__log_warnc(err, "%s", path);
			exit(1);
		}
		h->have_files = true;
		if (pl__live_metrics_init(&h->metrics, opt.out, opt.metrics_every_s,
					  pl__mono_ns()) < 0)
			pl__fatalx("out of memory");
	}
	if (opt.telemetry_dir) {
		char path[4096];

		if (mkdir(opt.telemetry_dir, 0755) < 0 && errno != EEXIST)
			pl__fatal("%s", opt.telemetry_dir);
		snprintf(path, sizeof(path), "%s/telemetry.jsonl", opt.telemetry_dir);
		h->session.rx.telemetry_out = fopen(path, "a");
		if (!h->session.rx.telemetry_out)
			pl__fatal("%s", path);
	}
}

/* perflink-host export [--trace-max-mb MB] [--sysroot DIR] [--debug-dir DIR] DIR */
static int export_command(int argc, char **argv)
{
	static const char usage_line[] =
		"usage: perflink-host export [--trace-max-mb MB] [--sysroot DIR] [--debug-dir DIR] "
		"DIR\n";
	struct pl_export_options eo = { .trace_max_bytes = PL_TRACE_MAX_BYTES_DEFAULT };
	double max_mb;
	char *end;

	if (argc == 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	while (argc >= 3 && argv[0][0] == '-') {
		if (strcmp(argv[0], "--trace-max-mb") == 0) {
			max_mb = strtod(argv[1], &end);
			if (end == argv[1] || *end || !(max_mb >= 0.001 && max_mb <= 1e6)) {
				fprintf(stderr, "perflink-host export: --trace-max-mb takes a size in "
						"MB from 0.001 to 1e6, not '%s'\n", argv[1]);
				return 2;
			}
			eo.trace_max_bytes = (uint64_t)(max_mb * 1e6);
		} else if (strcmp(argv[0], "--sysroot") == 0) {
			eo.symbols.sysroot = argv[1];
		} else if (strcmp(argv[0], "--debug-dir") == 0) {
			eo.symbols.debug_dir = argv[1];
		} else {
			break;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc != 1 || argv[0][0] == '-') {
		fputs(usage_line, stderr);
		return 2;
	}
	return pl__export_dir(argv[0], &eo) < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct pl_host_session_hooks hooks = {
		.frame = on_frame,
		.line = on_line,
	};
	static const struct pl_host_session_hooks drain_hooks = {
		.raw = on_raw,
	};
	char err[PL_ERRBUF];
	enum pl_reply_mode mode;
	struct sigaction sa;
	struct pl_host h;
	int next, r, status;

	pl__log_init("perflink-host", true, 0);
	if (argc >= 2 && strcmp(argv[1], "export") == 0)
		return export_command(argc - 2, argv + 2);
	if (argc >= 2 && strcmp(argv[1], "compare") == 0)
		return pl__host_compare(argc - 1, argv + 1);
	r = pl__options_parse_argv(options, argc, argv, &next, err, sizeof(err));
	if (r == 1) {
		usage(stdout);
		return 0;
	}
	if (r < 0 || next < argc) {
		fprintf(stderr, "perflink-host: %s\n", r < 0 ? err : "unexpected argument");
		return 2;
	}
	if (parse_reply(&mode) < 0) {
		fprintf(stderr, "perflink-host: --reply must be echo, digest, ack or none\n");
		return 2;
	}
	memset(&h, 0, sizeof(h));
	if (pl__host_session_init(&h.session, mode, opt.drain ? &drain_hooks : &hooks, &h) < 0 ||
	    pl__latency_table_init(&h.table, (size_t)opt.max_frames_kept) < 0)
		pl__fatalx("out of memory");
	prepare_outputs(&h);
	pl__progress_init(&h.progress, stdout, isatty(STDOUT_FILENO) == 1);
	/* chosen before the first message arrives, so none waits for it */
	pl__payload_hash_choose();
	open_session(&h);

	/* no SA_RESTART: the signal ends the wait in poll at once; the first
	 * one ends the run and writes the files, a second one kills */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	status = run(&h);
	pl__progress_end(&h.progress);
	if (opt.drain)
		status = pl__host_report_drain(&h);
	else
		status |= pl__host_report(&h, &opt);
	if (h.session.rx.telemetry_out)
		fclose(h.session.rx.telemetry_out);
	if (h.have_files)
		pl__telemetry_files_close(&h.files);
	pl__host_session_free(&h.session);
	pl__live_metrics_free(&h.metrics);
	pl__latency_table_free(&h.table);
	pl__options_free(options);
	return status;
}
