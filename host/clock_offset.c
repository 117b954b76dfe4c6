/* See clock_offset.h. */
#include "clock_offset.h"
#include <endian.h>
#include "wire.h"

#include <errno.h>
#include <string.h>

void pl__clock_offset_init(struct pl_clock_offset *c)
{
	memset(c, 0, sizeof(*c));
}

int pl__clock_offset_add(struct pl_clock_offset *c, uint64_t ping_send_ns, uint64_t device_recv_ns,
			 uint64_t host_now_ns)
{
	uint64_t rtt;

	if (host_now_ns < ping_send_ns || host_now_ns - ping_send_ns > PL_CLOCK_OFFSET_MAX_RTT_NS) {
		c->rejected++;
		return -EINVAL;
	}
	rtt = host_now_ns - ping_send_ns;
	/* unsigned arithmetic wraps, so any device value gives a defined
	 * difference; two monotonic clocks are far less than 2^63 ns apart */
	c->s[c->next].offset_ns = (int64_t)(device_recv_ns - (ping_send_ns + rtt / 2));
	c->s[c->next].rtt_ns = rtt;
	c->next = (c->next + 1) % PL_CLOCK_OFFSET_SAMPLES;
	if (c->n < PL_CLOCK_OFFSET_SAMPLES)
		c->n++;
	c->samples++;
	return 0;
}

bool pl__clock_offset_best(const struct pl_clock_offset *c, int64_t *offset_ns, uint64_t *rtt_ns)
{
	const struct pl_clock_sample *best = NULL;
	unsigned i;

	for (i = 0; i < c->n; i++) {
		/* on a tie the newer sample wins: it follows drift */
		unsigned k = (c->next + PL_CLOCK_OFFSET_SAMPLES - 1 - i) % PL_CLOCK_OFFSET_SAMPLES;

		if (!best || c->s[k].rtt_ns < best->rtt_ns)
			best = &c->s[k];
	}
	if (!best)
		return false;
	*offset_ns = best->offset_ns;
	*rtt_ns = best->rtt_ns;
	return true;
}

int pl__clock_offset_add_pong(struct pl_clock_offset *c, const struct pl_wire_header *hdr,
			      const uint8_t *payload, uint64_t now_ns)
{
	uint64_t times[2];

	if (hdr->payload_len != sizeof(times))
		return -EINVAL;
	memcpy(times, payload, sizeof(times));
	return pl__clock_offset_add(c, le64toh(times[0]), le64toh(times[1]), now_ns) < 0 ? -EINVAL
											 : 0;
}
