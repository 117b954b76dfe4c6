/* The stage profiler's reports and the render sampler's windows to
 * perflinkd (report_daemon.c). Thread-safe; init and the fork handler run
 * alone. */
#ifndef PL_PRELOAD_REPORT_DAEMON_H
#define PL_PRELOAD_REPORT_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "settings.h"

void pl__report_daemon_init(const struct pl_settings *s);
bool pl__report_daemon_enabled(void);
/* One JSON line; dropped (and counted) when the ring is full or the line
 * longer than it takes, skipped when no daemon runs. false only for a drop
 * (no daemon is no loss: nobody would have had it). */
bool pl__report_daemon_send(const char *json_line);
/* The longest line that is sure to fit once the ring has been drained. */
size_t pl__report_daemon_line_max(void);
/* Reports lost because the ring to the daemon was full. */
uint64_t pl__report_daemon_dropped(void);
void pl__report_daemon_fork_child(void);

#endif
