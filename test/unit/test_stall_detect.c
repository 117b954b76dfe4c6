/* The stall rules of stall_detect.c on known numbers: episodes, windows,
 * mechanisms, bully order, the write history ring. */
#include <string.h>

#include "stall_detect.h"
#include "tap.h"

static const struct pl_stall_cfg cfg = { 50, 100, 100 };

static void test_blkio_episode(void)
{
	struct pl_stall_victim v;

	memset(&v, 0, sizeof(v));
	TAP_OK(pl__stall_update(&v, &cfg, 11, 10.0, 'S', 10, false) == PL_STALL_NONE,
	       "small block-I/O delay is no stall");
	TAP_OK(!v.open, "and opens no episode");
	/* 300 ms of delay accounted when the task woke: one tick's worth. */
	TAP_OK(pl__stall_update(&v, &cfg, 12, 10.1, 'S', 300, false) == PL_STALL_NONE,
	       "a delay over the threshold opens an episode");
	TAP_OK(v.open && v.qualified, "which qualifies");
	TAP_OK(pl__stall_update(&v, &cfg, 13, 10.2, 'S', 0, false) == PL_STALL_EMIT,
	       "and is reported when the next tick is calm");
	TAP_OK(v.blkio_ms == 300, "with its delay");
	TAP_EQ_U64(pl__stall_window_ticks(&v, &cfg, 13, 10.2), 4,
		   "window covers the 300 ms before the wake-up");
	TAP_EQ_U64(pl__stall_window_ticks(&v, &cfg, 3, 10.2), 3,
		   "but not before the first tick");
	pl__stall_victim_rearm(&v, PL_STALL_EMIT, 13, 10.2);
	TAP_OK(!v.open, "rearmed");
}

static void test_dstate_episode(void)
{
	struct pl_stall_victim v;

	memset(&v, 0, sizeof(v));
	TAP_OK(pl__stall_update(&v, &cfg, 1, 5.0, 'D', 0, false) == PL_STALL_NONE, "one D sample");
	TAP_OK(pl__stall_update(&v, &cfg, 2, 5.1, 'R', 0, false) == PL_STALL_NONE,
	       "a single D sample spans 0 ms: no stall");
	TAP_OK(!v.open, "episode closed without a report");

	TAP_OK(pl__stall_update(&v, &cfg, 3, 6.0, 'D', 0, false) == PL_STALL_NONE, "D again");
	TAP_OK(pl__stall_update(&v, &cfg, 4, 6.097, 'D', 20, false) == PL_STALL_NONE, "D 97 ms");
	TAP_OK(v.qualified, "D samples 97 ms apart (tick jitter) qualify for 100 ms");
	TAP_OK(pl__stall_update(&v, &cfg, 5, 6.2, 'D', 0, false) == PL_STALL_NONE, "still D");
	{
		struct pl_stall_victim w;

		memset(&w, 0, sizeof(w));
		pl__stall_update(&w, &cfg, 1, 1.0, 'D', 0, false);
		pl__stall_update(&w, &cfg, 2, 1.085, 'D', 0, false);
		TAP_OK(!w.qualified, "85 ms of D samples do not");
	}
	TAP_OK(pl__stall_update(&v, &cfg, 6, 6.3, 'S', 250, false) == PL_STALL_NONE,
	       "the wake-up tick carries the delay, still a stall tick");
	TAP_OK(pl__stall_update(&v, &cfg, 7, 6.4, 'S', 0, false) == PL_STALL_EMIT, "then reported");
	TAP_OK(v.dstate_ms > 199 && v.dstate_ms < 201, "D for 200 ms");
	TAP_OK(v.blkio_ms == 270, "delay summed over the episode");
}

/* A fsync loop sampled in D four times in a row, a short fsync each time
 * (it ran between the samples): 300 ms of D samples, but no single wait
 * that the samples saw twice. */
