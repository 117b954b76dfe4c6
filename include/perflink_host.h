/* libperflink-host: the host end of the perflink link as a library, for an
 * application that answers the device's frames itself (a model that
 * returns its output for each camera frame, say) instead of running
 * perflink-host.
 *
 * It connects to perflinkd over USB (libusb) or TCP, checks every message
 * as perflink-host does (header, length, checksum, padding, sequence),
 * answers the device's pings, pings it once a second for the clock offset,
 * and hands the application each frame that passed the checks. What the
 * frame callback writes into the reply buffer goes back to the device as
 * the frame's REPLY (docs/wire.md), where libperflink gives it to the
 * producer that sent the frame (pl_reply_read in perflink.h).
 *
 *   static size_t answer(void *ctx, uint64_t frame_id, const void *frame,
 *                        size_t len, void *reply, size_t reply_cap)
 *   {
 *           return run_model(frame, len, reply, reply_cap);
 *   }
 *
 *   struct plh_options o = { .tcp = "192.168.1.20:7200" };
 *   struct plh_host *h;
 *   if (plh_open(&h, &o) == 0) {
 *           while (running)
 *                   if (plh_run(h, answer, model, 100) < 0)
 *                           break;
 *           plh_close(h);
 *   }
 *
 * The connection is made in plh_run and made again after it drops (TCP:
 * every 0.5 s; USB: the device is looked for again after an unplug). Each
 * change of the connection is logged once on stderr.
 *
 * Single-threaded: a plh_host is used from one thread at a time, and every
 * callback runs inside plh_run on the calling thread. Functions return 0
 * (or a count where said) on success and a negative errno on failure; they
 * leave errno alone. Link with -lperflink-host. */
#ifndef PERFLINK_HOST_H
#define PERFLINK_HOST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(PLH_EXPORT)
#define PLH_API __attribute__((visibility("default")))
#else
#define PLH_API
#endif

#define PLH_API_VERSION 1

struct plh_host;

struct plh_options {
	/* "HOST:PORT" or "[IPV6]:PORT" where perflinkd listens (perflinkd
	 * --link-tcp); NULL: USB. */
	const char *tcp;
	/* USB: only a device with this vendor and product id; 0: any device
	 * with a perflink interface (docs/wire.md "Finding the device on USB":
	 * class 0xff, subclass 0x50), whatever its ids. (Before 1.2.0, 0 meant
	 * perflinkd's default ids, 0x1d6b:0x0104.) */
	uint16_t vid, pid;
	/* USB: only the device with this serial number; NULL: the first. */
	const char *serial;
	/* TCP: the pre-shared key's file, as perflinkd's link-tcp-key-file
	 * (mode 0600; docs/wire.md "TCP authentication"): the device must prove
	 * it holds the key, and the host proves it too. NULL: no key, and a
	 * device that asks for one is refused. plh_open fails with -EINVAL
	 * when the file cannot be used (the reason is logged). (Added in
	 * 1.1.0, in the first reserved slot.) */
	union {
		const char *tcp_key_file;
		uint64_t reserved_tcp_key_file;
	};
	/* Zero (as "= { ... }" leaves it): room for options to come, so the
	 * struct keeps its size. plh_open refuses a nonzero one (-EINVAL): a
	 * program built against a newer perflink_host.h asked for something
	 * this library does not do. */
	uint64_t reserved[7];
};

/* One frame that passed every check. frame points at its len bytes, valid
 * only during the call. Write the reply into reply (reply_cap bytes: what
 * one message can carry, 16 MiB; perflinkd takes messages up to
 * its largest message size, 4 MiB by default, and the producer on the
 * device keeps as much as its reply_bytes) and return its length; return 0
 * to send no reply for this frame. A length beyond reply_cap sends nothing and
 * is counted in reply_failures. plh_run called from inside returns
 * -EBUSY; do not call plh_close from inside. */
typedef size_t (*plh_frame_fn)(void *ctx, uint64_t frame_id, const void *frame, size_t len,
			       void *reply, size_t reply_cap);

/* One telemetry line from the device (resource samples, stall events,
 * profile reports, link diagnostics, round trips: see docs/wire.md), valid
 * JSON, without its newline and NUL-terminated; len is strlen(line).
 * type: the line's "type" when it is a plain name ([a-z0-9_-], at most 40
 * characters), else NULL. Lines that are not JSON are counted in
 * telemetry_bad_lines and not handed out. Both pointers are valid only
 * during the call. */
typedef void (*plh_telemetry_fn)(void *ctx, const char *type, const char *line, size_t len);

/* Set up the transport; nothing is connected before the first plh_run.
 * -EINVAL: a bad address (logged), o is NULL or o->reserved is not zero
 * (logged); -EIO: libusb could not
 * start; -ENOMEM. */
PLH_API int plh_open(struct plh_host **out, const struct plh_options *o);

/* Receive the device's telemetry lines in fn, from the next plh_run on;
 * fn NULL stops it. */
PLH_API void plh_set_telemetry(struct plh_host *h, plh_telemetry_fn fn, void *ctx);

/* Wait up to timeout_ms (0: not at all) for the link, then connect,
 * receive, check and reply, calling fn for every frame (fn NULL: frames
 * are counted, not answered), as poll(2) does once: it returns when
 * something was handled (frames, but also a ping, telemetry, a change of
 * the connection), when the time is up or when a signal came. Returns the
 * number of frames handled (0 or more), or a negative errno when the host
 * itself failed (not the connection, which is retried). */
PLH_API int plh_run(struct plh_host *h, plh_frame_fn fn, void *ctx, int timeout_ms);

/* 1 while a device is connected, else 0. */
PLH_API int plh_connected(const struct plh_host *h);

struct plh_stats {
	uint64_t frames, frame_bytes;    /* frames that passed the checks */
	uint64_t replies;                /* handed to the link */
	/* replies not sent: longer than reply_cap, or the link refused them
	 * (TCP: 32 MiB of replies already waited for a device not reading) */
	uint64_t reply_failures;
	uint64_t telemetry_lines;        /* lines that came, blank ones aside */
	uint64_t telemetry_bad_lines;    /* of those, dropped: not JSON (or no memory) */
	uint64_t malformed;              /* messages that failed the checks: skipped */
	uint64_t sequence_gaps, lost_messages;
	uint64_t connects, disconnects;
	/* device clock = host CLOCK_MONOTONIC + clock_offset_ns, within
	 * clock_offset_rtt_ns / 2, once have_clock_offset */
	int have_clock_offset;
	int64_t clock_offset_ns;
	uint64_t clock_offset_rtt_ns;
	uint64_t reserved[8];            /* zeroed: room for counts to come */
};
PLH_API void plh_get_stats(const struct plh_host *h, struct plh_stats *st);

/* Give replies still queued up to a second to leave, then disconnect and
 * free everything. h may be NULL. */
PLH_API void plh_close(struct plh_host *h);

#ifdef __cplusplus
}
#endif

#endif
