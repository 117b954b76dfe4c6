/* libFuzzer target: the wire stream receiver (common/wire/wire.h) on arbitrary
 * bytes fed in arbitrary pieces. The first input byte chooses the piece size
 * so that split headers and split payloads are explored too. Every message
 * it hands out must check again from scratch. */
#include "wire.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pl_wire_stream s;
	static int ready;
	struct pl_wire_header h;
	const uint8_t *payload;
	size_t piece, off = 1;

	if (!ready) {
		if (pl__wire_stream_init(&s, 64, 4096) < 0)
			abort();
		ready = 1;
	}
	pl__wire_stream_reset(&s, 64);
	if (size < 1)
		return 0;
	piece = (size_t)data[0] + 1;
	while (off < size) {
		size_t n = size - off < piece ? size - off : piece;

		off += pl__wire_stream_feed(&s, data + off, n);
		while (pl__wire_stream_next(&s, &h, &payload) == 1) {
			if (pl__wire_check_body(&h, payload - PL_WIRE_HEADER_SIZE,
						pl__wire_message_size(h.payload_len, 64),
						64) != PL_WIRE_OK)
				abort();
		}
	}
	return 0;
}
