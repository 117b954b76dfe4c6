/* libperflink: hand frames and telemetry to perflinkd, which sends them to
 * perflink-host over the link (USB or TCP), and get the host's replies.
 *
 * A frame is written straight into shared memory that perflinkd maps
 * (pl_frame_begin gives the buffer, pl_frame_commit hands it over): no copy
 * is made before the link's io_submit. Nothing here blocks: a full link
 * holds the newest frame in perflinkd (older held frames are replaced and
 * counted), a full ring refuses and counts.
 *
 *   struct pl_producer *p;
 *   if (pl_producer_open(&p, NULL) == 0) {
 *           size_t cap;
 *           void *buf = pl_frame_begin(p, &cap);
 *           if (buf) {
 *                   size_t len = encode_into(buf, cap);
 *                   pl_frame_commit(p, buf, len, frame_number);
 *           }
 *           ...
 *           uint64_t id; size_t len; char reply[256];
 *           while (pl_reply_read(p, &id, reply, sizeof(reply), &len) == 1)
 *                   use_reply(id, reply, len);
 *   }
 *
 * With PL_PRODUCER_KEEP_EVERY_FRAME in the options' flags, no frame is
 * replaced: a frame waits in its slot until the link has room for it, so
 * a slow or absent host slows the producer down instead (pl_frame_begin
 * returns NULL once every slot waits, and pl_producer_close waits, at
 * most 2 s, for the frames still waiting).
 *
 * Functions return 0 (or 1 where said) on success and a negative errno on
 * failure; they leave errno alone. A pl_producer may be used from several
 * threads. Link with -lperflink. */
#ifndef PERFLINK_H
#define PERFLINK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(PL_CLIENT_EXPORT)
#define PERFLINK_API __attribute__((visibility("default")))
#else
#define PERFLINK_API
#endif

/* 2: pl_producer_reopen; -EPIPE from pl_frame_commit and pl_telemetry, and
 * pl_producer_fd readable, once perflinkd went away
 * 3: frames_queued in pl_producer_stats; pl_producer_close waits for the
 * frames of a producer that keeps every frame */
#define PERFLINK_API_VERSION 3

struct pl_producer;

struct pl_producer_options {
	/* perflinkd's producer socket; NULL: $PERFLINK_SOCKET, else the
	 * daemon's default (/run/perflink/producers). */
	const char *socket_path;
	const char *name;          /* shown in `perflink status`; NULL: the program */
	unsigned frame_slots;      /* frames in flight at once; 0: 4 (at most 32) */
	size_t frame_bytes;        /* the largest frame; 0: no frames, telemetry only */
	size_t reply_bytes;        /* room for replies not yet read; 0: 64 KiB */
	size_t telemetry_bytes;    /* room for telemetry not yet taken; 0: 64 KiB */
	uint64_t flags;            /* PL_PRODUCER_* below; 0: frames may be replaced */
	/* Zero (as "= { ... }" leaves it): room for options to come, so the
	 * struct keeps its size. pl_producer_open refuses a nonzero one
	 * (-EINVAL): a program built against a newer perflink.h asked for
	 * something this library does not do. */
	uint64_t reserved[7];
};

/* Every frame is sent, in order: one the link has no room for waits in its
 * slot (and the records after it wait behind it) instead of being held and
 * replaced by a newer one. Backpressure: with every slot waiting,
 * pl_frame_begin returns NULL. While no host is connected frames wait too.
 * pl_producer_close waits for them, at most 2 s; those perflinkd still
 * holds then are counted not sent in `perflink status` (collector
 * frames_left_not_sent), since no one waits for them any more. */
#define PL_PRODUCER_KEEP_EVERY_FRAME 0x1u

/* Connect to perflinkd. -ENOENT or -ECONNREFUSED: no daemon runs; -EACCES:
 * not allowed (root, perflinkd's user and its control group are);
 * -EINVAL/-E2BIG: the daemon refused the sizes (a message says why), or
 * -EINVAL: opt->reserved is not zero or opt->flags has an unknown bit;
 * -EOPNOTSUPP: the daemon does not do what opt->flags asks (an older one);
 * -ETIMEDOUT: the daemon did not answer within 2 s (stopped or stuck). */
PERFLINK_API int pl_producer_open(struct pl_producer **out,
				  const struct pl_producer_options *opt);
/* perflinkd still takes the frames committed before the close (they count
 * in `perflink status` then, not in this producer's stats). With
 * PL_PRODUCER_KEEP_EVERY_FRAME the close first waits, at most 2 s, until
 * perflinkd has taken them, since such frames may wait for the link's
 * room; otherwise it does not wait. */
