/* The host's clock offset estimator: exact on symmetric exchanges, the
 * smallest round trip of the last 16 wins, old samples age out, and
 * answers that cannot belong to a ping are refused. */
#include "clock_offset.h"
#include "tap.h"

#include <errno.h>

#define MS 1000000ull
#define DEVICE_AHEAD 5000000000ll /* the device's clock reads 5 s more */

/* A ping sent at host time t whose trip out takes up_ns and back down_ns. */
static int exchange(struct pl_clock_offset *c, uint64_t t, uint64_t up_ns, uint64_t down_ns)
{
	return pl__clock_offset_add(c, t, (uint64_t)((int64_t)(t + up_ns) + DEVICE_AHEAD),
				    t + up_ns + down_ns);
}

int main(void)
{
	struct pl_clock_offset c;
	int64_t offset;
	uint64_t rtt, t = 1000 * MS;
	int i;

	pl__clock_offset_init(&c);
	TAP_OK(!pl__clock_offset_best(&c, &offset, &rtt), "no estimate before the first pong");

	TAP_OK(exchange(&c, t, 2 * MS, 2 * MS) == 0, "a symmetric exchange is taken");
	TAP_OK(pl__clock_offset_best(&c, &offset, &rtt), "an estimate after one pong");
	TAP_OK(offset == DEVICE_AHEAD, "symmetric delays give the exact offset (%lld)",
	       (long long)offset);
	TAP_EQ_U64(rtt, 4 * MS, "its round trip");

	/* asymmetric: out 9 ms, back 1 ms; the error is (up - down) / 2 */
	pl__clock_offset_init(&c);
	exchange(&c, t, 9 * MS, 1 * MS);
	pl__clock_offset_best(&c, &offset, &rtt);
	TAP_OK(offset == DEVICE_AHEAD + 4 * (int64_t)MS,
	       "an asymmetric exchange is off by half the difference (%lld)", (long long)offset);
	TAP_OK(offset - DEVICE_AHEAD <= (int64_t)rtt / 2, "and never by more than rtt/2");

	/* a quick exchange among slow ones wins */
	pl__clock_offset_init(&c);
	for (i = 0; i < 10; i++)
		exchange(&c, t + (uint64_t)i * 1000 * MS, 30 * MS, 2 * MS);
	exchange(&c, t + 10000 * MS, 100000, 100000);
	for (i = 11; i < 16; i++)
		exchange(&c, t + (uint64_t)i * 1000 * MS, 2 * MS, 40 * MS);
	pl__clock_offset_best(&c, &offset, &rtt);
	TAP_EQ_U64(rtt, 200000, "the smallest round trip of the window is kept");
	TAP_OK(offset == DEVICE_AHEAD, "and its offset (%lld)", (long long)offset);

	/* 16 more samples push the quick one out of the window */
	for (i = 16; i < 32; i++)
		exchange(&c, t + (uint64_t)i * 1000 * MS, 3 * MS, 3 * MS);
	pl__clock_offset_best(&c, &offset, &rtt);
	TAP_EQ_U64(rtt, 6 * MS, "a sample older than the last 16 ages out");
	TAP_EQ_U64(c.samples, 32, "every sample counted");

	/* drift: the device clock moves 1 ms ahead; a new minimum follows it */
	pl__clock_offset_add(&c, t + 40000 * MS, (uint64_t)((int64_t)(t + 40000 * MS) + DEVICE_AHEAD) + MS + 50000,
			     t + 40000 * MS + 100000);
	pl__clock_offset_best(&c, &offset, &rtt);
	TAP_OK(offset == DEVICE_AHEAD + (int64_t)MS, "the newest smallest sample follows a drift (%lld)",
	       (long long)offset);

	/* answers that cannot belong to a ping of ours */
	TAP_OK(pl__clock_offset_add(&c, t + 2 * MS, t, t + MS) == -EINVAL,
	       "a pong before its ping is refused");
	TAP_OK(pl__clock_offset_add(&c, t, t, t + PL_CLOCK_OFFSET_MAX_RTT_NS + 1) == -EINVAL,
	       "a pong after the longest round trip is refused");
	TAP_EQ_U64(c.rejected, 2, "refusals counted");
	pl__clock_offset_best(&c, &offset, &rtt);
	TAP_OK(offset == DEVICE_AHEAD + (int64_t)MS, "refused answers leave the estimate alone");

	/* any device value: wrapping, not undefined behaviour */
	TAP_OK(pl__clock_offset_add(&c, t, UINT64_MAX, t + 1) == 0, "a hostile device time is taken");
	pl__clock_offset_best(&c, &offset, &rtt);
	TAP_EQ_U64(rtt, 1, "as the quickest sample");
	return tap_done();
}
