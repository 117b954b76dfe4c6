/* Stall events: when a watched process stalls on block I/O, who it was, how
 * long, who was writing at the time (the bully) and which kernel mechanism
 * the counters point to. Pure logic over numbers the tracer collected, so
 * that the rules can be tested on their own; the rules are written out in
 * docs/tracer.md, the write history is stall_writes.c, the kinds of kernel
 * wait functions stall_wchan.c. */
#ifndef PL_DAEMON_STALL_DETECT_H
#define PL_DAEMON_STALL_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json_writer.h"
#include "proc_parse.h"

/* Ticks of history kept for a stall window: 6.4 s at 10 Hz. A longer stall
 * is reported every PL_STALL_RING - 4 ticks as "ongoing". */
#define PL_STALL_RING 64
/* The bully is looked for over at least this much history. */
#define PL_STALL_BULLY_MS 5000.0

/* The longer write history, for the pages a writeback stall writes out:
 * they can have been dirtied dirty_expire_centisecs (30 s) and more before
 * it. Spans of PL_WRITES_SPAN_TICKS ticks, PL_WRITES_SPANS of them: 51.2 s
 * at 10 Hz. */
#define PL_WRITES_SPAN_TICKS 16
#define PL_WRITES_SPANS 32

/* One process's write volume per tick, in a ring indexed by tick, and the
 * ticks it was blocked in (a bit each); and per span of ticks, in a ring
 * indexed by tick / PL_WRITES_SPAN_TICKS. */
struct pl_writes {
	/* the last tick put with a write, plus one (0: none): most histories
	 * a stall event sums have nothing in its window, which this says */
	uint64_t wrote_until;
	uint32_t wbytes[PL_STALL_RING], wchar[PL_STALL_RING]; /* bytes, saturated */
	uint64_t blocked; /* bit tick % PL_STALL_RING: in D, or a block-I/O wait ended */
	uint64_t first_tick, last_tick; /* ticks the ring holds values for */
	uint32_t span_wbytes[PL_WRITES_SPANS], span_wchar[PL_WRITES_SPANS]; /* saturated */
	/* per tick of the ring, like wbytes: read_bytes (saturated), and the
	 * change of the RSS since the reading before, kB (for the bully of a
	 * saturated disk and of memory pressure) */
	uint32_t rbytes[PL_STALL_RING];
	int32_t rss_kb[PL_STALL_RING];
};
_Static_assert(PL_STALL_RING <= 64, "one bit a tick in pl_writes.blocked");
void pl__writes_reset(struct pl_writes *w, uint64_t tick);
/* Record tick's deltas (negative deltas count as 0). Ticks must increase. */
void pl__writes_put(struct pl_writes *w, uint64_t tick, int64_t d_wbytes, int64_t d_wchar);
/* The reads and the RSS change of the tick last put (after
 * pl__writes_put of that tick; a later call for it replaces them). */
void pl__writes_put_mem(struct pl_writes *w, uint64_t tick, int64_t d_rbytes, int64_t d_rss_kb);
/* read_bytes and the RSS change summed over ticks [from, to], clipped to
 * what the ring holds. */
void pl__writes_sum_mem(const struct pl_writes *w, uint64_t from, uint64_t to, uint64_t *rbytes,
			int64_t *rss_kb);
/* The tick last put was blocked. */
void pl__writes_mark_blocked(struct pl_writes *w, uint64_t tick);
/* Was it blocked in any of ticks [from, to] the ring holds? */
bool pl__writes_blocked(const struct pl_writes *w, uint64_t from, uint64_t to);
/* Sum over ticks [from, to], clipped to what the ring holds. */
void pl__writes_sum(const struct pl_writes *w, uint64_t from, uint64_t to, uint64_t *wbytes,
		    uint64_t *wchar);
/* Sum over ticks [from, to] that may reach further back than the tick ring:
 * what pl__writes_sum says when the ring holds from, else the whole spans
 * from's span to to's hold (at most PL_WRITES_SPAN_TICKS - 1 ticks more at
 * the start), clipped to the spans kept. */
void pl__writes_sum_long(const struct pl_writes *w, uint64_t from, uint64_t to,
			 uint64_t *wbytes, uint64_t *wchar);

/* Add w's write_bytes per span to totals[k], k spans before now_tick's,
 * for the dirty window's reach (pl__writes_reach). */
void pl__writes_add_spans(const struct pl_writes *w, uint64_t now_tick,
			  uint64_t totals[PL_WRITES_SPANS]);
/* The first tick of the latest span back from now_tick's where totals,
 * added up from now back, reach pending_bytes; the oldest span's when they
 * never do. */
uint64_t pl__writes_reach(const uint64_t totals[PL_WRITES_SPANS], uint64_t now_tick,
			  uint64_t pending_bytes);

