/* See latency_table.h. */
#include "latency_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int pl__latency_table_init(struct pl_latency_table *t, size_t max_frames)
{
	memset(t, 0, sizeof(*t));
	/* the index holds record numbers + 1 in 32 bits */
	if (max_frames == 0 || max_frames > UINT32_MAX / 4)
		return -EINVAL;
	t->max_frames = max_frames;
	return 0;
}

void pl__latency_table_free(struct pl_latency_table *t)
{
	free(t->rec);
	free(t->index);
	t->rec = NULL;
	t->index = NULL;
}

static size_t slot_of(uint64_t frame_id, size_t cap)
{
	/* frame ids are usually consecutive: mix them (splitmix64's finaliser) */
	frame_id ^= frame_id >> 30;
	frame_id *= 0xbf58476d1ce4e5b9ull;
	frame_id ^= frame_id >> 27;
	frame_id *= 0x94d049bb133111ebull;
	frame_id ^= frame_id >> 31;
	return (size_t)frame_id & (cap - 1);
}

static void index_put(uint32_t *index, size_t cap, const struct pl_frame_rec *rec, size_t i)
{
	size_t s = slot_of(rec[i].frame_id, cap);

	while (index[s] && rec[index[s] - 1].frame_id != rec[i].frame_id)
		s = (s + 1) & (cap - 1);
	index[s] = (uint32_t)(i + 1);
}

static int grow(struct pl_latency_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 4096;
	struct pl_frame_rec *rec;

	if (cap > t->max_frames)
		cap = t->max_frames;
	rec = realloc(t->rec, cap * sizeof(*rec));
	if (!rec)
		return -ENOMEM;
	t->rec = rec;
	t->cap = cap;
	return 0;
}

/* The index: a power of two at least twice the records (load at most 1/2
 * keeps linear probing short), rebuilt when the records grew. */
static int fix_index_cap(struct pl_latency_table *t)
{
	size_t want = 1, i;
	uint32_t *index;

	while (want < t->cap * 2)
		want <<= 1;
	if (want == t->index_cap)
		return 0;
	index = calloc(want, sizeof(*index));
	if (!index)
		return -ENOMEM;
	free(t->index);
	t->index = index;
	t->index_cap = want;
	for (i = 0; i < t->n; i++)
		index_put(t->index, t->index_cap, t->rec, i);
	return 0;
}

static unsigned bucket_of(uint64_t v)
{
	unsigned msb;

	if (v < 32)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	return (msb - 4) * 32 + (unsigned)((v >> (msb - 5)) & 31);
}

static double bucket_value(unsigned b)
{
	unsigned msb, sub;

	if (b < 32)
		return b;
	msb = b / 32 + 4;
	sub = b % 32;
	/* the middle of the bucket */
	return ((double)(32 + sub) + 0.5) * (double)(1ull << (msb - 5));
}

static void hist_add(uint64_t *hist, uint64_t *n, uint64_t v)
{
	unsigned b = bucket_of(v);

	if (b >= PL_LAT_HIST_BUCKETS)
		b = PL_LAT_HIST_BUCKETS - 1;
	hist[b]++;
	(*n)++;
}

int pl__latency_table_add(struct pl_latency_table *t, uint64_t frame_id, uint64_t sequence,
			  uint32_t bytes, uint64_t device_send_ns, uint64_t host_recv_ns,
			  bool have_offset, int64_t offset_ns)
{
	struct pl_frame_rec *r;
	int err;

	if (t->n == t->max_frames) {
		t->not_kept++;
		return -ENOSPC;
	}
	if ((t->n == t->cap && (err = grow(t)) < 0) ||
	    ((t->n + 1) * 2 > t->index_cap && (err = fix_index_cap(t)) < 0)) {
		t->not_kept++;
		return err;
	}
	r = &t->rec[t->n];
	memset(r, 0, sizeof(*r));
	r->frame_id = frame_id;
	r->sequence = sequence;
	r->bytes = bytes;
	r->device_send_ns = device_send_ns;
	r->host_recv_ns = host_recv_ns;
	if (have_offset) {
		int64_t one_way;

		r->flags |= PL_FRAME_HAVE_OFFSET;
		r->offset_ns = offset_ns;
		if (pl__frame_one_way_ns(r, false, 0, &one_way) && one_way >= 0)
			hist_add(t->hist_one_way, &t->hist_one_way_n, (uint64_t)one_way);
	}
	index_put(t->index, t->index_cap, t->rec, t->n);
	t->n++;
	return 0;
}

