/* Environment parsing for the shim: each variable once, at load time. */
#include "settings.h"
#include "diag.h"

#include <stdlib.h>
#include <string.h>

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

void pl__settings_read(struct pl_settings *s)
{
	const char *v;

	memset(s, 0, sizeof(*s));
	s->interval_frames = PL_INTERVAL_DEFAULT;
	strcpy(s->syslog_path, "/dev/log");

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
			pl__diag("PERFLINK_PROFILE_INTERVAL=%u is below the minimum; raised to %u", n,
				 PL_INTERVAL_MIN);
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
		}
	}
}
