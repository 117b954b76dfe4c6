/* perflinkd computes the checksum of this producer's frames
 * (frame_checksum.h): a record without PL_FRAME_REC_HASHED is hashed by the
 * daemon before it goes to the link, as producer_proto.h allows. The
 * preload library's producer is telemetry-only and makes no frames; what
 * this file buys it is that it links no XXH3 and measures no XXH3 builds
 * when it connects. */
#include "frame_checksum.h"

void pl__frame_checksum_prepare(void)
{
}

void pl__frame_checksum(struct pl_producer_frame_rec *rec, const void *frame, size_t len)
{
	(void)rec;
	(void)frame;
	(void)len;
}
