/* The stall rules of stall_detect.c on known numbers: episodes, windows,
 * mechanisms, bully order, the write history ring. */
#include <errno.h>
#include <string.h>

#include "stall_detect.h"
#include "stall_memcg.h"
#include "tap.h"

static const struct pl_stall_cfg cfg = { 50, 100, 100, false };

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
	TAP_EQ_U64(v.raised, PL_RAISED_DSTATE_RUN, "raised by the run of D samples");
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

/* Tick t of ten 100 ms ticks with a disk and PSI io, the rest 0. */
static void tick_base(struct pl_stall_sys *s, uint64_t t)
{
	memset(s, 0, sizeof(*s));
	s->tick = t;
	s->mono = (double)t / 10;
	s->have_disk = true;
	s->have_psi_io = true;
}

static void put_ticks(int64_t d_compact, int64_t d_alloc, double busy, uint64_t dirty,
		      uint64_t wb)
{
	memset(&hist, 0, sizeof(hist));
	for (uint64_t t = 1; t <= 10; t++) {
		struct pl_stall_sys s;

		tick_base(&s, t);
		s.d_compact = t == 9 ? d_compact : 0;
		s.d_alloc = t == 9 ? d_alloc : 0;
		s.disk_busy_ms = busy;
		s.dirty_kb = s.nr_dirty_kb = dirty;
		s.writeback_kb = s.nr_writeback_kb = wb;
		s.written_kb = -1;
		s.psi_io.some.total_us = t * 1000;
		pl__stall_history_put(&hist, &s);
	}
}

/* A victim that waited 100 ms on block I/O, its wchan not read. */
static const struct pl_stall_wait io_wait = { .have_blkio = true, .blkio_ms = 100 };

/* The kernel's thresholds in every tick (the dirty one twice the
 * background one; 0: unknown), then the window's mechanism. */
static void set_thresh(uint64_t bg_thresh_kb)
{
	for (uint64_t t = 1; t <= 10; t++) {
		hist.t[t % PL_STALL_RING].bg_thresh_kb = bg_thresh_kb;
		hist.t[t % PL_STALL_RING].thresh_kb = 2 * bg_thresh_kb;
	}
}

static const char *mech(uint64_t bg_thresh_kb)
{
	struct pl_stall_window w;

	set_thresh(bg_thresh_kb);
	pl__stall_window(&hist, 7, 10, 100, &w);
	return pl__stall_mechanism_name(pl__stall_classify(&w, &io_wait));
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
	set_thresh(500000);
	pl__stall_window(&hist, 7, 10, 100, &w);
	TAP_EQ_U64(pl__stall_classify(&w, &io_wait), PL_MECH_COMPACTION | PL_MECH_DIRTY_WRITEBACK,
		   "every matching rule is listed");
	TAP_OK(w.span_ms > 399 && w.span_ms < 401, "window of 4 ticks spans 400 ms");
	TAP_OK(w.disk_busy_ms == 380, "disk busy summed over the window");
	TAP_OK(w.psi_io_some_ms == 4.0, "PSI total grew 4 ms over the window");
}

/* Ten ticks of a writeback: vmstat's dirty and writeback memory, the
 * kernel's thresholds, what was written back each tick (-1: unknown), the
 * disk busy 30 ms a tick, PSI io full growing full_us a tick. */
static void put_dirty(uint64_t nr_dirty, uint64_t nr_wb, uint64_t bg, uint64_t thresh,
		      int64_t written, uint64_t full_us)
{
	memset(&hist, 0, sizeof(hist));
	for (uint64_t t = 1; t <= 10; t++) {
		struct pl_stall_sys s;

		tick_base(&s, t);
		s.disk_busy_ms = 30;
		s.dirty_kb = s.nr_dirty_kb = nr_dirty;
		s.writeback_kb = s.nr_writeback_kb = nr_wb;
		s.bg_thresh_kb = bg;
		s.thresh_kb = thresh;
		s.written_kb = written;
		s.psi_io.some.total_us = s.psi_io.full.total_us = t * full_us;
		pl__stall_history_put(&hist, &s);
	}
}

