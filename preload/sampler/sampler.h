/* The render sampler (docs/sampler.md): where the render thread spends its
 * CPU time, from a per-thread CPU-time timer whose signal handler unwinds
 * the stack with libunwind into a lock-free ring; a sampler thread names
 * the frames and appends a report every window.
 *
 * Files: sampler_hooks.c (the exported swap hooks), sampler_frames.c (the
 * render thread and its frame times), sampler_ring.c (the handler's ring),
 * sampler_signal.c (timer and handler), sampler_stacks.c (aggregation),
 * sampler_report.c (text and folded stacks), sampler_file.c (the rotating
 * files), sampler_thread.c (the thread and its life); sampler_off.c
 * replaces the libunwind-dependent ones in a build without libunwind.
 *
 * The libunwind-dependent files are the sampler module,
 * libperflink-sampler.so, loaded only when the sampler is on
 * (sampler_module.h: sampler_loader.c in the shim, sampler_module_glue.c
 * in the module); sampler_frames.c and sampler_hooks.c stay in the shim. */
#ifndef PL_PRELOAD_SAMPLER_H
#define PL_PRELOAD_SAMPLER_H

#include "settings.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* --- sampler_frames.c: always built ------------------------------------ */

/* Nonzero once the sampler runs: the swap hooks look at nothing else. */
extern int pl__sampler_on;

/* Set by the swap hooks around the real call on every thread; the signal
 * handler reads it (through pl__in_swap_now, from the module) to count a
 * sample as idle. */
extern __thread int pl__in_swap __attribute__((tls_model("initial-exec")));
int pl__in_swap_now(void);
/* pl__sampler_on, for the module (sampler_module.h), which cannot reach
 * the shim's variables. */
bool pl__sampler_is_on(void);
void pl__sampler_set_on(bool on);

/* Swap hooks, on the swapping thread: async-signal-safe, no locks. The
 * first thread that swaps becomes the render thread unless a thread name
 * was given. */
void pl__sampler_swap_enter(void);
void pl__sampler_swap_exit(void);

/* The render thread's tid, 0 while unknown. */
pid_t pl__render_tid(void);
/* Claim tid as the render thread (when found by name); forget it (it
 * exited) with 0. */
void pl__render_tid_set(pid_t tid);

/* Cumulative frames of the render thread and the time it spent between a
 * swap's return and the next swap (rendering), in µs. Both wrap (at 2^32
 * on 32-bit targets, where 64-bit atomics would take libatomic's locks):
 * take differences in unsigned long, at least every hour. */
void pl__frames_read(unsigned long *frames, unsigned long *render_us);

void pl__frames_init(const char *thread_name);

/* --- the sampler proper: sampler_thread.c in the sampler module, reached
 * through sampler_loader.c in the shim; sampler_off.c without libunwind -- */

/* Constructor: start the sampler when s asks for it; says why not when it
 * cannot. */
void pl__sampler_start(const struct pl_settings *s);
/* Destructor: stop sampling and write the window in progress. */
void pl__sampler_finish(void);
/* On the render thread, outside any handler, once: the unwinder's lazy
 * set-up, so that the handler never takes its first-use locks. */
void pl__sampler_thread_warm(void);
/* On the render thread, once it is known: the sampler thread arms the
 * timer now rather than at its next tick (up to 0.1 s of frames unsampled). */
void pl__sampler_thread_wake(void);

/* --- sampler_ring.c: handler -> sampler thread ------------------------- */

#define PL_STACK_DEPTH 48

struct pl_stack_sample {
	uint32_t depth;
	uint16_t idle;      /* taken inside a swap */
	uint16_t cut_short; /* libunwind failed before the outermost frame */
	uintptr_t ip[PL_STACK_DEPTH]; /* [0] the interrupted pc, then return addresses */
};

/* Producer (the handler, one thread at a time): a free slot or NULL when
 * full (the sample is counted as dropped); then commit. */
struct pl_stack_sample *pl__ring_claim(void);
void pl__ring_commit(void);
/* Consumer (the sampler thread): the next sample, or NULL. Release it
 * before the next call. */
const struct pl_stack_sample *pl__ring_peek(void);
void pl__ring_release(void);
/* Samples dropped since start (ring full); wraps on 32-bit. */
unsigned long pl__ring_dropped(void);

/* --- sampler_signal.c --------------------------------------------------- */

/* Global unwinder set-up; 0 or -errno. */
int pl__signal_init(void);
/* Install the handler (unless the program has one for signo: then
 * -EBUSY) and start a timer on tid's CPU clock, hz a second. */
int pl__signal_arm(pid_t tid, int signo, uint32_t hz);
void pl__signal_disarm(void);
/* Whether signo's handler is still ours. */
bool pl__signal_intact(int signo);

/* --- sampler_stacks.c --------------------------------------------------- */

struct pl_count {
	const char *name;
	uint64_t count;
};

int pl__stacks_init(void);
/* The process is exiting (destructors run): name without dlopen. */
void pl__stacks_exiting(void);
void pl__stacks_add(const struct pl_stack_sample *s);
void pl__stacks_reset(void);
/* Samples of the window: all, idle, those whose stack did not fit the
 * table, and those libunwind could not walk to the end (kept, with the
 * frames it found). */
void pl__stacks_totals(uint64_t *samples, uint64_t *idle, uint64_t *overflow,
		       uint64_t *cut_short);

/* Name the window's frames (dladdr) and rank them: inclusive (each
 * function once per stack), self (innermost), lines (innermost pc).
 * Arrays are sorted by count, descending; valid until the next reset. */
struct pl_ranking {
	struct pl_count *inclusive, *self, *lines;
	size_t n_inclusive, n_self, n_lines;
};
int pl__stacks_rank(struct pl_ranking *r);

/* Folded stacks of the busy samples ("outer;...;inner N\n"), appended to
 * *buf (malloc'd, grown as needed). */
int pl__stacks_folded(char **buf, size_t *len, size_t *cap);

/* --- sampler_lines.c (libdw) or sampler_lines_off.c -------------------- */

/* Sampler thread only. Re-read the process's modules (each window). */
void pl__lines_refresh(void);
/* "file.c:42" for the instruction at pc; false when unknown. */
bool pl__line_of(uintptr_t pc, char *out, size_t cap);
/* The name of the function at pc from the full symbol table (static
 * functions too); false when unknown. */
bool pl__symbol_of(uintptr_t pc, char *out, size_t cap);

/* --- sampler_report.c ---------------------------------------------------- */

struct pl_render_stats {
	bool valid;
	double fps, frame_ms;
};

/* The window's report text (malloc'd, *len bytes), or NULL with *len 0
 * when the window had no busy sample. */
char *pl__report_text(uint32_t window_s, const struct pl_render_stats *rs, size_t *len);

/* --- sampler_forward.c --------------------------------------------------- */

/* The window's report and folded stacks to perflinkd as one render_window
 * telemetry line (when PERFLINK_SOCKET is not off and perflinkd runs). */
void pl__sampler_forward(uint32_t window_s, const struct pl_render_stats *rs, const char *text,
			 size_t len, const char *folded, size_t flen);

/* --- sampler_file.c ------------------------------------------------------ */

/* Append text to path; when the file would pass cap bytes it is first
 * renamed to path.1 (replacing the previous). 0 or -errno. */
int pl__rotating_append(const char *path, const char *text, size_t len, uint32_t cap);

#endif
