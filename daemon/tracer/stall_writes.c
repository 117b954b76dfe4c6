/* The write history of stall_detect.h: per process, what it wrote tick by
 * tick (the stall window, the 5 s bully window) and span by span (the
 * dirty window of a writeback stall, up to PL_WRITES_SPANS spans), and the
 * writers that exited, kept with their names. */
#include "stall_detect.h"

#include <string.h>

static uint32_t sat32(int64_t v)
{
	if (v <= 0)
		return 0;
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

void pl__writes_reset(struct pl_writes *w, uint64_t tick)
{
	memset(w, 0, sizeof(*w));
	w->first_tick = tick;
	w->last_tick = tick ? tick - 1 : 0;
}

static uint32_t add_sat32(uint32_t a, uint32_t b)
{
	return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/* Add to tick's span; the spans since the last put's start empty. */
static void put_span(struct pl_writes *w, uint64_t tick, uint32_t wbytes, uint32_t wchar)
{
	uint64_t span = tick / PL_WRITES_SPAN_TICKS, last = w->last_tick / PL_WRITES_SPAN_TICKS;
	size_t i = span % PL_WRITES_SPANS;

	/* a gap longer than the ring empties all of it */
	if (span >= last + PL_WRITES_SPANS)
		last = span - PL_WRITES_SPANS;
	for (uint64_t s = last + 1; s <= span; s++) {
		w->span_wbytes[s % PL_WRITES_SPANS] = 0;
		w->span_wchar[s % PL_WRITES_SPANS] = 0;
	}
	w->span_wbytes[i] = add_sat32(w->span_wbytes[i], wbytes);
	w->span_wchar[i] = add_sat32(w->span_wchar[i], wchar);
}

void pl__writes_put(struct pl_writes *w, uint64_t tick, int64_t d_wbytes, int64_t d_wchar)
{
	size_t i = tick % PL_STALL_RING;

	/* A second put of a tick replaces the first (reaped children's writes
	 * taken off a parent read earlier in the tick): its span had it added */
	if (tick != 0 && tick == w->last_tick) {
		size_t s = (tick / PL_WRITES_SPAN_TICKS) % PL_WRITES_SPANS;

		w->span_wbytes[s] -= w->span_wbytes[s] < w->wbytes[i] ? w->span_wbytes[s] : w->wbytes[i];
		w->span_wchar[s] -= w->span_wchar[s] < w->wchar[i] ? w->span_wchar[s] : w->wchar[i];
	}

	uint64_t t0 = tick >= w->last_tick + PL_STALL_RING ? tick - PL_STALL_RING + 1
							   : w->last_tick + 1;

	/* Ticks skipped since the last put wrote nothing (all the ring's, for
	 * a gap longer than it). */
	for (uint64_t t = t0; t < tick; t++) {
		w->wbytes[t % PL_STALL_RING] = 0;
		w->wchar[t % PL_STALL_RING] = 0;
		w->rbytes[t % PL_STALL_RING] = 0;
		w->rss_kb[t % PL_STALL_RING] = 0;
	}
	/* a new tick reads nothing until pl__writes_put_mem says */
	if (tick != w->last_tick || tick == 0) {
		w->rbytes[i] = 0;
		w->rss_kb[i] = 0;
	}
	if (tick >= w->last_tick + PL_STALL_RING)
		w->blocked = 0;
	for (uint64_t t = w->last_tick + 1; t <= tick && w->blocked; t++)
		w->blocked &= ~((uint64_t)1 << (t % PL_STALL_RING));
	w->wbytes[i] = sat32(d_wbytes);
	w->wchar[i] = sat32(d_wchar);
	if (w->wbytes[i] || w->wchar[i])
		w->wrote_until = tick + 1;
	put_span(w, tick, w->wbytes[i], w->wchar[i]);
	w->last_tick = tick;
	if (tick >= w->first_tick + PL_STALL_RING)
		w->first_tick = tick - PL_STALL_RING + 1;
}

void pl__writes_put_mem(struct pl_writes *w, uint64_t tick, int64_t d_rbytes, int64_t d_rss_kb)
{
	size_t i = tick % PL_STALL_RING;

	if (tick != w->last_tick)
		return;
	w->rbytes[i] = sat32(d_rbytes);
	w->rss_kb[i] = d_rss_kb > INT32_MAX ? INT32_MAX
		       : d_rss_kb < INT32_MIN ? INT32_MIN : (int32_t)d_rss_kb;
}

void pl__writes_mark_blocked(struct pl_writes *w, uint64_t tick)
{
	if (tick == w->last_tick)
		w->blocked |= (uint64_t)1 << (tick % PL_STALL_RING);
}

/* Ticks [from, to] clipped to what the ring holds: from > to when none. */
static void clip_to_ring(const struct pl_writes *w, uint64_t *from, uint64_t *to)
{
	if (*from < w->first_tick)
		*from = w->first_tick;
	if (*to > w->last_tick)
		*to = w->last_tick;
	if (*to >= *from + PL_STALL_RING)
		*from = *to - PL_STALL_RING + 1;
}

bool pl__writes_blocked(const struct pl_writes *w, uint64_t from, uint64_t to)
{
	clip_to_ring(w, &from, &to);
	for (uint64_t t = from; t <= to && t >= from; t++) {
		if (w->blocked & ((uint64_t)1 << (t % PL_STALL_RING)))
			return true;
	}
	return false;
}

void pl__writes_sum(const struct pl_writes *w, uint64_t from, uint64_t to, uint64_t *wbytes,
		    uint64_t *wchar)
{
	uint64_t t;

	*wbytes = 0;
	*wchar = 0;
	if (w->wrote_until <= from)
		return;
	clip_to_ring(w, &from, &to);
	for (t = from; t <= to && t >= from; t++) {
		*wbytes += w->wbytes[t % PL_STALL_RING];
		*wchar += w->wchar[t % PL_STALL_RING];
	}
}

void pl__writes_sum_mem(const struct pl_writes *w, uint64_t from, uint64_t to, uint64_t *rbytes,
			int64_t *rss_kb)
{
	*rbytes = 0;
	*rss_kb = 0;
	clip_to_ring(w, &from, &to);
	for (uint64_t t = from; t <= to && t >= from; t++) {
		*rbytes += w->rbytes[t % PL_STALL_RING];
		*rss_kb += w->rss_kb[t % PL_STALL_RING];
	}
}

/* Nothing in pl__writes_sum_long's [from, to], by wrote_until alone. */
static bool none_long(uint64_t wrote_until, uint64_t from, uint64_t to)
{
	if (to < from + PL_STALL_RING)
		return wrote_until <= from;
	/* nothing written in from's span or since */
	return wrote_until == 0 ||
	       (wrote_until - 1) / PL_WRITES_SPAN_TICKS < from / PL_WRITES_SPAN_TICKS;
}

void pl__writes_sum_long(const struct pl_writes *w, uint64_t from, uint64_t to,
			 uint64_t *wbytes, uint64_t *wchar)
{
	uint64_t s, s_from = from / PL_WRITES_SPAN_TICKS, s_to;

	if (to < from + PL_STALL_RING) {
		pl__writes_sum(w, from, to, wbytes, wchar);
		return;
	}
	*wbytes = 0;
	*wchar = 0;
	if (none_long(w->wrote_until, from, to))
		return;
	if (to > w->last_tick)
		to = w->last_tick;
	s_to = to / PL_WRITES_SPAN_TICKS;
	if (s_to >= s_from + PL_WRITES_SPANS)
		s_from = s_to - PL_WRITES_SPANS + 1;
	for (s = s_from; s <= s_to && s >= s_from; s++) {
		*wbytes += w->span_wbytes[s % PL_WRITES_SPANS];
		*wchar += w->span_wchar[s % PL_WRITES_SPANS];
	}
}

/* Nothing written in the spans kept back from now's. */
static bool none_spans(uint64_t wrote_until, uint64_t now_tick)
{
	return wrote_until == 0 || (wrote_until - 1) / PL_WRITES_SPAN_TICKS + PL_WRITES_SPANS <=
					   now_tick / PL_WRITES_SPAN_TICKS;
}

void pl__writes_add_spans(const struct pl_writes *w, uint64_t now_tick,
			  uint64_t totals[PL_WRITES_SPANS])
{
	uint64_t now_span = now_tick / PL_WRITES_SPAN_TICKS;
	uint64_t last = w->last_tick / PL_WRITES_SPAN_TICKS;

	if (none_spans(w->wrote_until, now_tick))
		return;
	for (uint64_t k = 0; k < PL_WRITES_SPANS && k <= now_span; k++) {
		uint64_t s = now_span - k;

		if (s <= last && s + PL_WRITES_SPANS > last)
			totals[k] += w->span_wbytes[s % PL_WRITES_SPANS];
	}
}

uint64_t pl__writes_reach(const uint64_t totals[PL_WRITES_SPANS], uint64_t now_tick,
			  uint64_t pending_bytes)
{
	uint64_t now_span = now_tick / PL_WRITES_SPAN_TICKS, sum = 0, k;

	for (k = 0; k < PL_WRITES_SPANS && k <= now_span; k++) {
		sum += totals[k];
		if (sum >= pending_bytes)
			break;
	}
	if (k == PL_WRITES_SPANS || k > now_span)
		k--;
	return (now_span - k) * PL_WRITES_SPAN_TICKS;
}

#define SPANS_TICKS ((uint64_t)PL_WRITES_SPANS * PL_WRITES_SPAN_TICKS)

/* What it wrote in the spans kept and read in the ticks kept: a reader
 * that saturated the disk and exited is named as one that wrote. */
static uint64_t recent_weight(const struct pl_writes *w, uint64_t now_tick)
{
	uint64_t wb, wc, rb;
	int64_t rss;

	pl__writes_sum_long(w, now_tick >= SPANS_TICKS ? now_tick - SPANS_TICKS + 1 : 0,
			    now_tick, &wb, &wc);
	pl__writes_sum_mem(w, now_tick >= PL_STALL_RING ? now_tick - PL_STALL_RING + 1 : 0,
			   now_tick, &rb, &rss);
	return wb + wc / 16 + rb;
}

void pl__writes_gone_add(struct pl_writes_gone *g, int pid, const char *comm,
			 const struct pl_writes *w, uint64_t now_tick)
{
	uint64_t mine = recent_weight(w, now_tick), least = UINT64_MAX;
	size_t i, slot = PL_WRITES_GONE;

	if (mine == 0)
		return;
	for (i = 0; i < PL_WRITES_GONE; i++) {
		uint64_t theirs;

		if (!g->e[i].used) {
			slot = i;
			break;
		}
		theirs = recent_weight(&g->e[i].w, now_tick);
		if (theirs < least) {
			least = theirs;
			slot = i;
		}
	}
	if (i == PL_WRITES_GONE && least >= mine)
		return;
	g->e[slot].used = true;
	g->e[slot].pid = pid;
	strncpy(g->e[slot].comm, comm, sizeof(g->e[slot].comm) - 1);
	g->e[slot].comm[sizeof(g->e[slot].comm) - 1] = '\0';
	g->e[slot].w = *w;
}
