/* perflinkd's use of the USB link: start it from the link-* settings, send
 * the modules' JSON lines over it as telemetry (lower priority than frames:
 * the link bounds and counts what waits), and once a second log and send the
 * link's own diagnostics (last_send and totals, docs/wire.md). */
#ifndef PL_DAEMON_DAEMON_LINK_H
#define PL_DAEMON_DAEMON_LINK_H

#include "event_loop.h"
#include "json_writer.h"
#include "link_options.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pl_daemon_link;

/* The host's reply to a frame (frame_id as on the wire). */
typedef void (*pl__daemon_link_reply_fn)(void *ctx, uint64_t frame_id, const uint8_t *payload,
					 size_t len);

/* Room opened for frames (sends completed, or the host came): a moment to
 * offer frames that wait for it (pl__daemon_link_frame_fits). */
typedef void (*pl__daemon_link_room_fn)(void *ctx);

/* 0, or -errno (logged); -ENOTSUP where the link is not built (no libaio).
 * on_reply and on_room may be NULL (replies are then counted only); both
 * get ctx. */
int pl__daemon_link_start(struct pl_daemon_link **out, struct pl_loop *loop,
			  const struct pl_link_settings *s, pl__daemon_link_reply_fn on_reply,
			  pl__daemon_link_room_fn on_room, void *ctx);
/* Frames sent that the host never got (the connection went away first):
 * for their producers' counts. ctx is the start's. */
typedef void (*pl__daemon_link_lost_fn)(void *ctx, const uint64_t *frame_ids, size_t n);
void pl__daemon_link_on_lost(struct pl_daemon_link *dl, pl__daemon_link_lost_fn on_lost);
/* Whether a frame of len bytes would be sent at once (not held). */
bool pl__daemon_link_frame_fits(const struct pl_daemon_link *dl, size_t len);
/* A producer's frame: 0 sent, 1 or 2 held (newest wins), -errno not sent
 * (-ENOTCONN: no host). payload_xxh3: its wire checksum, or NULL. */
int pl__daemon_link_frame(struct pl_daemon_link *dl, uint64_t frame_id, const void *data,
			  size_t len, const uint64_t *payload_xxh3);
/* Hand one JSON line (ending in '\n') to the host; dropped and counted
 * while the host is not there or the queue is full. */
void pl__daemon_link_telemetry(struct pl_daemon_link *dl, const char *json_line);
/* Replies the host sent that never reached a producer because their
 * connection had been dropped (TCP; read and discarded while it drained). */
uint64_t pl__daemon_link_replies_discarded(const struct pl_daemon_link *dl);
/* The "link" object of `perflink status`. */
void pl__daemon_link_status(const struct pl_daemon_link *dl, struct pl_json *j);
void pl__daemon_link_stop(struct pl_daemon_link *dl);
/* Remove the gadget these settings made (link-setup-gadget): unbind it,
 * unmount functionfs, remove its configfs directories. Root's work: the
 * root cleanup process (daemon/core/root_cleanup.h) does it when perflinkd
 * ran as its own user; otherwise the link does it as it stops. */
void pl__daemon_link_remove_gadget(const struct pl_link_settings *s);

#endif