static const char *mech_of(const struct pl_stall_wait *v, struct pl_stall_window *w)
{
	pl__stall_window(&hist, 7, 10, 100, w);
	return pl__stall_mechanism_name(pl__stall_classify(w, v));
}

/* The writeback rules on the kernel's own numbers (issue 14: 2.3 GB dirty
 * just under the threshold, 246 MB written per 300 ms, the disk busy a
 * third of the time, was "unknown"). */
static void test_writeback_rules(void)
{
	const struct pl_stall_wait blocked = { .have_blkio = true, .blkio_ms = 40 }, no_wait = { .have_blkio = true };
	const struct pl_stall_wait in_block = { .have_blkio = true, .wchan_kinds = 1u << PL_WCHAN_BLOCK };
	const struct pl_stall_wait throttled = { .have_blkio = true, .wchan_kinds = 1u << PL_WCHAN_THROTTLE };
	const struct pl_stall_wait no_acct = { 0 };
	struct pl_stall_window w;

	put_dirty(2300000, 1000, 2360000, 4720000, 82000, 0);
	TAP_EQ_STR(mech_of(&blocked, &w), "dirty_writeback",
		   "dirty under the threshold, 328 MB written in the window, the victim blocked");
	TAP_OK(w.have_written && w.written_kb == 328000 && w.over_bg_ticks == 0,
	       "written back summed over the window, no tick over the threshold");
	TAP_EQ_STR(mech_of(&no_wait, &w), "unknown",
		   "the same, but no block-I/O wait of the victim ended: not its stall");
	TAP_EQ_STR(mech_of(&in_block, &w), "dirty_writeback",
		   "no delay yet, but sampled waiting on a bio: writeback");
	TAP_EQ_STR(mech_of(&no_acct, &w), "unknown",
		   "no delay accounting, no wchan, PSI io full still: not claimed");
	put_dirty(2300000, 1000, 2360000, 4720000, 82000, 3000);
	TAP_EQ_STR(mech_of(&no_acct, &w), "dirty_writeback",
		   "no delay accounting, but PSI io full grew: writeback");
	put_dirty(2300000, 1000, 2360000, 4720000, 1000, 0);
	TAP_EQ_STR(mech_of(&blocked, &w), "unknown",
		   "4 MB written back in the window is a small fsync's, not a storm");
	put_dirty(2300000, 1000, 2360000, 4720000, -1, 0);
	TAP_EQ_STR(mech_of(&blocked, &w), "unknown", "nr_written unknown: that rule is out");

	put_dirty(2360000, 0, 2360000, 4720000, 0, 0);
	TAP_EQ_STR(mech_of(&no_wait, &w), "dirty_writeback",
		   "nr_dirty at the kernel's background threshold: the flusher writes");
	TAP_OK(w.over_bg_ticks == 4 && w.nr_dirty_kb_max == 2360000 &&
		       w.dirty_bg_thresh_kb == 2360000 && w.dirty_thresh_kb == 4720000 &&
		       !w.thresh_estimated,
	       "the ticks over it and the thresholds of the highest dirty tick");
	put_dirty(3000000, 600000, 2360000, 4720000, 0, 0);
	TAP_EQ_STR(mech_of(&no_wait, &w), "dirty_writeback",
		   "dirty + writeback at the middle of the thresholds: writers throttled");
	TAP_OK(w.over_freerun_ticks == 4, "four ticks over the freerun ceiling");
	put_dirty(1000, 0, 2360000, 4720000, 0, 0);
	TAP_EQ_STR(mech_of(&throttled, &w), "dirty_writeback",
		   "the victim sampled in balance_dirty_pages: throttled by writeback");
	put_dirty(2360000, 0, 0, 0, 0, 0);
	TAP_EQ_STR(mech_of(&no_wait, &w), "unknown", "thresholds unknown: no threshold rule");
}

