/* A recorded run as `perflink-host --out DIR` left it, read back for
 * export: the frames of DIR/frames.csv and what the exporters use of
 * DIR/telemetry/TYPE.jsonl (link_diag totals, perflink-profile stages,
 * stall events, resource samples, per-call stage events, the render
 * sampler's windows of stacks).
 *
 * The files are input from elsewhere (a copy, a truncated run): every line
 * that does not parse is skipped and counted per file, the rest is kept.
 * Times are the device's CLOCK_MONOTONIC in ns, as the files have them. */
#ifndef PL_HOST_RECORDING_H
#define PL_HOST_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PL_REC_NAME 64 /* comm, stage and mechanism names, NUL included */

struct pl_recorded_frame {
	uint64_t frame_id, sequence, bytes, device_send_ns;
	uint64_t host_recv_device_ns; /* if have_recv */
	uint64_t round_trip_ns;       /* if have_round_trip */
	bool have_recv, have_round_trip;
};

/* one stage of one process, from its last perflink-profile report
 * (the counts there are cumulative) */
struct pl_recorded_stage {
	int64_t pid;
	char comm[PL_REC_NAME], stage[PL_REC_NAME];
	uint64_t calls, wall_total_ns, cpu_total_ns;
};

struct pl_recorded_stall {
	int64_t pid; /* the victim */
	char comm[PL_REC_NAME], mechanism[PL_REC_NAME];
	uint64_t start_ns, duration_ns;
	/* the first bully the tracer named (bully.0); pid 0: none */
	int64_t bully_pid;
	char bully_comm[PL_REC_NAME];
	double bully_wbytes_kb;
};

/* A value over time, for the trace's counter tracks: raw, as the files
 * have it (the writer turns CPU ticks and link bytes into rates). */
enum pl_counter_kind {
	PL_COUNTER_PROCESS_CPU_TICKS, /* resources: utime + stime */
	PL_COUNTER_PROCESS_RSS_BYTES, /* resources: VmRSS */
	PL_COUNTER_MEM_AVAILABLE_BYTES, /* resources: meminfo_kb */
	PL_COUNTER_MEM_DIRTY_BYTES,
	PL_COUNTER_MEM_WRITEBACK_BYTES,
	PL_COUNTER_LINK_BYTES,        /* link_diag: totals.bytes */
	PL_COUNTER_LINK_BACKLOG_BYTES, /* link_diag: last_send.backlog_kb */
	PL_COUNTER_KIND_COUNT
};

struct pl_recorded_point {
	uint8_t kind;  /* enum pl_counter_kind */
	uint16_t comm; /* into pl_recording.names, for process counters */
	int64_t pid;   /* process counters; 0 for the others */
	uint64_t mono_ns;
	double value;
};

/* one process in the last resource sample; first_* from the first sample
 * that had it (the same pid), for its CPU use over the run */
struct pl_recorded_process {
	int64_t pid;
	char comm[PL_REC_NAME];
	uint64_t cpu_ticks, resident_bytes;
	uint64_t mono_ns, first_cpu_ticks, first_mono_ns; /* if have_mono */
	bool have_cpu, have_resident, have_mono;
};

/* the device's link totals from the last link_diag line */
struct pl_recorded_link {
	bool have;
	uint64_t frames_sent, frames_held, frames_replaced, frames_lost;
	uint64_t messages_dropped, bytes;
};

/* Frames the device held, replaced or lost between two link_diag lines
 * (their totals' increase), at the later line's time. The first line is
 * the baseline; totals that go down (the device restarted) start a new one. */
struct pl_recorded_link_change {
	uint64_t mono_ns;
	uint64_t held, replaced, lost;
};

/* What one process's stage profiler says it lost, from its latest lines:
 * perflink-profile's dropped_calls (calls it could not count),
 * site_overflow_calls (calls past its table of call sites) and
 * daemon_dropped_reports (reports perflinkd had no room for), and
 * perflink-stage-calls' events_dropped (timed calls lost to a full ring);
 * each count is the process's total so far. */
struct pl_recorded_loss {
	int64_t pid;
	char comm[PL_REC_NAME];
	/* if have_report; UINT64_MAX: the report did not say (an older device) */
	uint64_t dropped_calls, site_overflow_calls, daemon_dropped_reports;
	uint64_t events_dropped; /* if have_events */
	bool have_report, have_events;
};