static void test_dstate_waits(void)
{
	struct pl_stall_victim v;

	memset(&v, 0, sizeof(v));
	pl__stall_update(&v, &cfg, 1, 2.0, 'D', 0, false);
	for (uint64_t t = 2; t <= 4; t++)
		pl__stall_update(&v, &cfg, t, 2.0 + (double)(t - 1) / 10, 'D', 10, true);
	TAP_OK(pl__stall_update(&v, &cfg, 5, 2.4, 'S', 4, true) == PL_STALL_EMIT,
	       "four D samples of four fsyncs: reported by their span");
	TAP_OK(v.dstate_longest_ms == 0, "the longest single wait seen: 0 ms (%.0f)",
	       v.dstate_longest_ms);
	TAP_OK(v.dstate_sum_ms > 299 && v.dstate_sum_ms < 301, "D in all: 300 ms (%.0f)",
	       v.dstate_sum_ms);
	TAP_OK(v.dstate_ms > 299 && v.dstate_ms < 301, "dstate_ms as before: 300 ms");
	pl__stall_victim_rearm(&v, PL_STALL_EMIT, 5, 2.4);

	/* one wait the task slept through for three samples, then another */
	pl__stall_update(&v, &cfg, 6, 3.0, 'D', 0, false);
	pl__stall_update(&v, &cfg, 7, 3.1, 'D', 0, false);
	pl__stall_update(&v, &cfg, 8, 3.2, 'D', 0, false);
	pl__stall_update(&v, &cfg, 9, 3.3, 'D', 200, true);
	TAP_OK(pl__stall_update(&v, &cfg, 10, 3.4, 'S', 20, true) == PL_STALL_EMIT,
	       "a 200 ms wait and the next: reported");
	TAP_OK(v.dstate_longest_ms > 199 && v.dstate_longest_ms < 201,
	       "a wait the task slept through: 200 ms (%.0f)", v.dstate_longest_ms);
	TAP_OK(v.dstate_sum_ms > 299 && v.dstate_sum_ms < 301, "D in all: 300 ms (%.0f)",
	       v.dstate_sum_ms);
}

static void test_ongoing(void)
{
	struct pl_stall_victim v;
	enum pl_stall_verdict r = PL_STALL_NONE;
	uint64_t t;

	memset(&v, 0, sizeof(v));
	for (t = 1; t < 200 && r == PL_STALL_NONE; t++)
		r = pl__stall_update(&v, &cfg, t, (double)t / 10, 'D', 0, false);
	TAP_OK(r == PL_STALL_EMIT_ONGOING, "a task stuck in D is reported as ongoing");
	TAP_OK(t - 1 < PL_STALL_RING, "within the history ring");
	pl__stall_victim_rearm(&v, r, t - 1, (double)(t - 1) / 10);
	TAP_OK(v.open && v.d_run, "and goes on");
}

static struct pl_stall_history hist;

static void put_ticks(int64_t d_compact, int64_t d_alloc, double busy, uint64_t dirty,
		      uint64_t wb)
{
	memset(&hist, 0, sizeof(hist));
	for (uint64_t t = 1; t <= 10; t++) {
		struct pl_stall_sys s;

		memset(&s, 0, sizeof(s));
		s.tick = t;
		s.mono = (double)t / 10;
		s.d_compact = t == 9 ? d_compact : 0;
		s.d_alloc = t == 9 ? d_alloc : 0;
		s.have_disk = true;
		s.disk_busy_ms = busy;
		s.dirty_kb = dirty;
		s.writeback_kb = wb;
		s.have_psi_io = true;
		s.psi_io.some.total_us = t * 1000;
		pl__stall_history_put(&hist, &s);
	}
}

static const char *mech(uint64_t bg_thresh_kb)
{
	struct pl_stall_window w;

	pl__stall_window(&hist, 7, 10, 100, &w);
	w.dirty_bg_thresh_kb = bg_thresh_kb;
	return pl__stall_mechanism_name(pl__stall_classify(&w));
}

static void test_mechanisms(void)
{
	struct pl_stall_window w;

	put_ticks(2, 3, 95, 1000, 0);
	TAP_EQ_STR(mech(0), "compaction", "compact_stall rose: compaction first");
	put_ticks(0, 3, 95, 1000, 0);
	TAP_EQ_STR(mech(0), "direct_reclaim", "allocstall rose: direct reclaim");
	put_ticks(0, 0, 10, 600000, 0);
	TAP_EQ_STR(mech(500000), "dirty_writeback", "dirty over the background threshold");
	put_ticks(0, 0, 10, 600000, 0);
	TAP_EQ_STR(mech(0), "unknown", "unknown threshold and idle disk: nothing");
	put_ticks(0, 0, 60, 100, 9000);
	TAP_EQ_STR(mech(0), "dirty_writeback", "9 MB under writeback, disk half busy");
	put_ticks(0, 0, 95, 100, 400);
	TAP_EQ_STR(mech(500000), "disk_saturation",
		   "a small fsync's writeback on a saturated disk: the disk");
	put_ticks(0, 0, 30, 100, 0);
	TAP_EQ_STR(mech(500000), "unknown", "nothing points anywhere");

	put_ticks(2, 0, 95, 600000, 0);
	pl__stall_window(&hist, 7, 10, 100, &w);
	w.dirty_bg_thresh_kb = 500000;
	TAP_EQ_U64(pl__stall_classify(&w), PL_MECH_COMPACTION | PL_MECH_DIRTY_WRITEBACK,
		   "every matching rule is listed");
	TAP_OK(w.span_ms > 399 && w.span_ms < 401, "window of 4 ticks spans 400 ms");
	TAP_OK(w.disk_busy_ms == 380, "disk busy summed over the window");
	TAP_OK(w.psi_io_some_ms == 4.0, "PSI total grew 4 ms over the window");
}