/* The victim's own wait: a D state outside I/O is not an I/O stall. */
static void test_not_io(void)
{
	struct pl_stall_wait v = { .have_blkio = true, .wchan_kinds = 1u << PL_WCHAN_OTHER };
	struct pl_stall_window w;

	put_dirty(1000, 0, 2360000, 4720000, 0, 0);
	TAP_EQ_STR(mech_of(&v, &w), "not_io", "in D in kernel_clone (vfork), no I/O wait: not_io");
	put_ticks(2, 0, 10, 100, 0);
	pl__stall_window(&hist, 7, 10, 100, &w);
	TAP_EQ_U64(pl__stall_classify(&w, &v), PL_MECH_NOT_IO | PL_MECH_COMPACTION,
		   "with compact_stall rising, both are listed");
	TAP_EQ_STR(pl__stall_mechanism_name(PL_MECH_NOT_IO | PL_MECH_COMPACTION), "compaction",
		   "and the counters' rule names the mechanism (the wait may be a lock's)");
	v.wchan_kinds |= 1u << PL_WCHAN_UNKNOWN;
	TAP_OK(pl__stall_classify(&w, &v) & PL_MECH_NOT_IO, "an unreadable wchan besides: still");
	v.blkio_ms = 5;
	TAP_OK(!(pl__stall_classify(&w, &v) & PL_MECH_NOT_IO),
	       "a block-I/O wait of its ended (a wchan read after a short wait): not not_io");
	v.blkio_ms = 0;
	v.wchan_kinds |= 1u << PL_WCHAN_LOCK;
	TAP_OK(!(pl__stall_classify(&w, &v) & PL_MECH_NOT_IO),
	       "also on a mutex an I/O may hold: not not_io");
	v.wchan_kinds = 1u << PL_WCHAN_UNKNOWN;
	TAP_OK(!(pl__stall_classify(&w, &v) & PL_MECH_NOT_IO), "no wchan known: not not_io");
}

static void test_wchan(void)
{
	struct pl_stall_victim v;

	TAP_OK(pl__wchan_kind("balance_dirty_pages") == PL_WCHAN_THROTTLE &&
		       pl__wchan_kind("folio_wait_bit_common") == PL_WCHAN_PAGE &&
		       pl__wchan_kind("folio_wait_writeback") == PL_WCHAN_WRITEBACK &&
		       pl__wchan_kind("jbd2_log_wait_commit") == PL_WCHAN_JOURNAL &&
		       pl__wchan_kind("submit_bio_wait") == PL_WCHAN_BLOCK &&
		       pl__wchan_kind("rq_qos_wait") == PL_WCHAN_BLOCK &&
		       pl__wchan_kind("__sync_dirty_buffer") == PL_WCHAN_BLOCK &&
		       pl__wchan_kind("compact_zone") == PL_WCHAN_MEMORY &&
		       pl__wchan_kind("rwsem_down_write_slowpath") == PL_WCHAN_LOCK,
	       "the kernel's wait functions by kind");
	TAP_OK(pl__wchan_kind("vm_mmap_pgoff") == PL_WCHAN_LOCK,
	       "a wait for the mmap lock, shown as its caller, is a lock's");
	TAP_OK(pl__wchan_kind("kernel_clone") == PL_WCHAN_OTHER &&
		       pl__wchan_kind("0") == PL_WCHAN_UNKNOWN && pl__wchan_kind("") == PL_WCHAN_UNKNOWN,
	       "vfork's is other; \"0\" and empty are unknown");
	memset(&v, 0, sizeof(v));
	pl__stall_update(&v, &cfg, 1, 1.0, 'D', 0, false);
	pl__stall_victim_wchan(&v, "hrtimer_nanosleep\n");
	TAP_EQ_STR(v.wchan, "hrtimer_nanosleep", "the name without its newline");
	pl__stall_victim_wchan(&v, "folio_wait_bit_common");
	pl__stall_victim_wchan(&v, "do_wait");
	TAP_EQ_STR(v.wchan, "folio_wait_bit_common", "an I/O wait's name is kept over others'");
	TAP_EQ_U64(v.wchan_kinds, (1u << PL_WCHAN_OTHER) | (1u << PL_WCHAN_PAGE),
		   "every kind seen");
	pl__stall_victim_wchan(&v, "a_function_name_longer_than_the_forty_seven_bytes_kept");
	TAP_EQ_U64(strlen(v.wchan), strlen("folio_wait_bit_common"), "a long name is cut, not run over");
	pl__stall_update(&v, &cfg, 2, 1.1, 'S', 0, false);
	pl__stall_victim_rearm(&v, PL_STALL_NONE, 2, 1.1);
	pl__stall_update(&v, &cfg, 3, 1.2, 'D', 0, false);
	TAP_OK(v.wchan_kinds == 0 && !v.wchan[0], "a new episode starts with none");
}

