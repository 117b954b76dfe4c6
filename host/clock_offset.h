/* The device's clock relative to the host's, NTP-style: the host sends a
 * PING stamped with its CLOCK_MONOTONIC; the device answers with that stamp
 * and its own CLOCK_MONOTONIC when the ping arrived. Assuming the two
 * directions take equally long,
 *
 *   offset = device_recv - (ping_send + rtt / 2),  rtt = host_now - ping_send
 *
 * and device time = host time + offset. The error of one sample is at most
 * rtt / 2, so of the last PL_CLOCK_OFFSET_SAMPLES samples the one with the
 * smallest round trip is kept: a sample delayed by a busy link or a
 * scheduler hiccup has a large rtt and loses. Old samples age out so that a
 * slow drift between the clocks is followed. */
#ifndef PL_HOST_CLOCK_OFFSET_H
#define PL_HOST_CLOCK_OFFSET_H

#include <stdbool.h>
#include <stdint.h>

#define PL_CLOCK_OFFSET_SAMPLES 16
/* A pong whose round trip is longer than this is not used (a stale or
 * made-up answer). */
#define PL_CLOCK_OFFSET_MAX_RTT_NS (10ull * 1000000000ull)

struct pl_clock_sample {
	int64_t offset_ns;
	uint64_t rtt_ns;
};

struct pl_clock_offset {
	struct pl_clock_sample s[PL_CLOCK_OFFSET_SAMPLES];
	unsigned n, next;
	uint64_t samples, rejected;
};

void pl__clock_offset_init(struct pl_clock_offset *c);
/* One ping/pong exchange, all in nanoseconds: ping_send_ns and host_now_ns
 * on the host's clock, device_recv_ns on the device's. 0, or -EINVAL (and
 * counted in rejected) when the answer cannot belong to a ping of ours:
 * it came back before it was sent, or after PL_CLOCK_OFFSET_MAX_RTT_NS. */
/* A PONG message as it came off the wire (docs/wire.md): its 16-byte
 * payload checked and fed to pl__clock_offset_add. 0, or -EINVAL when the
 * payload is malformed or the sample impossible (the caller counts it). */
struct pl_wire_header;
int pl__clock_offset_add_pong(struct pl_clock_offset *c, const struct pl_wire_header *hdr,
			      const uint8_t *payload, uint64_t now_ns);
int pl__clock_offset_add(struct pl_clock_offset *c, uint64_t ping_send_ns, uint64_t device_recv_ns,
			 uint64_t host_now_ns);
/* The estimate: false while there is no sample. */
bool pl__clock_offset_best(const struct pl_clock_offset *c, int64_t *offset_ns, uint64_t *rtt_ns);

#endif
