/* Stall events: when a watched process stalls on block I/O, who it was, how
 * long, who was writing at the time (the bully) and which kernel mechanism
 * the counters point to. Pure logic over numbers the tracer collected, so
 * that the rules can be tested on their own; the rules are written out in
 * stall_detect.c. */
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

/* One process's write volume per tick, in a ring indexed by tick, and the
 * ticks it was blocked in (a bit each). */
struct pl_writes {
	uint32_t wbytes[PL_STALL_RING], wchar[PL_STALL_RING]; /* bytes, saturated */
	uint64_t blocked; /* bit tick % PL_STALL_RING: in D, or a block-I/O wait ended */
	uint64_t first_tick, last_tick; /* ticks the ring holds values for */
};
_Static_assert(PL_STALL_RING <= 64, "one bit a tick in pl_writes.blocked");
void pl__writes_reset(struct pl_writes *w, uint64_t tick);
/* Record tick's deltas (negative deltas count as 0). Ticks must increase. */
void pl__writes_put(struct pl_writes *w, uint64_t tick, int64_t d_wbytes, int64_t d_wchar);
/* The tick last put was blocked. */
void pl__writes_mark_blocked(struct pl_writes *w, uint64_t tick);
/* Was it blocked in any of ticks [from, to] the ring holds? */
bool pl__writes_blocked(const struct pl_writes *w, uint64_t from, uint64_t to);
/* Sum over ticks [from, to], clipped to what the ring holds. */
void pl__writes_sum(const struct pl_writes *w, uint64_t from, uint64_t to, uint64_t *wbytes,
		    uint64_t *wchar);

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
/* Keep w if it wrote anything in the last PL_STALL_RING ticks, evicting the
 * entry that wrote least or whose history is oldest. */
void pl__writes_gone_add(struct pl_writes_gone *g, int pid, const char *comm,
			 const struct pl_writes *w, uint64_t now_tick);

/* System counters for one tick, kept in a ring like the writes. */
struct pl_stall_sys {
	uint64_t tick;
	double mono;
	int64_t d_compact, d_alloc;
	bool have_disk;
	double disk_busy_ms, disk_write_kb;
	uint64_t dirty_kb, writeback_kb;
	bool have_psi_io, have_psi_mem;
	struct pl_psi psi_io, psi_mem;
};
struct pl_stall_history {
	struct pl_stall_sys t[PL_STALL_RING];
	uint64_t first_tick, last_tick; /* 0 = empty */
};
void pl__stall_history_put(struct pl_stall_history *h, const struct pl_stall_sys *s);

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
};

struct pl_stall_cfg {
	double blkio_ms;    /* a tick with more block-I/O delay than this stalls */
	double dstate_ms;   /* D samples spanning at least this long stall */
	double interval_ms; /* the tick length */
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
	int64_t compact_stall, allocstall;
	bool have_disk;
	double disk_busy_ms, disk_write_kb;
	uint64_t dirty_kb_max, writeback_kb_max, dirty_writeback_kb_max;
	uint64_t dirty_bg_thresh_kb, dirty_thresh_kb; /* 0 = unknown */
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
};
/* Every mechanism the counters point to (PL_MECH_* bits). */
unsigned pl__stall_classify(const struct pl_stall_window *w);
/* The first of the bits in rule order, or "unknown" for none. */
const char *pl__stall_mechanism_name(unsigned mechs);

#define PL_STALL_BULLIES 3
struct pl_stall_bully {
	int pid;
	char comm[PL_COMM_MAX];
	uint64_t wbytes, wchar; /* bytes over the window */
	bool exited;
};
/* A candidate blocked in the stall window (so by the same mechanism the
 * window's counters point to) that wrote no more than the victim, by
 * write_bytes then wchar: another victim, not a bully. */
bool pl__stall_fellow_victim(bool blocked, uint64_t wbytes, uint64_t wchar,
			     uint64_t victim_wbytes, uint64_t victim_wchar);
/* Insert a candidate into a list kept sorted by write_bytes, then wchar;
 * candidates that wrote nothing are ignored. */
void pl__stall_bully_offer(struct pl_stall_bully *top, size_t *n, int pid, const char *comm,
			   uint64_t wbytes, uint64_t wchar, bool exited);

struct pl_stall_event {
	double wall, mono;
	int pid;
	const char *comm, *label;
	bool ongoing;
	double blkio_ms, dstate_ms, dstate_longest_ms, dstate_sum_ms, window_ms, bully_window_ms;
	uint64_t victim_wbytes, victim_wchar;
	struct pl_stall_bully bully[PL_STALL_BULLIES];
	size_t nbully;
	struct pl_stall_window win;
	unsigned mechs;
	double sampler_ms, sampler_ms_p99;
};
/* One JSON line; NULL if the writer failed. */
const char *pl__stall_event_json(struct pl_json *j, const struct pl_stall_event *e);

#endif