/* How far back a writeback stall's bully is looked for. */
static void test_dirty_window(void)
{
	struct pl_stall_window w;
	struct pl_writes a, b;
	uint64_t totals[PL_WRITES_SPANS] = { 0 }, wb, wc;

	memset(&w, 0, sizeof(w));
	TAP_OK(pl__stall_dirty_window_ms(&w, -1, -1) == 35000,
	       "the kernel's defaults: 30 s to expire, 5 s between flusher runs");
	w.have_written = true;
	w.written_kb = 1000000;
	w.span_ms = 1000;
	w.nr_dirty_writeback_kb_max = 2000000;
	TAP_OK(pl__stall_dirty_window_ms(&w, 1000, 100) == 13000,
	       "10 s + 1 s + 2 GB at 1 GB/s");

	/* a: dd, 100 MB a tick for 20 ticks from tick 10, then gone; b: 1 MB a
	 * tick from tick 300 to 400 */
	pl__writes_reset(&a, 10);
	for (uint64_t t = 10; t < 30; t++)
		pl__writes_put(&a, t, 100 << 20, 100 << 20);
	pl__writes_reset(&b, 300);
	for (uint64_t t = 300; t <= 400; t++)
		pl__writes_put(&b, t, 1 << 20, 1 << 20);
	pl__writes_sum(&a, 400 - PL_STALL_RING + 1, 400, &wb, &wc);
	TAP_EQ_U64(wb, 0, "a stall at tick 400 sees none of dd's writes in the tick ring");
	pl__writes_sum_long(&a, 400 - 390, 400, &wb, &wc);
	TAP_EQ_U64(wb, 2000ull << 20, "the spans do: 2000 MB in 39 s");
	pl__writes_sum_long(&a, 32, 400, &wb, &wc);
	TAP_EQ_U64(wb, 0, "none after its last span");
	pl__writes_sum_long(&b, 390, 400, &wb, &wc);
	TAP_EQ_U64(wb, 11u << 20, "a window the tick ring holds: per tick");
	pl__writes_add_spans(&a, 400, totals);
	pl__writes_add_spans(&b, 400, totals);
	TAP_EQ_U64(pl__writes_reach(totals, 400, 50u << 20), 336,
		   "50 MB pending: b's 1 MB a tick reach it in the span from tick 336");
	TAP_EQ_U64(pl__writes_reach(totals, 400, 1000u << 20), 16,
		   "1 GB pending: back to dd's last span");
	TAP_EQ_U64(pl__writes_reach(totals, 400, 100000ull << 20), 0,
		   "more than anyone wrote: as far back as the spans go");
	pl__writes_put(&b, 400 + 16 * PL_WRITES_SPANS, 0, 0);
	pl__writes_sum_long(&b, 300, 400 + 16 * PL_WRITES_SPANS, &wb, &wc);
	TAP_EQ_U64(wb, 0, "spans older than the ring of spans are forgotten");
}

/* A history skips its ring and spans when it wrote nothing since a window
 * began (wrote_until): the sums must be those of a full read, whatever the
 * gaps between puts. The same random puts go into a history whose shortcut
 * can never be taken, and every answer is compared. */
