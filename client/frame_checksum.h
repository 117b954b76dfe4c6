/* Who computes a committed frame's wire checksum (XXH3-64 of its bytes,
 * docs/wire.md), chosen in the build (client/meson.build), one file each:
 *   frame_checksum_here.c        the producer, in the thread that made the
 *                                frame (PL_FRAME_REC_HASHED): libperflink
 *   frame_checksum_perflinkd.c   perflinkd, on its way to the link: the
 *                                preload library, which is loaded into every
 *                                process it is set for and so must not need
 *                                libxxhash (issue 16)
 * The wire carries the same checksum either way. */
#ifndef PL_CLIENT_FRAME_CHECKSUM_H
#define PL_CLIENT_FRAME_CHECKSUM_H

#include <stddef.h>

#include "producer_proto.h"

/* At pl_producer_open: whatever the checksum needs made ready, so that no
 * frame pays for it. Safe from several threads. */
void pl__frame_checksum_prepare(void);

/* Fill rec's checksum fields (flags, payload_xxh3) for the len bytes at
 * frame, or leave them zero for perflinkd to compute. */
void pl__frame_checksum(struct pl_producer_frame_rec *rec, const void *frame, size_t len);

#endif
