/* See link_latency.h. */
#include "link_latency.h"
#include "clock.h"

#include <stdio.h>
#include <string.h>

void pl__latency_reset(struct pl_latency *lt)
{
	memset(lt, 0, sizeof(*lt));
}

void pl__latency_sent(struct pl_latency *lt, uint64_t frame_id, uint64_t send_ns)
{
	lt->sent[lt->next] = (struct pl_latency_sent){ frame_id, send_ns, false };
	lt->next = (lt->next + 1) % PL_LATENCY_FRAMES;
	if (lt->count < PL_LATENCY_FRAMES)
		lt->count++;
}

enum pl_latency_match pl__latency_reply(struct pl_latency *lt, uint64_t frame_id,
					uint64_t reply_ns, uint64_t *rtt_ns)
{
	/* Replies come in order, so the frame is almost always the oldest
	 * unanswered one near the newest end: search from the newest back. */
	for (unsigned i = 1; i <= lt->count; i++) {
		struct pl_latency_sent *s =
			&lt->sent[(lt->next + PL_LATENCY_FRAMES - i) % PL_LATENCY_FRAMES];

		if (s->frame_id != frame_id)
			continue;
		if (s->answered) {
			lt->repeated++;
			return PL_LATENCY_REPEATED;
		}
		if (reply_ns < s->send_ns)
			break;
		s->answered = true;
		*rtt_ns = reply_ns - s->send_ns;
		lt->replies++;
		lt->last_rtt_ns = *rtt_ns;
		if (*rtt_ns > lt->max_rtt_ns)
			lt->max_rtt_ns = *rtt_ns;
		if (lt->batch_len < PL_LATENCY_BATCH) {
			lt->batch[lt->batch_len][0] = frame_id;
			lt->batch[lt->batch_len][1] = s->send_ns;
			lt->batch[lt->batch_len][2] = reply_ns;
			lt->batch_len++;
		} else {
			lt->dropped++;
		}
		return PL_LATENCY_MATCHED;
	}
	lt->unmatched++;
	return PL_LATENCY_UNKNOWN;
}

bool pl__latency_batch_full(const struct pl_latency *lt)
{
	return lt->batch_len == PL_LATENCY_BATCH;
}

bool pl__latency_take_batch(struct pl_latency *lt, struct pl_json *j)
{
	if (!lt->batch_len)
		return false;
	pl__json_str(j, "type", "frame_latency");
	pl__json_u64(j, "mono_ns", pl__mono_ns()); /* when the batch was sent */
	pl__json_begin_array(j, "frames");
	for (unsigned i = 0; i < lt->batch_len; i++) {
		char id[24];

		/* the frame id as a string: a producer's ids pass 2^53 (its
		 * number in the top 16 bits), where JSON readers that hold
		 * numbers as doubles (JavaScript, many others) would round
		 * them; the times, CLOCK_MONOTONIC ns, stay numbers */
		snprintf(id, sizeof(id), "%llu", (unsigned long long)lt->batch[i][0]);
		pl__json_begin_array(j, NULL);
		pl__json_str(j, NULL, id);
		pl__json_u64(j, NULL, lt->batch[i][1]);
		pl__json_u64(j, NULL, lt->batch[i][2]);
		pl__json_end_array(j);
	}
	pl__json_end_array(j);
	pl__json_u64(j, "dropped", lt->dropped);
	lt->batch_len = 0;
	return true;
}

void pl__latency_batch_lost(struct pl_latency *lt, unsigned entries)
{
	lt->dropped += entries;
}