/* One timed call from a perflink-stage-calls line (docs/stages.md,
 * "Events"); its stage and its process's comm by index into names. */
struct pl_recorded_call {
	int64_t pid;
	uint32_t tid;
	uint16_t stage, comm; /* into pl_recording.names */
	uint8_t result;       /* 0 ok, 1 EAGAIN, 2 ENODATA, 3 EINTR, 4 error */
	uint64_t start_ns, wall_ns, cpu_ns, bytes;
};

/* One stack of a render_window's folded text ("outer;...;inner COUNT"):
 * frames outermost first, ';' between them, as the device sent them. */
struct pl_recorded_stack {
	char *frames; /* malloc'd, NUL-terminated */
	uint64_t count;
};

/* A module a window's frames fell in (render_window's "modules", docs/wire.md
 * "Frames a host can name"): name as its MODULE+0xOFFSET frames spell it,
 * the file's path on the device, and its GNU build-id in lowercase hex
 * ("" when the device read none, or what it sent was not hex). */
#define PL_REC_BUILD_ID_HEX 128 /* 64 bytes, as the device keeps them */
struct pl_recorded_module {
	char *name, *path; /* malloc'd, NUL-terminated; path may be NULL */
	char build_id[PL_REC_BUILD_ID_HEX + 1];
};

/* One render sampler window: its stacks are stacks[first_stack ..
 * first_stack + n_stacks), its modules modules[first_module ..
 * first_module + n_modules). */
struct pl_recorded_window {
	int64_t pid;
	char comm[PL_REC_NAME];
	uint64_t window_s;
	uint64_t period_ns; /* the sampling timer's interval; 0: not said */
	size_t first_stack, n_stacks;
	size_t first_module, n_modules;
};

/* What a window's report says of a function the folded stacks name: its
 * module ("hot_a (renderer)") and the file:line of its hottest innermost
 * line ("spin.h:10 hot_a"), the first window that says it wins. name is
 * spelled as in the folded stacks (' ' and ';' as '_'), shown as in the
 * report ("ns::draw(int, char)"). */
struct pl_recorded_function {
	char *name, *shown, *module, *file; /* malloc'd; all but name may be NULL */
	uint64_t line;                      /* 0: unknown */
};

/* One render sampler sample with its time (render_window's "samples"):
 * on thread tid of process pid, its stack stacks[stack], or -1 when the
 * device named none (idle in a swap, no room) or its folded line did not
 * parse. */
struct pl_recorded_sample {
	int64_t pid;
	uint32_t tid;
	int64_t stack;
	uint64_t mono_ns;
};

enum pl_recording_file {
	PL_REC_FRAMES,    /* frames.csv */
	PL_REC_LINK_DIAG, /* telemetry/link_diag.jsonl */
	PL_REC_PROFILE,   /* telemetry/perflink-profile.jsonl */
	PL_REC_STALL,     /* telemetry/stall.jsonl */
	PL_REC_RESOURCES, /* telemetry/resources.jsonl */
	PL_REC_STAGE_CALLS, /* telemetry/perflink-stage-calls.jsonl */
	PL_REC_RENDER_WINDOW, /* telemetry/render_window.jsonl */
	PL_REC_FILE_COUNT
};

struct pl_recording {
	struct pl_recorded_frame *frames;
	size_t n_frames, cap_frames;
	struct pl_recorded_stage *stages;
	size_t n_stages, cap_stages;
	struct pl_recorded_stall *stalls;
	size_t n_stalls, cap_stalls;
	struct pl_recorded_process *procs;
	size_t n_procs, cap_procs;
	uint64_t clk_tck; /* from the resource header; 0: unknown */
	struct pl_recorded_link link;
	struct pl_recorded_link_change *link_changes;
	size_t n_link_changes, cap_link_changes;
	struct pl_recorded_call *calls;
	size_t n_calls, cap_calls;
	struct pl_recorded_loss *losses; /* one a process */
	size_t n_losses, cap_losses;
	char (*names)[PL_REC_NAME]; /* stage and comm names, once each */
	size_t n_names, cap_names;
	struct pl_recorded_point *points;
	size_t n_points, cap_points;
	struct pl_recorded_window *windows;
	size_t n_windows, cap_windows;
	struct pl_recorded_stack *stacks;
	size_t n_stacks, cap_stacks;
	struct pl_recorded_function *functions;
	size_t n_functions, cap_functions;
	struct pl_recorded_module *modules;
	size_t n_modules, cap_modules;
	/* folded lines inside valid render_window lines that did not parse */
	uint64_t bad_stack_lines;
	struct pl_recorded_sample *samples;
	size_t n_samples, cap_samples;
	uint64_t samples_dropped; /* the device's count: not timed, still in the stacks */
	bool present[PL_REC_FILE_COUNT];        /* the file was there */
	uint64_t lines[PL_REC_FILE_COUNT];      /* lines read, the header too */
	uint64_t bad_lines[PL_REC_FILE_COUNT];  /* skipped */
};

