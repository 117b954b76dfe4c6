/* The render sampler (docs/sampler.md): where the render thread spends its
 * CPU time, from a per-thread CPU-time timer whose signal handler copies
 * the registers and the top of the stack into a lock-free ring; a sampler
 * thread walks the copies with libunwind's remote interface, names the
 * frames and appends a report every window.
 *
 * Files: sampler_hooks.c (the exported swap hooks), sampler_frames.c (the
 * render thread and its frame times), sampler_signal.c (timer and
 * handler), sampler_capture.c (the handler's copy), sampler_regs_CPU.c
 * (the registers, per CPU), sampler_ring.c (the handler's ring),
 * sampler_modules.c (the loaded modules, under the loader's lock),
 * sampler_unwind.c (the walk), sampler_stacks.c (aggregation),
 * sampler_build_ids.c (the modules a window's frames are in, with their
 * build-ids, for the host),
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

/* sampler_hooks.c: the stand-in (../stand_in.h) for the swap function
 * name, or NULL when name is none. */
struct pl_stand_in;
const struct pl_stand_in *pl__swap_stand_in(const char *name);

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
/* On the render thread, outside any handler, once: its stack's bounds,
 * which the handler copies from (sampler_capture.c). */
void pl__sampler_thread_warm(void);
/* On the render thread, once it is known: the sampler thread arms the
 * timer now rather than at its next tick (up to 0.1 s of frames unsampled). */
void pl__sampler_thread_wake(void);

/* --- what a sample is ---------------------------------------------------- */

#define PL_STACK_DEPTH 48

/* A walked stack, as the sampler thread aggregates it. */
struct pl_stack_sample {
	uint32_t depth;
	uint16_t idle;      /* taken inside a swap */
	uint16_t cut_short; /* the walk ended before the outermost frame */
	uint64_t taken_ns;  /* the raw sample's mono_ns: names are judged by the mappings then */
	uintptr_t ip[PL_STACK_DEPTH]; /* [0] the interrupted pc, then return addresses */
};

/* What the handler takes (sampler_capture.c): the interrupted registers
 * and a copy of the top of the stack, never walked there. The sampler
 * thread unwinds the copy (sampler_unwind.c). 16 KiB of stack: perf's
 * DWARF call graphs copy 8 KiB by default; bench/sampler_overhead and the
 * glxgears test print how often a walk reaches the end of the copy. */
#define PL_STACK_COPY_BYTES (16u * 1024u)
/* Registers by libunwind's numbers for the target (sampler_regs_CPU.c) */
#define PL_REGS_MAX 34

struct pl_raw_sample {
	uint64_t mono_ns;       /* CLOCK_MONOTONIC when the handler ran */
	int32_t tid;            /* the thread it ran on */
	uint16_t idle;
	uint16_t stack_unknown; /* sp outside every stack the sampler can copy: pc only */
	uint32_t stack_len;     /* bytes copied, from stack_start */
	uintptr_t stack_start;  /* the interrupted sp */
	uintptr_t regs[PL_REGS_MAX];
	unsigned char stack[PL_STACK_COPY_BYTES];
};

/* --- sampler_regs_CPU.c: the registers a walk starts from -------------- */

/* Copy the interrupted registers out of the handler's ucontext_t; their
 * pc and sp. Async-signal-safe. */
void pl__regs_capture(uintptr_t regs[PL_REGS_MAX], const void *ucontext);
uintptr_t pl__regs_pc(const uintptr_t regs[PL_REGS_MAX]);
uintptr_t pl__regs_sp(const uintptr_t regs[PL_REGS_MAX]);
/* The slot of libunwind's register number unw_reg, or -1 when the
 * sampler does not keep it. */
int pl__regs_slot(int unw_reg);
/* Mend what libunwind's remote interface gets wrong on this CPU, on the
 * address space (unw_addr_space_t) just made over accessors
 * (unw_accessors_t *); nothing where it gets it right. */
void pl__regs_mend_space(void *space, const void *accessors);

/* --- sampler_capture.c: the handler's copy of the stack ----------------- */

/* Probe once (sampler thread): whether process_vm_readv works here (not
 * under qemu-user, nor where a seccomp filter refuses it). */
void pl__capture_init(void);
/* On the render thread, outside any handler: its stack's bounds, so that
 * the handler copies from them without a system call. */
void pl__capture_thread_bounds(void);
/* The render thread changed: forget the bounds taken on the last one. */
void pl__capture_forget_bounds(void);
/* In the handler: fill s (idle is the caller's). Never faults: it copies
 * only from the thread's own stack bounds, or through process_vm_readv,
 * which returns an error where memory is not mapped. */
void pl__capture(struct pl_raw_sample *s, const void *ucontext);

/* --- sampler_modules.c: the loaded modules, seen under the loader's lock - */

