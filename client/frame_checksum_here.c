/* The producer computes each frame's checksum itself (frame_checksum.h):
 * it is the link's only per-byte cost besides the kernel's copies, so it is
 * paid in the producer's thread, not on perflinkd's path to the link. */
#include "frame_checksum.h"
#include "payload_hash.h"
#include "wire.h"

void pl__frame_checksum_prepare(void)
{
	/* the XXH3 build is measured and chosen now, not on the first frame */
	pl__payload_hash_choose();
}

void pl__frame_checksum(struct pl_producer_frame_rec *rec, const void *frame, size_t len)
{
	rec->flags |= PL_FRAME_REC_HASHED;
	rec->payload_xxh3 = pl__wire_payload_hash(frame, len);
}
