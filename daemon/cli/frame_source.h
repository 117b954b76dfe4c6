/* Frames made and hashed ahead on a thread of their own, for `perflink
 * stream` and `perflink integrity`: in a product the frame's bytes and its
 * wire checksum (XXH3) are made by the producer in its own process
 * (libperflink), beside perflinkd's sending, and this gives the device-side
 * tools the same shape. A few frames ahead at most; the sending thread
 * takes them in order and gives each buffer back once the link has copied
 * or submitted it. */
#ifndef PERFLINK_FRAME_SOURCE_H
#define PERFLINK_FRAME_SOURCE_H

#include <stddef.h>
#include <stdint.h>

struct pl_frame_source;

/* Writes frame frame_id's bytes into buf (len bytes). Runs on the source's
 * thread: it must only read state that does not change meanwhile. */
typedef void (*pl_frame_make_fn)(void *ctx, uint8_t *buf, size_t len, uint64_t frame_id);

/* frames 0 .. count-1 of len bytes each, up to `ahead` made before they
 * are taken. ahead 0: no thread; each frame is made in the caller's thread,
 * right after the one before it is released (so while that one is in
 * flight), or when it is taken if it was not made yet. 0, or -ENOMEM /
 * -EAGAIN (no thread). */
int pl__frame_source_start(struct pl_frame_source **out, size_t len, uint64_t count,
			   unsigned ahead, pl_frame_make_fn make, void *ctx);

/* Frame frame_id (the next in order after the last one released), waiting
 * until it is made; its payload XXH3 in *hash. NULL past the last frame. */
const uint8_t *pl__frame_source_take(struct pl_frame_source *fs, uint64_t frame_id,
				     uint64_t *hash);

/* The buffer of the frame taken last may be made into a later frame. */
void pl__frame_source_release(struct pl_frame_source *fs);

/* Time the source spent hashing so far, in ns. */
uint64_t pl__frame_source_hash_ns(struct pl_frame_source *fs);

/* Stops the thread (waiting for the frame in the making) and frees. */
void pl__frame_source_stop(struct pl_frame_source *fs);

#endif
