/* Environment parsing for the shim: each variable once, at load time. */
#include "settings.h"
#include "diag.h"
#include "dormant.h"
#include "pl_config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool copy_path(char *dst, size_t cap, const char *var, const char *value)
{
	size_t n = strlen(value);

	if (n == 0 || n >= cap) {
		pl__diag("%s is %s (at most %u bytes); ignored", var,
			 n ? "too long" : "empty", (unsigned)(cap - 1));
		dst[0] = '\0';
		return false;
	}
	memcpy(dst, value, n + 1);
	return true;
}

/* Strict decimal: digits only, at most nine of them (so no overflow). */
static bool parse_count(const char *s, uint32_t *out)
{
	uint32_t v = 0;
	int digits = 0;

	for (; *s; s++) {
		if (*s < '0' || *s > '9' || ++digits > 9)
			return false;
		v = v * 10 + (uint32_t)(*s - '0');
	}
	if (digits == 0)
		return false;
	*out = v;
	return true;
}

/* A count in [min, max] from variable var, else def with one message. */
static uint32_t count_var(const char *var, uint32_t def, uint32_t min, uint32_t max)
{
	const char *v = secure_getenv(var);
	uint32_t n;

	if (!v)
		return def;
	if (!parse_count(v, &n) || n < min || n > max) {
		pl__diag("%s='%s' is not a number from %u to %u; using %u", var, v, min, max, def);
		return def;
	}
	return n;
}

/* Signals a sampler may use: the usual profiling ones by name, or any
 * number that is neither uncatchable nor one the program's own faults
 * raise (a handler there would hide crashes). */
static int parse_signal(const char *v)
{
	static const struct {
		const char *name;
		int sig;
	} names[] = { { "PROF", SIGPROF }, { "VTALRM", SIGVTALRM },
		      { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 } };
	uint32_t n;
	size_t i;

	if (strncmp(v, "SIG", 3) == 0)
		v += 3;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(v, names[i].name) == 0)
			return names[i].sig;
	}
	if (!parse_count(v, &n) || n == 0 || n > (uint32_t)SIGRTMAX)
		return -1;
	switch ((int)n) {
	case SIGKILL: case SIGSTOP: case SIGSEGV: case SIGBUS: case SIGFPE:
	case SIGILL: case SIGABRT: case SIGTRAP: case SIGCHLD: case SIGCONT:
		return -1;
	default:
		return (int)n;
	}
}

static void sample_settings(struct pl_settings *s)
{
	const char *v;

	s->sample_hz = PL_SAMPLE_HZ_DEFAULT;
	s->sample_window_s = PL_SAMPLE_WINDOW_DEFAULT;
	s->sample_max_bytes = PL_SAMPLE_MAX_BYTES_DEFAULT;
	s->sample_signal = SIGPROF;
	s->sample_task_clock = true;

	v = secure_getenv("PERFLINK_SAMPLE");
	if (v && strcmp(v, "1") == 0)
		s->sample = true;
	else if (v && *v && strcmp(v, "0") != 0)
		pl__diag("PERFLINK_SAMPLE='%s' is neither 1 nor 0; the sampler stays off", v);
	if (!s->sample)
		return;

	s->sample_hz = count_var("PERFLINK_SAMPLE_HZ", PL_SAMPLE_HZ_DEFAULT, 1, PL_SAMPLE_HZ_MAX);
	s->sample_window_s = count_var("PERFLINK_SAMPLE_WINDOW", PL_SAMPLE_WINDOW_DEFAULT, 1,
				       PL_SAMPLE_WINDOW_MAX);
	s->sample_max_bytes = count_var("PERFLINK_SAMPLE_MAX_BYTES", PL_SAMPLE_MAX_BYTES_DEFAULT,
					PL_SAMPLE_MAX_BYTES_MIN, 999999999u);
	v = secure_getenv("PERFLINK_SAMPLE_SIGNAL");
	if (v) {
		int sig = parse_signal(v);

		if (sig < 0)
			pl__diag("PERFLINK_SAMPLE_SIGNAL='%s' is not a usable signal; using SIGPROF", v);
		else
			s->sample_signal = sig;
	}
	v = secure_getenv("PERFLINK_SAMPLE_CLOCK");
	if (v && strcmp(v, "timer") == 0)
		s->sample_task_clock = false;
	else if (v && strcmp(v, "auto") != 0)
		pl__diag("PERFLINK_SAMPLE_CLOCK='%s' is neither auto nor timer; using auto", v);
	v = secure_getenv("PERFLINK_SAMPLE_THREAD");
	if (v)
		copy_path(s->sample_thread, sizeof(s->sample_thread), "PERFLINK_SAMPLE_THREAD", v);

	/* A profile nobody can read is only overhead: stay off. */
	v = secure_getenv("PERFLINK_SAMPLE_OUT");
	if (!v || !copy_path(s->sample_out, sizeof(s->sample_out), "PERFLINK_SAMPLE_OUT", v)) {
		if (!v)
			pl__diag("PERFLINK_SAMPLE=1 without PERFLINK_SAMPLE_OUT; the sampler stays off");
		s->sample = false;
	}
}