PERFLINK_API void pl_producer_close(struct pl_producer *p);
/* 0 while perflinkd is there; -EPIPE once it went away, for good: the
 * producer's frames and telemetry go nowhere (pl_frame_commit and
 * pl_telemetry say -EPIPE too, and pl_producer_fd is readable). Then
 * pl_producer_reopen when the daemon is back. */
PERFLINK_API int pl_producer_check(struct pl_producer *p);
/* Close *p and open a new producer with the options *p was opened with:
 * after perflinkd restarted. 0 with the new one in *p, or as
 * pl_producer_open with *p NULL; the old one is closed either way. */
PERFLINK_API int pl_producer_reopen(struct pl_producer **p);

/* A free frame buffer of *capacity bytes to write the frame into, or NULL
 * when every slot is still on its way to the link (wait for
 * pl_producer_fd to become readable, then try again; if perflinkd went
 * away, pl_producer_check says so). */
PERFLINK_API void *pl_frame_begin(struct pl_producer *p, size_t *capacity);
/* Hand the buffer's first len bytes to perflinkd as frame frame_id (48
 * bits are kept; the host's reply carries it back). The buffer is not
 * yours any more. -EMSGSIZE past the capacity, -ENOBUFS when the ring to
 * the daemon is full, -EPIPE when perflinkd went away (in both the buffer
 * is released and the frame counted lost). */
PERFLINK_API int pl_frame_commit(struct pl_producer *p, void *buf, size_t len,
				 uint64_t frame_id);
/* Give the buffer back without sending it. */
PERFLINK_API void pl_frame_abort(struct pl_producer *p, void *buf);

/* The next reply from the host: 1 with *frame_id and *len (the reply's
 * bytes in buf, cut to cap), 0 when there is none now. */
PERFLINK_API int pl_reply_read(struct pl_producer *p, uint64_t *frame_id, void *buf,
			       size_t cap, size_t *len);
/* Readable (poll/epoll) when a reply arrived or a frame buffer came back,
 * and for good once perflinkd went away (pl_producer_check says -EPIPE).
 * Call pl_producer_ack_fd before polling again; do not read it yourself.
 * Made on the first call (a negative errno if that failed), then the same. */
PERFLINK_API int pl_producer_fd(const struct pl_producer *p);
PERFLINK_API void pl_producer_ack_fd(struct pl_producer *p);

/* One or more JSON lines, each ending in '\n', sent to the host as
 * telemetry. -ENOBUFS when the ring is full (counted); -EPIPE when
 * perflinkd went away. */
PERFLINK_API int pl_telemetry(struct pl_producer *p, const char *json_lines);

/* Each frame committed is in exactly one of frames_sent, frames_held,
 * frames_not_sent and frames_queued: frames_committed is their sum (read
 * while another thread commits, a frame may show as taken a moment before
 * it shows as committed). */
struct pl_producer_stats {
	/* frames_sent: reached the host (one the host's connection lost
	 * before it took it moves to frames_not_sent, docs/perflinkd.md) */
	uint64_t frames_committed, frames_sent, frames_held, frames_not_sent;
	uint64_t frames_lost;        /* refused here: ring full; not committed */
	uint64_t telemetry_dropped, replies_dropped;
	uint32_t producer_id;
	/* committed, not taken by perflinkd yet: in the ring, or waiting in
	 * their slot for the link's room (PL_PRODUCER_KEEP_EVERY_FRAME) */
	uint64_t frames_queued;
	uint64_t reserved[7];        /* zeroed: room for counts to come */
};
PERFLINK_API void pl_producer_get_stats(struct pl_producer *p, struct pl_producer_stats *st);

/* Renderer pipeline marks (a car renderer's RenderPipelineSummary): call once per
 * published frame with its CLOCK_MONOTONIC stamps (0 where unknown). Every
 * 5 s a "pipeline" summary is sent to perflinkd (when it runs) and appended
 * to $PERFLINK_PIPELINE_OUT (when set); the period running at exit is
 * summarised then (its "period_s" says how long it was). Thread-safe,
 * never blocks on I/O. */
PERFLINK_API void pl_frame_published(uint64_t captured_ns, uint64_t submitted_ns,
				     uint64_t published_ns, uint32_t camera_stream,
				     uint64_t frame_id, uint64_t eof_ns);

#ifdef __cplusplus
}
#endif

#endif