int pl__latency_table_set_round_trip(struct pl_latency_table *t, uint64_t frame_id,
				     uint64_t send_ns, uint64_t reply_ns)
{
	struct pl_frame_rec *r;
	size_t s;

	if (reply_ns < send_ns) {
		t->rtt_invalid++;
		return -EINVAL;
	}
	if (!t->index_cap) {
		t->rtt_unmatched++;
		return -ENOENT;
	}
	s = slot_of(frame_id, t->index_cap);
	while (t->index[s] && t->rec[t->index[s] - 1].frame_id != frame_id)
		s = (s + 1) & (t->index_cap - 1);
	if (!t->index[s]) {
		t->rtt_unmatched++;
		return -ENOENT;
	}
	r = &t->rec[t->index[s] - 1];
	if (!(r->flags & PL_FRAME_HAVE_RTT))
		t->rtt_known++;
	r->flags |= PL_FRAME_HAVE_RTT;
	r->round_trip_ns = reply_ns - send_ns;
	hist_add(t->hist_rtt, &t->hist_rtt_n, r->round_trip_ns);
	return 0;
}

bool pl__frame_one_way_ns(const struct pl_frame_rec *r, bool have_fallback, int64_t fallback_ns,
			  int64_t *one_way_ns)
{
	int64_t offset;

	if (r->flags & PL_FRAME_HAVE_OFFSET)
		offset = r->offset_ns;
	else if (have_fallback)
		offset = fallback_ns;
	else
		return false;
	/* wrapping arithmetic: a hostile send time gives a wrong number in
	 * its own row, not undefined behaviour */
	*one_way_ns = (int64_t)(r->host_recv_ns + (uint64_t)offset - r->device_send_ns);
	return true;
}

int pl__latency_table_write_csv(const struct pl_latency_table *t, FILE *out, bool have_fallback,
				int64_t fallback_ns)
{
	size_t i;

	fprintf(out, "frame_id,sequence,bytes,device_send_ns,host_recv_device_ns,one_way_ms,"
		     "round_trip_ms\n");
	for (i = 0; i < t->n; i++) {
		const struct pl_frame_rec *r = &t->rec[i];
		int64_t one_way;

		fprintf(out, "%llu,%llu,%u,%llu,", (unsigned long long)r->frame_id,
			(unsigned long long)r->sequence, r->bytes,
			(unsigned long long)r->device_send_ns);
		if (pl__frame_one_way_ns(r, have_fallback, fallback_ns, &one_way))
			fprintf(out, "%llu,%.6f,", (unsigned long long)(r->device_send_ns + (uint64_t)one_way),
				(double)one_way / 1e6);
		else
			fputs(",,", out);
		if (r->flags & PL_FRAME_HAVE_RTT)
			fprintf(out, "%.6f\n", (double)r->round_trip_ns / 1e6);
		else
			fputc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}

bool pl__latency_table_quick(const struct pl_latency_table *t, bool round_trip, double p,
			     double *ns)
{
	const uint64_t *hist = round_trip ? t->hist_rtt : t->hist_one_way;
	uint64_t n = round_trip ? t->hist_rtt_n : t->hist_one_way_n, want, seen = 0;
	unsigned b;

	if (!n)
		return false;
	want = (uint64_t)(p * (double)n);
	if (want >= n)
		want = n - 1;
	for (b = 0; b < PL_LAT_HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen > want)
			break;
	}
	*ns = bucket_value(b < PL_LAT_HIST_BUCKETS ? b : PL_LAT_HIST_BUCKETS - 1);
	return true;
}