static void test_writes_shortcut(void)
{
	struct pl_writes w, full;
	uint64_t seed = 88172645463325252ull, tick = 1, bad = 0, checks = 0, skipped = 0;

	pl__writes_reset(&w, 1);
	for (int i = 0; i < 4000; i++) {
		uint64_t r, wb, wc, fb, fc, from, tot_w[PL_WRITES_SPANS] = { 0 },
						    tot_f[PL_WRITES_SPANS] = { 0 };

		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17; /* xorshift64 */
		r = seed;
		tick += r % 8 == 0 ? 1 + (r >> 8) % 200 : 1; /* now and then not read for a while */
		/* a writer for a few ticks in a hundred */
		pl__writes_put(&w, tick, (r >> 20) % 100 < 3 ? (int64_t)((r >> 30) % 5000) : 0,
			       (r >> 20) % 100 < 5 ? (int64_t)((r >> 40) % 700) : 0);
		full = w;
		full.wrote_until = UINT64_MAX;
		from = tick - (r >> 48) % (tick < 600 ? tick : 600);
		skipped += w.wrote_until <= from;
		pl__writes_sum(&w, from, tick, &wb, &wc);
		pl__writes_sum(&full, from, tick, &fb, &fc);
		bad += wb != fb || wc != fc;
		pl__writes_sum_long(&w, from, tick, &wb, &wc);
		pl__writes_sum_long(&full, from, tick, &fb, &fc);
		bad += wb != fb || wc != fc;
		pl__writes_add_spans(&w, tick, tot_w);
		pl__writes_add_spans(&full, tick, tot_f);
		bad += memcmp(tot_w, tot_f, sizeof(tot_w)) != 0;
		checks += 3;
	}
	TAP_OK(bad == 0 && skipped > 1000,
	       "the sums skipped for no write since a window began are a full read's: %llu of "
	       "%llu differ (%llu windows with no write)",
	       (unsigned long long)bad, (unsigned long long)checks, (unsigned long long)skipped);
}

/* An exited writer is kept with its name while its spans hold writes. */
static void test_gone_long(void)
{
	struct pl_writes_gone g;
	struct pl_writes dd, small;

	memset(&g, 0, sizeof(g));
	pl__writes_reset(&dd, 10);
	pl__writes_put(&dd, 10, (int64_t)3000 << 20, 0);
	pl__writes_gone_add(&g, 7, "dd", &dd, 10 + 200);
	TAP_OK(g.e[0].used && strcmp(g.e[0].comm, "dd") == 0,
	       "dd, gone 20 s after its last write (older than the tick ring), is kept");
	for (int i = 0; i < PL_WRITES_GONE; i++) {
		pl__writes_reset(&small, 300);
		pl__writes_put(&small, 300, 1 << 20, 0);
		pl__writes_gone_add(&g, 100 + i, "find", &small, 300);
	}
	TAP_OK(g.e[0].used && g.e[0].pid == 7, "eight small writers since do not push it out");
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
	for (uint64_t t = 100; t < 100 + PL_STALL_RING; t++)
		pl__writes_put(&w, t, 1000, 0);
	pl__writes_put(&w, 1000, 5, 0); /* not read for 800 ticks */
	pl__writes_sum(&w, 0, 1000, &wb, &wc);
	TAP_EQ_U64(wb, 5, "after a gap longer than the ring, none of its old ticks count");
	pl__writes_sum_long(&w, 1000 - 400, 1000, &wb, &wc);
	TAP_EQ_U64(wb, 5, "nor of its old spans, after a gap longer than they");
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
	TAP_OK(line && strstr(line, "\"wait\":{\"wchan\":null,\"wchan_kinds\":[],\"memcg_limit_hits\":null}"),
	       "no wchan read: null");
	TAP_OK(line && strstr(line, "\"dirty_thresh_source\":null,") &&
		       strstr(line, "\"written_kB\":null,\"written_MB_per_s\":null"),
	       "unknown thresholds and writeback: null");
	pl__json_free(&j);
	e.wchan = "kernel_clone";
	e.wait.wchan_kinds = 1u << PL_WCHAN_OTHER;
	e.mechs = PL_MECH_NOT_IO | PL_MECH_COMPACTION;
	e.win.dirty_bg_thresh_kb = 100;
	e.win.have_written = true;
	e.win.written_kb = 2048;
	e.win.span_ms = 500;
	pl__json_init(&j);
	line = pl__stall_event_json(&j, &e);
	TAP_OK(line && strstr(line, "\"mechanism\":\"compaction\",\"mechanisms\":[\"compaction\","
				    "\"not_io\"],\"wait\":{\"wchan\":\"kernel_clone\","
				    "\"wchan_kinds\":[\"other\"],\"memcg_limit_hits\":null}"),
	       "the victim's wait, and the mechanisms in rule order");
	TAP_OK(line && strstr(line, "\"dirty_thresh_source\":\"vmstat\",") &&
		       strstr(line, "\"written_kB\":2048,\"written_MB_per_s\":4.0"),
	       "the writeback evidence");
	pl__json_free(&j);
}