/* Writers that exited recently, so that a bully which finished (dd) just
 * before its victim woke up is still named. */
#define PL_WRITES_GONE 8
struct pl_writes_gone {
	struct {
		bool used;
		int pid;
		char comm[PL_COMM_MAX];
		struct pl_writes w;
	} e[PL_WRITES_GONE];
};
/* Keep w if it wrote anything in the spans kept, or read in the ticks kept (the last
 * PL_WRITES_SPANS * PL_WRITES_SPAN_TICKS ticks), evicting the entry that
 * wrote least there or whose history is oldest. */
void pl__writes_gone_add(struct pl_writes_gone *g, int pid, const char *comm,
			 const struct pl_writes *w, uint64_t now_tick);

/* System counters for one tick, kept in a ring like the writes. */
struct pl_stall_sys {
	uint64_t tick;
	double mono;
	int64_t d_compact, d_alloc;
	/* vmstat: pages scanned by global direct reclaim (pgscan_direct, or
	 * pgsteal_direct where higher), and by reclaim that is neither kswapd's
	 * nor global direct reclaim (pgscan_anon + pgscan_file less
	 * pgscan_kswapd, _direct, _khugepaged and _proactive: a memory
	 * cgroup's reclaim, which the per-reclaimer counters leave out); 0
	 * where the kernel has no such counters */
	int64_t d_scan_direct, d_scan_cgroup;
	bool have_disk;
	double disk_busy_ms, disk_write_kb;
	uint64_t dirty_kb, writeback_kb; /* meminfo Dirty, Writeback */
	/* vmstat nr_dirty and nr_writeback, and the thresholds the kernel
	 * compares them with: nr_dirty_background_threshold and
	 * nr_dirty_threshold of the same read, or where the kernel has none,
	 * the estimate from the sysctls (thresh_estimated); 0 = unknown */
	uint64_t nr_dirty_kb, nr_writeback_kb, bg_thresh_kb, thresh_kb;
	bool thresh_estimated;
	int64_t written_kb; /* vmstat nr_written since the last tick, -1 unknown */
	bool have_psi_io, have_psi_mem;
	struct pl_psi psi_io, psi_mem;
};
struct pl_stall_history {
	struct pl_stall_sys t[PL_STALL_RING];
	uint64_t first_tick, last_tick; /* 0 = empty */
};
void pl__stall_history_put(struct pl_stall_history *h, const struct pl_stall_sys *s);

/* What a kernel function a task sleeps in (/proc/PID/wchan) says it waits
 * for; the names are in stall_detect.c. */
#define PL_WCHAN_MAX 48
enum pl_wchan_kind {
	PL_WCHAN_UNKNOWN,   /* empty, "0" (not sleeping, or no symbols) */
	PL_WCHAN_THROTTLE,  /* balance_dirty_pages: a writer held back */
	PL_WCHAN_WRITEBACK, /* a page's writeback or lock, a range's writeback */
	PL_WCHAN_JOURNAL,   /* a filesystem journal's commit */
	PL_WCHAN_BLOCK,     /* a bio, a buffer, the block queue */
	PL_WCHAN_MEMORY,    /* compaction, reclaim, migration, allocation */
	PL_WCHAN_LOCK,      /* a mutex or rwsem, which an I/O may be holding */
	PL_WCHAN_OTHER,     /* anything else: vfork, a pipe, a wait for a child */
	PL_WCHAN_READ,      /* a page being read in: a fault, a buffered read */
	/* a page's lock or bit, which is taken for a read or for a
	 * writeback: pl__stall_page_kinds says which */
	PL_WCHAN_PAGE,
	PL_WCHAN_KINDS
};
/* The kinds that are a wait for I/O, as bits 1 << kind. */
#define PL_WCHAN_IO_KINDS                                                                \
	((1u << PL_WCHAN_THROTTLE) | (1u << PL_WCHAN_WRITEBACK) | (1u << PL_WCHAN_JOURNAL) | \
	 (1u << PL_WCHAN_BLOCK))
enum pl_wchan_kind pl__wchan_kind(const char *wchan);
/* The kinds with PL_WCHAN_PAGE taken for a writeback wait when the victim
 * wrote in the stall window (a page of its own going out), else for a
 * read. */
unsigned pl__stall_page_kinds(unsigned kinds, bool victim_wrote);
const char *pl__wchan_kind_name(enum pl_wchan_kind k);