/* The file's name relative to DIR. */
const char *pl__recording_file_name(enum pl_recording_file f);
/* Read DIR. 0; -ENOENT when DIR holds none of the files; -ENOMEM or
 * another -errno from opening or reading. A missing file is no error. */
int pl__recording_read(struct pl_recording *r, const char *dir);
void pl__recording_free(struct pl_recording *r);
/* One line of telemetry file f (PL_REC_LINK_DIAG, _PROFILE, _STALL or
 * _RESOURCES) taken as pl__recording_read takes each line of the file, for
 * a recording built while the run goes on (live_metrics.h): 0 taken, 1
 * skipped (counted in bad_lines), -ENOMEM. */
int pl__recording_take_telemetry_line(struct pl_recording *r, enum pl_recording_file f,
				      const char *text, size_t len);

/* for the readers of each file (recording_*.c) */
int pl__recording_read_frames_csv(struct pl_recording *r, int dir_fd);
int pl__recording_read_telemetry(struct pl_recording *r, int dir_fd, enum pl_recording_file f);
int pl__recording_read_stage_calls(struct pl_recording *r, int dir_fd);
int pl__recording_read_render_windows(struct pl_recording *r, int dir_fd);
/* The function whose name as the report shows it is shown (' ' and ';'
 * become '_' in its folded spelling), made if new; call
 * pl__recording_functions_sorted afterwards. NULL: no memory. */
struct pl_recorded_function *pl__recording_function_add(struct pl_recording *r,
							 const char *shown);
/* Sort the functions again, for pl__recording_function. */
void pl__recording_functions_sorted(struct pl_recording *r);
/* The function named name (as in the folded stacks), or NULL. */
const struct pl_recorded_function *pl__recording_function(const struct pl_recording *r,
							  const char *name);
/* Call line for each line of the file name under dir_fd (without its
 * newline, NUL-terminated; a line holding a NUL byte is passed as is, and
 * len tells). line returns 0 for a line it took, 1 for one it skipped
 * (counted in bad_lines[f]), or a negative errno that stops the read.
 * 0, -ENOENT (no such file) or -errno. */
int pl__recording_each_line(struct pl_recording *r, int dir_fd, enum pl_recording_file f,
			    int (*line)(void *ctx, const char *text, size_t len), void *ctx);
/* Names end up in label values and protobuf strings, which must be UTF-8
 * (Prometheus refuses a whole file for one bad label): copy src into dst
 * (PL_REC_NAME bytes) with a byte that is not UTF-8 written as '?' and a
 * long name cut between characters. */
void pl__recording_copy_name(char *dst, const char *src);
/* A JSON path "PREFIX.N.rest": rest, and N in *index, when N < max; else
 * NULL. */
const char *pl__recording_item_of(const char *path, const char *prefix, size_t max,
				  size_t *index);
/* The index of name in r->names, added if new: -1 when the table is full
 * (65535 names), -2 when it cannot grow (no memory). */
int pl__recording_intern(struct pl_recording *r, const char *name);
/* The loss counts of process pid (comm: its name, kept from the first
 * line), added zeroed if new; NULL: no memory. */
struct pl_recorded_loss *pl__recording_loss(struct pl_recording *r, int64_t pid,
					    const char *comm);
/* Add a counter point. 0 or -ENOMEM. */
int pl__recording_point(struct pl_recording *r, enum pl_counter_kind kind, int64_t pid,
			const char *comm, uint64_t mono_ns, double value);
/* Element index of an array of elem bytes indexed as a line's items are
 * (*n in use, *cap allocated): grown and zeroed up to it. NULL: no memory. */
void *pl__recording_item_at(void **v, size_t *n, size_t *cap, size_t elem, size_t index);
/* Grow an array of elem bytes to hold one more. 0 or -ENOMEM. */
int pl__recording_grow(void **v, size_t *cap, size_t n, size_t elem);

#endif