/* Without delay accounting a run of short D states raises nothing; one
 * wait of dstate_ms does, and says so. */
static void test_one_wait_without_delayacct(void)
{
	const struct pl_stall_cfg off = { 50, 100, 100, true };
	struct pl_stall_victim v;
	enum pl_stall_verdict r = PL_STALL_NONE;

	memset(&v, 0, sizeof(v));
	for (uint64_t t = 1; t <= 4; t++)
		pl__stall_update(&v, &off, t, 1.0 + (double)t / 10, 'D', 0, t > 1);
	r = pl__stall_update(&v, &off, 5, 1.5, 'S', 0, true);
	TAP_OK(r == PL_STALL_NONE, "four D samples of four short waits: no event");
	memset(&v, 0, sizeof(v));
	pl__stall_update(&v, &off, 1, 2.0, 'D', 0, false);
	pl__stall_update(&v, &off, 2, 2.1, 'D', 0, false);
	r = pl__stall_update(&v, &off, 3, 2.2, 'S', 0, true);
	TAP_OK(r == PL_STALL_EMIT && v.raised == PL_RAISED_DSTATE,
	       "one wait of 100 ms: an event raised by it");
	memset(&v, 0, sizeof(v));
	pl__stall_update(&v, &cfg, 1, 3.0, 'S', 80, false);
	r = pl__stall_update(&v, &cfg, 2, 3.1, 'S', 0, false);
	TAP_OK(r == PL_STALL_EMIT && v.raised == PL_RAISED_BLKIO, "a tick's delay: raised by blkio");
}

/* Memory: the reclaim counters name it; a page read is not writeback; the
 * bully is ranked by what the mechanism says. */
static void test_memory_and_reads(void)
{
	struct pl_stall_window w;
	struct pl_stall_wait v = { .have_blkio = true, .blkio_ms = 120, .wchan_kinds = 1u << PL_WCHAN_PAGE };
	struct pl_stall_bully top[PL_STALL_BULLIES], c;
	size_t n = 0;

	memset(&w, 0, sizeof(w));
	w.span_ms = 400;
	w.have_written = true;
	w.written_kb = 42276; /* the flusher writing a dd's pages meanwhile */
	v.wchan_kinds = pl__stall_page_kinds(v.wchan_kinds, false);
	TAP_EQ_U64(v.wchan_kinds, 1u << PL_WCHAN_READ, "a page wait of a victim that wrote nothing: read");
	TAP_EQ_U64(pl__stall_page_kinds(1u << PL_WCHAN_PAGE, true), 1u << PL_WCHAN_WRITEBACK,
		   "of one that wrote: writeback");
	TAP_EQ_STR(pl__stall_mechanism_name(pl__stall_classify(&w, &v)), "page_read",
		   "a page-read wait while 41 MB are written back: page_read, not writeback");
	TAP_OK(pl__wchan_kind("filemap_fault") == PL_WCHAN_READ &&
		       pl__wchan_kind("__folio_lock_killable") == PL_WCHAN_READ &&
		       pl__wchan_kind("folio_wait_writeback") == PL_WCHAN_WRITEBACK &&
		       pl__wchan_kind("wait_on_page_bit_killable") == PL_WCHAN_PAGE,
	       "the read path's functions are a read's; a page's bit either");
	w.scan_cgroup = 3000;
	TAP_EQ_STR(pl__stall_mechanism_name(pl__stall_classify(&w, &v)), "cgroup_reclaim",
		   "pages scanned by no kswapd nor global direct reclaim: cgroup_reclaim");
	w.scan_cgroup = 0;
	w.scan_direct = 10;
	TAP_EQ_STR(pl__stall_mechanism_name(pl__stall_classify(&w, &v)), "direct_reclaim",
		   "pgscan_direct alone: direct_reclaim");
	w.scan_direct = 0;
	w.have_psi_mem = true;
	w.psi_mem_some_ms = 40;
	TAP_EQ_STR(pl__stall_mechanism_name(pl__stall_classify(&w, &v)), "memory_pressure",
		   "PSI memory 10% of the window, no counter: memory_pressure");
	TAP_OK(pl__stall_bully_rank(PL_MECH_MEMORY_PRESSURE, &v) == PL_BULLY_MEMORY &&
		       pl__stall_bully_rank(PL_MECH_DISK_SATURATION, &v) == PL_BULLY_DISK &&
		       pl__stall_bully_rank(PL_MECH_DIRTY_WRITEBACK, &v) == PL_BULLY_WRITES &&
		       pl__stall_bully_rank(PL_MECH_NOT_IO, &v) == PL_BULLY_NONE,
	       "the bully's rank follows the mechanism");
	v.wchan_kinds = 1u << PL_WCHAN_LOCK;
	v.blkio_ms = 0;
	TAP_OK(pl__stall_bully_rank(0, &v) == PL_BULLY_NONE, "a lock's wait, no rule: no bully");
	memset(&c, 0, sizeof(c));
	c.pid = 5;
	strcpy(c.comm, "memhog");
	c.rss_kb = 133416;
	pl__stall_bully_offer_by(top, &n, PL_BULLY_MEMORY, &c);
	c.pid = 6;
	strcpy(c.comm, "shrinker");
	c.rss_kb = -5000;
	c.wbytes = 1 << 30;
	pl__stall_bully_offer_by(top, &n, PL_BULLY_MEMORY, &c);
	TAP_OK(n == 1 && top[0].pid == 5, "by RSS growth: the grower, not a writer that shrank");
	TAP_OK(pl__stall_own_comm("perflink") && pl__stall_own_comm("perflinkd") &&
		       !pl__stall_own_comm("dd"),
	       "perflink's own processes are known by name");
}