/* Per watched process: the stall episode in progress. Zero it to start. */
struct pl_stall_victim {
	bool open, d_run, qualified;
	uint64_t start_tick;
	double start_mono;   /* earliest the stall can have begun */
	double d_first_mono; /* first tick of the current run of D samples */
	double d_last_mono;  /* the previous D sample of that run */
	/* the current run of D samples between which the task did not run */
	bool c_run;
	double c_first_mono;
	/* Over the episode: the longest span of one run of D samples (kept for
	 * the events' dstate_ms), which may be several waits back to back; the
	 * longest span of D samples between which the task did not run, one
	 * wait; and the runs' spans summed. ms. */
	double dstate_ms, dstate_longest_ms, dstate_sum_ms;
	double blkio_ms;     /* block-I/O delay summed over the episode */
	/* Where it slept in its D samples (/proc/PID/wchan): the kinds seen
	 * (1 << enum pl_wchan_kind) and the name that tells most, an I/O
	 * wait's before any other. */
	unsigned wchan_kinds;
	char wchan[PL_WCHAN_MAX];
	unsigned raised; /* PL_RAISED_* bits: what qualified the episode */
};
enum {
	PL_RAISED_BLKIO = 1u << 0,  /* a tick's block-I/O delay over blkio_ms */
	PL_RAISED_DSTATE = 1u << 1, /* one wait in D of at least dstate_ms */
	/* a run of D samples spanning dstate_ms, several waits perhaps (with
	 * delay accounting on) */
	PL_RAISED_DSTATE_RUN = 1u << 2,
};

struct pl_stall_cfg {
	double blkio_ms;    /* a tick with more block-I/O delay than this stalls */
	double dstate_ms;   /* D samples spanning at least this long stall */
	double interval_ms; /* the tick length */
	/* without delay accounting: only one wait of dstate_ms raises an
	 * episode, not a run of D samples of short ones */
	bool dstate_one_wait;
};

enum pl_stall_verdict {
	PL_STALL_NONE,
	PL_STALL_EMIT,         /* an episode closed: report it, then it is reset */
	PL_STALL_EMIT_ONGOING, /* still stalled after a full window: report now */
};
/* Feed one tick of one watched process: its state and block-I/O delay in
 * this tick; woke: it ran, or a block-I/O wait of its ended, since the
 * previous sample (so that two D samples are two waits). On PL_STALL_EMIT*
 * the victim's fields describe the episode until pl__stall_victim_rearm is
 * called. */
enum pl_stall_verdict pl__stall_update(struct pl_stall_victim *v, const struct pl_stall_cfg *cfg,
				       uint64_t tick, double mono, char state, double d_blk_ms,
				       bool woke);
/* The wchan read at a D sample of an open episode (NUL-terminated; a
 * trailing newline is ignored). */
void pl__stall_victim_wchan(struct pl_stall_victim *v, const char *wchan);
/* After a report: closed episodes are forgotten, ongoing ones go on with a
 * new window that starts after this tick. */
void pl__stall_victim_rearm(struct pl_stall_victim *v, enum pl_stall_verdict verdict,
			    uint64_t tick, double mono);

/* The window's ticks: the episode's, widened to cover its start, at most
 * PL_STALL_RING. */
uint64_t pl__stall_window_ticks(const struct pl_stall_victim *v, const struct pl_stall_cfg *cfg,
				uint64_t tick, double mono);

/* System counters summed or maximised over a window. */
struct pl_stall_window {
	uint64_t from_tick, to_tick;
	double span_ms;
	int64_t compact_stall, allocstall, scan_direct, scan_cgroup;
	bool have_disk;
	double disk_busy_ms, disk_write_kb;
	uint64_t dirty_kb_max, writeback_kb_max, dirty_writeback_kb_max;
	uint64_t dirty_bg_thresh_kb, dirty_thresh_kb; /* 0 = unknown */
	/* vmstat nr_dirty at its highest and the thresholds of that tick;
	 * the ticks where nr_dirty reached the background threshold (the
	 * flusher writes) and where nr_dirty + nr_writeback reached the
	 * middle of the two (balance_dirty_pages throttles writers) */
	uint64_t nr_dirty_kb_max, nr_dirty_writeback_kb_max;
	bool thresh_estimated;
	unsigned over_bg_ticks, over_freerun_ticks;
	bool have_written;
	uint64_t written_kb; /* nr_written summed: pages written back */
	bool have_psi_io, have_psi_mem;
	double psi_io_some_ms, psi_io_full_ms, psi_mem_some_ms, psi_mem_full_ms;
	struct pl_psi psi_io, psi_mem; /* at the end of the window */
};
void pl__stall_window(const struct pl_stall_history *h, uint64_t from_tick, uint64_t to_tick,
		      double interval_ms, struct pl_stall_window *out);

