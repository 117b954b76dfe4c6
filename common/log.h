/* Logging in the OpenBSD manner: stderr in the foreground, syslog otherwise.
 *
 * pl__log_warn appends strerror(errno); pl__log_warnc appends strerror(code)
 * for the negative-errno convention used inside perflink; the *x forms add
 * nothing. pl__fatal and pl__fatalx log and exit(1).
 *
 * Not async-signal-safe (uses vsnprintf and syslog): never call from a signal
 * handler or an interposed hook. */
#ifndef PL_COMMON_LOG_H
#define PL_COMMON_LOG_H

#include <stdbool.h>
#include <stdint.h>

#define PL_PRINTF(a, b) __attribute__((format(printf, a, b)))

enum pl_log_level { PL_LOG_ERR, PL_LOG_WARN, PL_LOG_INFO, PL_LOG_DEBUG };

/* ident: the program name shown in each line. to_stderr: foreground mode.
 * verbosity: 0 = warnings and info, 1 = also debug. */
void pl__log_init(const char *ident, bool to_stderr, int verbosity);
bool pl__log_to_stderr(void);

void pl__log_warn(const char *fmt, ...) PL_PRINTF(1, 2);
void pl__log_warnc(int code, const char *fmt, ...) PL_PRINTF(2, 3);
void pl__log_warnx(const char *fmt, ...) PL_PRINTF(1, 2);
void pl__log_info(const char *fmt, ...) PL_PRINTF(1, 2);
void pl__log_debug(const char *fmt, ...) PL_PRINTF(1, 2);
_Noreturn void pl__fatal(const char *fmt, ...) PL_PRINTF(1, 2);
_Noreturn void pl__fatalx(const char *fmt, ...) PL_PRINTF(1, 2);

/* Rate limit for anything a peer or the kernel can trigger repeatedly: at most
 * one message per interval; the suppressed count is reported with the next. */
struct pl__ratelimit {
	uint64_t interval_ns;
	uint64_t last_ns;
	uint64_t suppressed;
};
#define PL_RATELIMIT_INIT(ms) { (uint64_t)(ms) * 1000000u, 0, 0 }
void pl__log_warnx_limited(struct pl__ratelimit *rl, const char *fmt, ...) PL_PRINTF(2, 3);
/* The same at info level: for what a peer makes happen as often as it
 * likes (a TCP host connecting in a loop). */
void pl__log_info_limited(struct pl__ratelimit *rl, const char *fmt, ...) PL_PRINTF(2, 3);

#endif
