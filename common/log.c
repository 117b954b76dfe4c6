/* See log.h. One formatting path for both sinks keeps foreground and syslog
 * output identical apart from the prefix. */
#include "log.h"
#include "clock.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

static const char *log_ident = "perflink";
static bool log_stderr = true;
static int log_verbosity;

void pl__log_init(const char *ident, bool to_stderr, int verbosity)
{
	log_ident = ident;
	log_stderr = to_stderr;
	log_verbosity = verbosity;
	if (!to_stderr)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

bool pl__log_to_stderr(void)
{
	return log_stderr;
}

static void vlog(enum pl_log_level level, int code, const char *fmt, va_list ap)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	static const char *const tag[] = { "error: ", "warning: ", "", "debug: " };
	char msg[1024];
	int n;

	if (level == PL_LOG_DEBUG && log_verbosity < 1)
		return;
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n >= 0 && code != 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s", strerror(code));
	if (log_stderr)
		fprintf(stderr, "%s: %s%s\n", log_ident, tag[level], msg);
	else
		syslog(prio[level], "%s%s", tag[level], msg);
}

static void log_text(enum pl_log_level level, const char *fmt, ...) PL_PRINTF(2, 3);
static void log_text(enum pl_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, 0, fmt, ap);
	va_end(ap);
}

#define LOG_BODY(level, code)            \
	do {                             \
		va_list ap;              \
		va_start(ap, fmt);       \
		vlog(level, code, fmt, ap); \
		va_end(ap);              \
	} while (0)

void pl__log_warn(const char *fmt, ...)
{
	int code = errno;
	LOG_BODY(PL_LOG_WARN, code);
}

void pl__log_warnc(int code, const char *fmt, ...)
{
	LOG_BODY(PL_LOG_WARN, code < 0 ? -code : code);
}

void pl__log_warnx(const char *fmt, ...)
{
	LOG_BODY(PL_LOG_WARN, 0);
}

void pl__log_info(const char *fmt, ...)
{
	LOG_BODY(PL_LOG_INFO, 0);
}

void pl__log_debug(const char *fmt, ...)
{
	LOG_BODY(PL_LOG_DEBUG, 0);
}

void pl__fatal(const char *fmt, ...)
{
	int code = errno;
	LOG_BODY(PL_LOG_ERR, code);
	exit(1);
}

void pl__fatalx(const char *fmt, ...)
{
	LOG_BODY(PL_LOG_ERR, 0);
	exit(1);
}

static void vlog_limited(struct pl__ratelimit *rl, enum pl_log_level level, const char *fmt,
			 va_list ap)
{
	uint64_t now = pl__mono_ns();
	char msg[900];

	if (rl->last_ns != 0 && now - rl->last_ns < rl->interval_ns) {
		rl->suppressed++;
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (rl->suppressed)
		log_text(level, "%s (%llu similar suppressed)", msg,
			 (unsigned long long)rl->suppressed);
	else
		log_text(level, "%s", msg);
	rl->last_ns = now;
	rl->suppressed = 0;
}

void pl__log_warnx_limited(struct pl__ratelimit *rl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_limited(rl, PL_LOG_WARN, fmt, ap);
	va_end(ap);
}

void pl__log_info_limited(struct pl__ratelimit *rl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_limited(rl, PL_LOG_INFO, fmt, ap);
	va_end(ap);
}