/* Sampler thread only. Run fn(arg) while the loader's list of modules is
 * held still (inside dl_iterate_phdr: glibc unmaps a closed library only
 * under the same lock), with the module table brought up to date first.
 * Inside fn the modules' readable segments can be read without a fault.
 * 0, or -errno when the table cannot be built. */
int pl__modules_hold(void (*fn)(void *arg), void *arg);
/* Inside pl__modules_hold only. */
struct pl_module_text {
	uintptr_t lo, hi;          /* the executable segment holding pc */
	uintptr_t eh_frame_hdr;    /* 0 when the module has none */
	uintptr_t load_base;
};
bool pl__modules_text_of(uintptr_t pc, struct pl_module_text *out);
/* Whether [addr, addr + len) lies in one readable segment of a module. */
bool pl__modules_readable(uintptr_t addr, size_t len);
/* "module+offset" for pc in a module unloaded since it was seen (the last
 * 64 kept); false when pc was in none. */
bool pl__modules_gone_name(uintptr_t pc, char *out, size_t cap);
/* Bumped each time the table changes (a library came or went); each
 * reader keeps the value it last saw. */
unsigned long pl__modules_generation(void);

/* --- sampler_anon_code.c: a JIT's code, from /proc/self/maps ----------- */

/* Whether pc is in an anonymous executable mapping (a JIT's code) as last
 * read; a pc found in none asks for the next refresh. */
bool pl__anon_exec(uintptr_t pc);
/* Outside pl__modules_hold: read /proc/self/maps again if a walk asked. */
void pl__anon_refresh_maps(void);
/* Outside pl__modules_hold, to name pc of a sample taken at taken_ns:
 * whether it was a JIT's code then, as well as can be told. In the mappings
 * as last read; else, if they were read before the sample, in them read
 * again (a few times a window at most); else in a region seen before and
 * unmapped since (the last 64 kept). */
bool pl__anon_code(uintptr_t pc, uint64_t taken_ns);
/* A new window: its reads of /proc/self/maps for pl__anon_code. */
void pl__anon_new_window(void);

/* --- sampler_unwind.c: the walk, on the sampler thread ------------------- */

/* Set up libunwind's address space over the copies. 0 or -errno. */
int pl__unwind_init(void);
/* Walk raw into out; a walk that cannot go on (no unwind information, a
 * read outside the copy and the modules, a pc in no module) keeps the
 * frames found so far and is marked cut short. Inside pl__modules_hold. */
void pl__unwind(const struct pl_raw_sample *raw, struct pl_stack_sample *out);
/* Walks since start that ended at the end of the stack copy. */
unsigned long pl__unwind_copy_ends(void);

/* --- sampler_ring.c: handler -> sampler thread ------------------------- */

/* Producer (the handler, one thread at a time): a free slot or NULL when
 * full (the sample is counted as dropped); then commit, which says
 * whether the ring is half full (the sampler thread should drain now). */
struct pl_raw_sample *pl__ring_claim(void);
bool pl__ring_commit(void);
/* Consumer (the sampler thread): the next sample, or NULL. Release it
 * before the next call. */
const struct pl_raw_sample *pl__ring_peek(void);
void pl__ring_release(void);
/* Samples dropped since start (ring full); wraps on 32-bit. */
unsigned long pl__ring_dropped(void);

/* --- sampler_signal.c --------------------------------------------------- */

/* 0 or -errno. */
int pl__signal_init(void);
/* Which clock the samples are taken on (sampler_signal.c). */
enum pl_sample_clock {
	PL_SAMPLE_CLOCK_NONE,
	PL_SAMPLE_CLOCK_TASK,      /* perf's task clock, kernel time included */
	PL_SAMPLE_CLOCK_TASK_USER, /* perf's task clock, user time only */
	PL_SAMPLE_CLOCK_TIMER,     /* a POSIX timer on the CPU clock (tick-checked) */
};
/* Install the handler (unless the program has one for signo: then
 * -EBUSY) and start sampling tid's CPU time hz times a second: on perf's
 * task clock where task_clock and the kernel allow, else a POSIX timer. */
int pl__signal_arm(pid_t tid, int signo, uint32_t hz, bool task_clock);
/* The clock of the last arm. */
enum pl_sample_clock pl__signal_clock(void);
/* In a forked child: the parent's event closed, nothing armed. */
void pl__signal_fork_child(void);
/* The clock's period for hz, in ns of the thread's CPU time: what one
 * sample stands for (on the POSIX timer the kernel may stretch it to whole
 * ticks). */
long pl__signal_period_ns(uint32_t hz);
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
/* Count s in the window; a stack not seen before in it is named at once. */
/* The stack's slot in the window's table (for pl__stacks_folded's
 * slot_line), or -1: an idle sample, or one the table had no room for. */