/* /proc/PID/cgroup as v1, v2 and hybrid kernels print it: the memory
 * cgroup's path, and which hierarchy it is in. */
static void test_memcg_parse(void)
{
	char path[64];
	bool v2 = true;

	TAP_OK(pl__memcg_parse("12:pids:/user.slice\n4:memory:/cam/enc\n1:name=systemd:/\n",
			       path, sizeof(path), &v2) == 0 && !v2 && strcmp(path, "/cam/enc") == 0,
	       "v1: the memory hierarchy's path");
	TAP_OK(pl__memcg_parse("5:cpu,memory,blkio:/a\n0::/b\n", path, sizeof(path), &v2) == 0 &&
		       !v2 && strcmp(path, "/a") == 0,
	       "v1 with controllers mounted together, before a hybrid's v2 line");
	TAP_OK(pl__memcg_parse("0::/system.slice/perflinkd.service\n", path, sizeof(path), &v2) == 0 &&
		       v2 && strcmp(path, "/system.slice/perflinkd.service") == 0,
	       "v2: the unified hierarchy's path");
	TAP_OK(pl__memcg_parse("4:memoryx:/a\n3:cpu:/b\n", path, sizeof(path), &v2) == -ENOENT,
	       "no memory controller: none");
	TAP_OK(pl__memcg_parse("4:memory:/a/../../etc\n", path, sizeof(path), &v2) == -EINVAL &&
		       pl__memcg_parse("4:memory:relative\n", path, sizeof(path), &v2) == -EINVAL &&
		       pl__memcg_parse("4:memory:/0123456789012345678901234567890123456789"
				       "0123456789012345678901234567890\n", path, sizeof(path),
				       &v2) == -EINVAL,
	       "a path that climbs, is relative or is too long: refused");
	TAP_OK(pl__memcg_parse("", path, sizeof(path), &v2) == -ENOENT &&
		       pl__memcg_parse("garbage", path, sizeof(path), &v2) == -ENOENT,
	       "nothing to go by: none");
}

int main(void)
{
	test_blkio_episode();
	test_dstate_episode();
	test_dstate_waits();
	test_ongoing();
	test_mechanisms();
	test_writeback_rules();
	test_not_io();
	test_wchan();
	test_dirty_window();
	test_writes_shortcut();
	test_gone_long();
	test_bully_and_ring();
	test_fellow_victim();
	test_event_json();
	test_one_wait_without_delayacct();
	test_memory_and_reads();
	test_memcg_parse();
	return tap_done();
}
