/* Reports: every interval of completed frames, a cumulative stage table to
 * syslog (perflink-profile records) and, when asked, to a JSON-lines file.
 *
 * The hook that completes a frame only counts it and, at an interval
 * boundary, bumps a request counter and wakes the reporter thread with a
 * futex (no fd, so a target that closes every descriptor cannot break it,
 * and a write(2) never lands in a file the target reopened under a reused
 * number). The merge, the symbol lookup of call sites (dladdr, which takes
 * the loader's lock) and the output (a file write can stall for seconds in
 * writeback) all happen on that thread, where no lock the target holds can
 * be waited for by the target and no stall delays a frame. */
#ifndef PL_PRELOAD_REPORTER_H
#define PL_PRELOAD_REPORTER_H

#include "settings.h"

#include <stdbool.h>

/* Hot path: a frame completed. Async-signal-safe. */
void pl__report_frame_completed(void);

/* Constructor: remember the settings and start the reporter thread.
 * 0 or -errno (then profiling must stay off). */
int pl__reporter_start(const struct pl_settings *s);

/* pthread_atfork child handler: a fresh start (counters, report numbers,
 * a new reporter thread, since threads do not survive fork). */
void pl__reporter_fork_child(void);

/* Destructor: wait (at most a few seconds) for a report already due. */
void pl__reporter_drain(void);

/* report_out.c: merge the statistics and write the next report. Reporter
 * thread only. */
void pl__report_write(void);
void pl__report_out_init(const struct pl_settings *s, uint32_t interval_frames);
void pl__report_out_fork_child(void);
uint32_t pl__report_frames(void);
/* The lines of the JSON output (PERFLINK_PROFILE_OUT and perflinkd), for
 * events_out.c too: whether anyone takes them; a line begun with the
 * process's identity (type, version, pid, comm, start_mono_ns); the
 * finished line sent (and j freed). Reporter thread only. */
struct pl_json;
bool pl__report_json_wanted(void);
void pl__report_json_begin(struct pl_json *j, const char *type);
void pl__report_json_send(struct pl_json *j);
/* events_out.c: send the events recorded so far. Reporter thread, or the
 * destructor (a lock keeps the two apart). */
void pl__events_send(void);
/* In a fork child: nothing sent yet, the lock free. */
void pl__events_out_fork_child(void);

#endif
