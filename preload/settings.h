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

struct pl_settings {
	bool profile;
	uint32_t interval_frames;
	char stages_path[PL_PATH_MAX];   /* "" when unset */
	char out_path[PL_PATH_MAX];      /* "" when unset */
	char syslog_path[PL_SUN_PATH_MAX]; /* "" when off */
};

/* Fill s from the environment; messages go to stderr. Never fails. */
void pl__settings_read(struct pl_settings *s);

#endif
