/* What the device said it is: the last HELLO of the run (docs/wire.md
 * "HELLO"), kept for summary.json's "device" object, which report.html's
 * header and `perflink-host export` read back from the recording.
 *
 * The payload is the device's and may be anything: only the known scalar
 * keys are taken, strings cut to their field and anything but printable
 * ASCII replaced by '?', numbers only when they are whole and in range;
 * a payload that is not one JSON object counts as malformed and changes
 * nothing that was kept. */
#ifndef PL_HOST_DEVICE_HELLO_H
#define PL_HOST_DEVICE_HELLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json_writer.h"

#define PL_DEVICE_HELLO_MAX_BYTES 65536 /* larger payloads are malformed */

struct pl_device_hello {
	bool have;                 /* one well-formed HELLO seen */
	uint64_t hellos;           /* every HELLO, well-formed or not */
	uint64_t malformed;
	char program[64], version[64], transport[16];
	int64_t wire_version, packet_size, deadline_ms, max_host_payload; /* -1: not said */
};

void pl__device_hello_init(struct pl_device_hello *h);
/* One HELLO payload. 0, or -EINVAL (counted malformed, the last good one
 * kept). */
int pl__device_hello_take(struct pl_device_hello *h, const uint8_t *payload, size_t len);
/* "device": {...} into j's open object, or "device": null when no
 * well-formed HELLO came. */
void pl__device_hello_json(const struct pl_device_hello *h, struct pl_json *j);

#endif