static void test_bully_and_ring(void)
{
	struct pl_stall_bully top[PL_STALL_BULLIES];
	struct pl_writes w;
	uint64_t wb, wc;
	size_t n = 0;

	pl__stall_bully_offer(top, &n, 1, "a", 10, 0, false);
	pl__stall_bully_offer(top, &n, 2, "b", 0, 0, false);
	pl__stall_bully_offer(top, &n, 3, "c", 500, 0, false);
	pl__stall_bully_offer(top, &n, 4, "d", 10, 99, false);
	pl__stall_bully_offer(top, &n, 5, "e", 1, 0, false);
	TAP_EQ_U64(n, 3, "three bullies at most, silent ones ignored");
	TAP_OK(top[0].pid == 3 && top[1].pid == 4 && top[2].pid == 1,
	       "ordered by write_bytes, then wchar");

	pl__writes_reset(&w, 5);
	pl__writes_put(&w, 5, 100, 1);
	pl__writes_put(&w, 8, 200, 2); /* 6 and 7 wrote nothing */
	pl__writes_put(&w, 9, -50, 4);  /* counters never go back */
	pl__writes_sum(&w, 1, 100, &wb, &wc);
	TAP_OK(wb == 300 && wc == 7, "sum over the ticks held");
	pl__writes_sum(&w, 6, 7, &wb, &wc);
	TAP_OK(wb == 0 && wc == 0, "skipped ticks are zero");
	pl__writes_put(&w, 5 + PL_STALL_RING + 3, 7, 0);
	pl__writes_sum(&w, 0, 1000, &wb, &wc);
	TAP_EQ_U64(wb, 7, "ticks older than the ring are forgotten");
}

/* Who is another victim rather than a bully, and the blocked ticks kept in
 * the ring. */
static void test_fellow_victim(void)
{
	struct pl_writes w;

	TAP_OK(pl__stall_fellow_victim(true, 1 << 20, 0, 10 << 20, 0),
	       "blocked in the window, wrote less than the victim: another victim");
	TAP_OK(!pl__stall_fellow_victim(true, 2000u << 20, 0, 1 << 20, 0),
	       "blocked, wrote more (dd in its own fdatasync): still a candidate");
	TAP_OK(!pl__stall_fellow_victim(false, 1 << 20, 0, 10 << 20, 0),
	       "not blocked: a candidate whatever it wrote");
	pl__writes_reset(&w, 10);
	pl__writes_put(&w, 10, 0, 0);
	pl__writes_put(&w, 11, 0, 0);
	pl__writes_mark_blocked(&w, 11);
	pl__writes_put(&w, 12, 0, 0);
	TAP_OK(pl__writes_blocked(&w, 11, 12) && !pl__writes_blocked(&w, 12, 12) &&
		       !pl__writes_blocked(&w, 1, 10),
	       "blocked ticks are kept per tick");
	pl__writes_put(&w, 11 + PL_STALL_RING, 0, 0);
	TAP_OK(!pl__writes_blocked(&w, 0, 11 + PL_STALL_RING),
	       "and forgotten once older than the ring");
}

static void test_event_json(void)
{
	struct pl_stall_event e;
	struct pl_json j;
	const char *line;

	memset(&e, 0, sizeof(e));
	e.wall = 1.5;
	e.mono = 12.25;
	e.window_ms = 500;
	e.pid = 42;
	e.comm = "con\"trolsd";
	e.label = "controlsd";
	e.blkio_ms = 300;
	e.nbully = 1;
	e.bully[0].pid = 7;
	strcpy(e.bully[0].comm, "dd");
	e.bully[0].wbytes = 2048;
	e.mechs = PL_MECH_DIRTY_WRITEBACK;
	pl__json_init(&j);
	line = pl__stall_event_json(&j, &e);
	TAP_OK(line != NULL, "event serialises");
	TAP_OK(line && strstr(line, "\"victim\":{\"pid\":42,\"comm\":\"con\\\"trolsd\""),
	       "victim with its comm escaped");
	TAP_OK(line && strstr(line, "\"bully\":[{\"pid\":7,\"comm\":\"dd\",\"d_wbytes_kB\":2.0"),
	       "bully in kB");
	TAP_OK(line && strstr(line, "\"mechanism\":\"dirty_writeback\""), "mechanism");
	TAP_OK(line && strstr(line, "\"start_mono_ns\":11750000000,\"end_mono_ns\":12250000000"),
	       "the stall window in ns on the device's clock (docs/wire.md)");
	TAP_OK(line && strstr(line, "\"psi\":{\"io\":null,\"memory\":null}"),
	       "absent PSI is null");
	pl__json_free(&j);
}

int main(void)
{
	test_blkio_episode();
	test_dstate_episode();
	test_dstate_waits();
	test_ongoing();
	test_mechanisms();
	test_bully_and_ring();
	test_fellow_victim();
	test_event_json();
	return tap_done();
}