int pl__stacks_add(const struct pl_stack_sample *s);
/* Libraries came or went: what names are taken from is read again. */
void pl__stacks_names_refresh(void);
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
 * *buf (malloc'd, grown as needed). With slot_line (PL_STACK_SLOTS
 * entries), also which line (from 0) each slot's stack went into: -1 for
 * an empty slot. */
#define PL_STACK_SLOTS 2048u
int pl__stacks_folded(char **buf, size_t *len, size_t *cap, int32_t *slot_line);

/* --- sampler_lines.c (libdw) or sampler_lines_off.c -------------------- */

/* Sampler thread only. Re-read the process's modules (each window). */
void pl__lines_refresh(void);
/* "file.c:42" for the instruction at pc; false when unknown. */
bool pl__line_of(uintptr_t pc, char *out, size_t cap);
/* The name of the function at pc from the full symbol table (static
 * functions too); false when unknown. */
bool pl__symbol_of(uintptr_t pc, char *out, size_t cap);

/* --- sampler_demangle.c: C++ names ------------------------------------- */

/* Each window, before naming: look for the program's C++ runtime again if
 * it had none loaded. */
void pl__demangle_window(void);
/* name (whole, as the symbol table has it) into out (cap bytes), made
 * readable when it is a C++ name and a demangler is at hand; as it is
 * otherwise. Cut to fit after demangling, never before. */
void pl__demangle(const char *name, char *out, size_t cap);

/* --- sampler_build_ids.c: the modules a window's frames are in --------- */

#define PL_BUILD_ID_MAX 64     /* bytes of a build-id kept; a longer one is none */
#define PL_MODULE_NAME_MAX 128 /* a module's name as the frames spell it */

/* A module a window's frames named, for the host to symbolise its
 * module+offset frames by (docs/sampler.md, "Modules and build-ids"). The
 * offset in "NAME+0xOFFSET" is the address less the module's load bias
 * (dlpi_addr): an address in the ELF file's own virtual address space. */
struct pl_window_module {
	const char *name;     /* as the frames spell it ("renderer" in "renderer+0x1234") */
	const char *path;     /* the loader's (the program's: /proc/self/exe's target) */
	const char *build_id; /* NT_GNU_BUILD_ID in lowercase hex; "": none */
	bool in_window;       /* a frame of this window is in it */
};

/* Sampler thread, inside dl_iterate_phdr's callback for info's module
 * (its notes are read there, mapped): its entry, its build-id read the
 * first time. Never NULL: a full table reuses its oldest entry. */
struct dl_phdr_info;
struct pl_window_module *pl__window_module_note(const struct dl_phdr_info *info);
/* A frame of this window named m as frame_name. */
void pl__window_module_use(struct pl_window_module *m, const char *frame_name);
/* A new window: none named yet. */
void pl__window_modules_reset(void);
/* The window's modules, one a call from *cursor (0 to start); NULL after
 * the last. */
const struct pl_window_module *pl__window_module_at(size_t *cursor);

/* --- sampler_report.c ---------------------------------------------------- */

struct pl_render_stats {
	bool valid;
	double fps, frame_ms;
};

/* The window's report text (malloc'd, *len bytes), or NULL with *len 0
 * when out of memory. A window without a busy sample is a header and a
 * line saying so. */
char *pl__report_text(uint32_t window_s, const struct pl_render_stats *rs, size_t *len);

/* --- sampler_forward.c --------------------------------------------------- */

/* When each sample of a window was taken and which of its folded lines it
 * went into (-1: idle, in a swap, or no room in the table), so that the
 * host can put the samples on the render thread's timeline. Bounded: the
 * first PL_WINDOW_SAMPLES_MAX of a window; the rest are counted. */
#define PL_WINDOW_SAMPLES_MAX 4096u
struct pl_timed_sample {
	uint64_t mono_ns;
	int32_t line;
};
struct pl_window_samples {
	uint64_t end_ns; /* CLOCK_MONOTONIC when the window was written */
	pid_t tid;       /* the render thread's; 0: none known */
	const struct pl_timed_sample *sample;
	size_t n;
	uint64_t dropped;
};

/* The window's report and folded stacks to perflinkd as one render_window
 * telemetry line (when PERFLINK_SOCKET is not off and perflinkd runs);
 * period_ns is the sampling timer's interval. */
void pl__sampler_forward(uint32_t window_s, uint64_t period_ns, const struct pl_render_stats *rs,
			 const char *text, size_t len, const char *folded, size_t flen,
			 const struct pl_window_samples *ws);

/* --- sampler_file.c ------------------------------------------------------ */

/* Append text to path; when the file would pass cap bytes it is first
 * renamed to path.1 (replacing the previous). 0 or -errno. */
int pl__rotating_append(const char *path, const char *text, size_t len, uint32_t cap);

#endif
