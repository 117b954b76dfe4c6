/* perflinkd's use of the USB link: start it from the link-* settings, send
 * the modules' JSON lines over it as telemetry (lower priority than frames:
 * the link bounds and counts what waits), and once a second log and send the
 * link's own diagnostics (seed 000's last_send and totals). */
#ifndef PL_DAEMON_DAEMON_LINK_H
#define PL_DAEMON_DAEMON_LINK_H

#include "event_loop.h"
#include "json_writer.h"
#include "link_options.h"

struct pl_daemon_link;

/* 0, or -errno (logged); -ENOTSUP where the link is not built (no libaio). */
int pl__daemon_link_start(struct pl_daemon_link **out, struct pl_loop *loop,
			  const struct pl_link_settings *s);
/* Hand one JSON line (ending in '\n') to the host; dropped and counted
 * while the host is not there or the queue is full. */
void pl__daemon_link_telemetry(struct pl_daemon_link *dl, const char *json_line);
/* The "link" object of `perflink status`. */
void pl__daemon_link_status(const struct pl_daemon_link *dl, struct pl_json *j);
void pl__daemon_link_stop(struct pl_daemon_link *dl);

#endif
