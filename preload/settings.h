/* The shim's settings, read once from the environment by the constructor
 * (secure_getenv: a set-uid target ignores them). Across exec the
 * environment is all that carries them; nothing else survives.
 *
 *   PERFLINK_PROFILE=1               stage profiler on (anything else: off)
 *   PERFLINK_PROFILE_INTERVAL=N      report every N completed frames
 *                                    (default 250, at least 25)
 *   PERFLINK_STAGES=PATH             vendor stage file (docs/stages.md)
 *   PERFLINK_PROFILE_OUT=PATH        also append JSON lines to PATH
 *   PERFLINK_PROFILE_SYSLOG=PATH|off syslog socket (default /dev/log)
 *   PERFLINK_PROFILE_EVENTS=1        also every timed call as an event
 *                                    (profiler/events.h), to perflinkd and
 *                                    PERFLINK_PROFILE_OUT
 *   PERFLINK_PROFILE_EVENTS_KB=N     the events' ring (default 256 KiB,
 *                                    16..65536)
 *   PERFLINK_SOCKET=PATH|off         perflinkd's producer socket (default
 *                                    /run/perflink/producers); reports go
 *                                    there too when perflinkd runs
 *
 * The render sampler (docs/sampler.md), independent of the profiler:
 *   PERFLINK_SAMPLE=1                sampler on (anything else: off)
 *   PERFLINK_SAMPLE_HZ=N             samples a second of render-thread CPU
 *                                    time (default 25, 1..1000)
 *   PERFLINK_SAMPLE_WINDOW=S         seconds a report covers (default 60)
 *   PERFLINK_SAMPLE_OUT=PATH         the report file (required); folded
 *                                    stacks go to PATH.folded
 *   PERFLINK_SAMPLE_MAX_BYTES=N      cap of each file before it rotates to
 *                                    PATH.1 (default 256 KiB)
 *   PERFLINK_SAMPLE_THREAD=NAME      the render thread by name (default:
 *                                    the thread that swaps buffers)
 *   PERFLINK_SAMPLE_SIGNAL=SIG       PROF, VTALRM, USR1, USR2 or a number
 *                                    (default SIGPROF)
 *
 * A bad value falls back to its default with one message on stderr. */
#ifndef PL_PRELOAD_SETTINGS_H
#define PL_PRELOAD_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

#define PL_INTERVAL_DEFAULT 250u
#define PL_INTERVAL_MIN 25u
#define PL_PATH_MAX 256
#define PL_SUN_PATH_MAX 108

#define PL_EVENTS_KB_DEFAULT 256u
#define PL_EVENTS_KB_MIN 16u
#define PL_EVENTS_KB_MAX 65536u

#define PL_SAMPLE_HZ_DEFAULT 25u
#define PL_SAMPLE_HZ_MAX 1000u
#define PL_SAMPLE_WINDOW_DEFAULT 60u
#define PL_SAMPLE_WINDOW_MAX 86400u
#define PL_SAMPLE_MAX_BYTES_DEFAULT (256u * 1024u)
#define PL_SAMPLE_MAX_BYTES_MIN 1024u
#define PL_SAMPLE_THREAD_MAX 16 /* a thread name (comm) and its NUL */

struct pl_settings {
	bool profile;
	uint32_t interval_frames;
	char stages_path[PL_PATH_MAX];   /* "" when unset */
	char out_path[PL_PATH_MAX];      /* "" when unset */
	char syslog_path[PL_SUN_PATH_MAX]; /* "" when off */
	char daemon_socket[PL_SUN_PATH_MAX]; /* "" when off */
	bool events;
	uint32_t events_kb;

	bool sample;
	uint32_t sample_hz;
	uint32_t sample_window_s;
	uint32_t sample_max_bytes;
	int sample_signal;
	/* PERFLINK_SAMPLE_CLOCK: auto (perf's task clock where allowed, else
	 * the CPU-time timer) or timer (the timer always) */
	bool sample_task_clock;
	char sample_out[PL_PATH_MAX];                /* "" when unset */
	char sample_thread[PL_SAMPLE_THREAD_MAX];    /* "" when unset */
};

/* Whether the environment names either tool at all (PERFLINK_PROFILE or
 * PERFLINK_SAMPLE, whatever their values): when it does not, the shim is
 * dormant and reads nothing more. A look at environ only, so that a
 * dormant start touches no page of libc's or the shim's it would not
 * touch anyway (dormant.h); pl__settings_read decides the rest. */
bool pl__settings_tool_named(void);

/* Fill s from the environment; messages go to stderr. Never fails. */
void pl__settings_read(struct pl_settings *s);

#endif
