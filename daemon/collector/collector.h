/* perflinkd's collector: producers (applications through libperflink, the
 * preload library's reporter) connect to its unix socket and get a shared
 * memory region; wakeups go both ways as bytes on that socket
 * (common/ipc/producer_proto.h). The collector
 * drains what they put there: frames go to the link without a copy,
 * telemetry lines go to the link (and wherever else the daemon sends
 * telemetry); the host's replies are routed back to the producer whose
 * frame they answer.
 *
 * A producer is untrusted: every record is checked (slot, length, state)
 * before it is used, a producer that sends nonsense is counted and, past a
 * limit, dropped; another producer, the daemon and the link keep working. */
#ifndef PL_DAEMON_COLLECTOR_H
#define PL_DAEMON_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pl_config.h"

#define PL_PRODUCER_SOCKET_DEFAULT PL_RUNSTATEDIR "/perflink/producers"

struct pl_loop;
struct pl_json;
struct pl_collector;

struct pl_collector_sink {
	/* A frame to send: 0 sent, 1 or 2 held by the link, -errno not sent.
	 * data is valid during the call only; payload_xxh3 is the wire
	 * checksum when the producer computed it, else NULL. */
	int (*frame)(void *ctx, uint64_t wire_frame_id, const void *data, size_t len,
		     const uint64_t *payload_xxh3);
	/* One JSON line ending in '\n' (NUL-terminated). */
	void (*telemetry)(void *ctx, const char *line, size_t len);
	/* Whether a frame of len bytes would be sent at once, for producers
	 * that keep every frame (PL_HELLO_KEEP_EVERY_FRAME): theirs wait in
	 * their slot until this says yes and pl__collector_writable is called.
	 * NULL: always. */
	bool (*frame_fits)(void *ctx, size_t len);
};

struct pl_collector_config {
	const char *path;          /* the producer socket */
	const char *group;         /* allowed besides root and the daemon's uid */
	unsigned max_producers;    /* 0: 32 */
	size_t max_frame_bytes;    /* largest slot a producer may ask for */
	size_t max_shm_bytes;      /* per producer; 0: 64 MiB */
};

/* Listen on cfg->path and drain producers from loop. 0, or -errno with the
 * reason logged. */
int pl__collector_open(struct pl_collector **out, struct pl_loop *loop,
		       const struct pl_collector_config *cfg, const struct pl_collector_sink *sink,
		       void *sink_ctx);
/* The host's reply to a frame: to the producer named in the frame id's top
 * bits. 0, -ENOENT (no such producer now), -ENOSPC (its ring is full:
 * dropped and counted). */
int pl__collector_reply(struct pl_collector *c, uint64_t wire_frame_id, const void *payload,
			size_t len);
/* Room opened on the link (or it came up): frames that wait for it go now,
 * in the order they came. */
void pl__collector_writable(struct pl_collector *c);
/* The link sent these frames (wire frame ids) but the host never got
 * them: each producer's count moves from sent to not sent. */
void pl__collector_frames_lost(struct pl_collector *c, const uint64_t *wire_frame_ids, size_t n);
/* The "collector" object of `perflink status`. */
void pl__collector_status(const struct pl_collector *c, struct pl_json *j);
void pl__collector_close(struct pl_collector *c);

#endif