/* Per-call events, with the profiler on. */
static void event_settings(struct pl_settings *s)
{
	const char *v = secure_getenv("PERFLINK_PROFILE_EVENTS");

	if (v && strcmp(v, "1") == 0)
		s->events = true;
	else if (v && *v && strcmp(v, "0") != 0)
		pl__diag("PERFLINK_PROFILE_EVENTS='%.40s' is neither 1 nor 0; no events", v);
	s->events_kb = count_var("PERFLINK_PROFILE_EVENTS_KB", PL_EVENTS_KB_DEFAULT,
				 PL_EVENTS_KB_MIN, PL_EVENTS_KB_MAX);
}

/* Whether s starts with prefix. By hand, and with the names kept beside
 * the code (dormant.h): neither a page of libc's string functions nor
 * one of the shim's .rodata is faulted in by a dormant start. */
PL_DORMANT_CODE static bool starts_with(const char *s, const char *prefix)
{
	while (*prefix && *s == *prefix)
		s++, prefix++;
	return *prefix == '\0';
}

PL_DORMANT_CODE bool pl__settings_tool_named(void)
{
	static const char profile[] PL_DORMANT_CONST = "PERFLINK_PROFILE=";
	static const char sample[] PL_DORMANT_CONST = "PERFLINK_SAMPLE=";

	for (char **e = environ; e && *e; e++)
		if (starts_with(*e, profile) || starts_with(*e, sample))
			return true;
	return false;
}

void pl__settings_read(struct pl_settings *s)
{
	const char *v;

	memset(s, 0, sizeof(*s));
	s->interval_frames = PL_INTERVAL_DEFAULT;
	strcpy(s->syslog_path, "/dev/log");
	strcpy(s->daemon_socket, PL_RUNSTATEDIR "/perflink/producers");
	sample_settings(s);

	/* Both the profiler and the sampler hand their reports to perflinkd. */
	v = secure_getenv("PERFLINK_SOCKET");
	if (v) {
		if (*v == '\0' || strcmp(v, "off") == 0 || strcmp(v, "0") == 0)
			s->daemon_socket[0] = '\0';
		else if (!copy_path(s->daemon_socket, sizeof(s->daemon_socket), "PERFLINK_SOCKET", v))
			pl__diag("reports do not go to perflinkd");
	}

	v = secure_getenv("PERFLINK_PROFILE");
	if (v && strcmp(v, "1") == 0)
		s->profile = true;
	else if (v && *v && strcmp(v, "0") != 0)
		pl__diag("PERFLINK_PROFILE='%s' is neither 1 nor 0; profiling stays off", v);
	if (!s->profile)
		return;

	v = secure_getenv("PERFLINK_PROFILE_INTERVAL");
	if (v) {
		uint32_t n;

		if (!parse_count(v, &n) || n == 0) {
			pl__diag("PERFLINK_PROFILE_INTERVAL='%s' is not a frame count; using %u", v,
				 PL_INTERVAL_DEFAULT);
		} else if (n < PL_INTERVAL_MIN) {
			pl__diag("PERFLINK_PROFILE_INTERVAL=%u is below the minimum; "
				 "raised to %u", n, PL_INTERVAL_MIN);
			s->interval_frames = PL_INTERVAL_MIN;
		} else {
			s->interval_frames = n;
		}
	}

	/* Without the vendor stages the user asked for, a table would mislead:
	 * stay off instead. */
	v = secure_getenv("PERFLINK_STAGES");
	if (v && !copy_path(s->stages_path, sizeof(s->stages_path), "PERFLINK_STAGES", v)) {
		pl__diag("profiling stays off");
		s->profile = false;
		return;
	}
	v = secure_getenv("PERFLINK_PROFILE_OUT");
	if (v)
		copy_path(s->out_path, sizeof(s->out_path), "PERFLINK_PROFILE_OUT", v);
	event_settings(s);

	v = secure_getenv("PERFLINK_PROFILE_SYSLOG");
	if (v) {
		if (*v == '\0' || strcmp(v, "off") == 0 || strcmp(v, "0") == 0)
			s->syslog_path[0] = '\0';
		else if (v[0] != '/' || !copy_path(s->syslog_path, sizeof(s->syslog_path),
						   "PERFLINK_PROFILE_SYSLOG", v)) {
			if (v[0] != '/')
				pl__diag("PERFLINK_PROFILE_SYSLOG='%s' is not an absolute path; "
					 "using /dev/log", v);
			strcpy(s->syslog_path, "/dev/log");
	strcpy(s->daemon_socket, PL_RUNSTATEDIR "/perflink/producers");
		}
	}
}