enum {
	PL_MECH_COMPACTION = 1u << 0,
	PL_MECH_DIRECT_RECLAIM = 1u << 1,
	PL_MECH_DIRTY_WRITEBACK = 1u << 2,
	PL_MECH_DISK_SATURATION = 1u << 3,
	PL_MECH_NOT_IO = 1u << 4,
	PL_MECH_CGROUP_RECLAIM = 1u << 5,
	PL_MECH_MEMORY_PRESSURE = 1u << 6,
	PL_MECH_PAGE_READ = 1u << 7,
};
#define PL_MECH_MEMORY                                                        \
	(PL_MECH_COMPACTION | PL_MECH_DIRECT_RECLAIM | PL_MECH_CGROUP_RECLAIM | \
	 PL_MECH_MEMORY_PRESSURE)
/* What the victim's own accounts say about its wait. */
struct pl_stall_wait {
	bool have_blkio;    /* delay accounting on: blkio_ms means something */
	double blkio_ms;    /* over the episode */
	unsigned wchan_kinds; /* 1 << enum pl_wchan_kind, over its D samples */
	/* what it dirtied itself over the stall window: its own fsync's pages
	 * are no one else's writeback */
	uint64_t wbytes;
	/* its memory cgroup's limit hits over the episode (stall_memcg.h) */
	bool have_memcg;
	uint64_t memcg_hits;
};
/* Every mechanism the counters and the victim's wait point to (PL_MECH_*
 * bits). */
unsigned pl__stall_classify(const struct pl_stall_window *w, const struct pl_stall_wait *v);
/* How far back the pages a writeback stall waits for can have been
 * dirtied, in ms: the sysctls' expiry age and flusher period (centisecs;
 * negative: the kernel's defaults, 3000 and 500) plus the time the window's
 * writeback rate takes to write the most dirty and writeback memory it saw. */
double pl__stall_dirty_window_ms(const struct pl_stall_window *w, long expire_cs,
				 long writeback_cs);
/* The first of the bits in rule order, or "unknown" for none. */
const char *pl__stall_mechanism_name(unsigned mechs);

#define PL_STALL_BULLIES 3
struct pl_stall_bully {
	int pid;
	char comm[PL_COMM_MAX];
	uint64_t wbytes, wchar, rbytes; /* bytes over the window */
	int64_t rss_kb; /* its RSS's change over the window */
	bool exited;
};
/* What the bully is ranked by, from the mechanism (stall_detect.c). */
enum pl_bully_rank {
	PL_BULLY_NONE,   /* the evidence names no one: not_io, a lock's wait */
	PL_BULLY_WRITES, /* write_bytes, then wchar */
	PL_BULLY_DISK,   /* read_bytes + write_bytes: what it moved on the disk */
	PL_BULLY_MEMORY, /* the growth of its RSS */
};
enum pl_bully_rank pl__stall_bully_rank(unsigned mechs, const struct pl_stall_wait *v);
const char *pl__stall_bully_rank_name(enum pl_bully_rank r);
/* perflink's own processes (the tracer, perflinkd, the recorder): their
 * output is never a stall's cause worth naming. */
bool pl__stall_own_comm(const char *comm);
/* A candidate blocked in the stall window (so by the same mechanism the
 * window's counters point to) that wrote no more than the victim, by
 * write_bytes then wchar: another victim, not a bully. */
bool pl__stall_fellow_victim(bool blocked, uint64_t wbytes, uint64_t wchar,
			     uint64_t victim_wbytes, uint64_t victim_wchar);
/* Insert a candidate into a list kept sorted by write_bytes, then wchar;
 * candidates that wrote nothing are ignored. */
void pl__stall_bully_offer(struct pl_stall_bully *top, size_t *n, int pid, const char *comm,
			   uint64_t wbytes, uint64_t wchar, bool exited);
/* The same by rank r (pid, comm and exited taken from c): a candidate with
 * nothing to rank by (no bytes; an RSS that did not grow) is ignored. */
void pl__stall_bully_offer_by(struct pl_stall_bully *top, size_t *n, enum pl_bully_rank r,
			      const struct pl_stall_bully *c);

struct pl_stall_event {
	double wall, mono;
	int pid;
	const char *comm, *label;
	bool ongoing;
	double blkio_ms, dstate_ms, dstate_longest_ms, dstate_sum_ms, window_ms, bully_window_ms;
	bool bully_by_dirty; /* the bully window is the dirty window */
	enum pl_bully_rank bully_rank;
	unsigned raised; /* PL_RAISED_* */
	uint64_t victim_wbytes, victim_wchar, victim_rbytes;
	struct pl_stall_bully bully[PL_STALL_BULLIES];
	size_t nbully;
	struct pl_stall_window win;
	struct pl_stall_wait wait;
	const char *wchan; /* the victim's, "" unknown */
	unsigned mechs;
	double sampler_ms, sampler_ms_p99;
};
/* One JSON line; NULL if the writer failed. */
const char *pl__stall_event_json(struct pl_json *j, const struct pl_stall_event *e);

#endif
