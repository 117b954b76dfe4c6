/* See probe.h. The registry is a few atomics: a probe site may run in any of
 * the daemon's threads or in a client library inside someone else's process. */
#include "probe.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_MSG_LEN 256
#define MASK_PARSED (1u << 31)

/* Per probe: UNKNOWN, PRESENT, CLAIMED (one thread is writing the message),
 * ABSENT. The message is published by the release store of ABSENT. */
enum { ST_UNKNOWN, ST_PRESENT, ST_CLAIMED, ST_ABSENT };

static const char *const probe_names[PL_PROBE_COUNT] = {
	[PL_PROBE_MEMFD] = "memfd",
	[PL_PROBE_SMAPS_ROLLUP] = "smaps_rollup",
	[PL_PROBE_PSI] = "psi",
	[PL_PROBE_DELAYACCT] = "delayacct",
	[PL_PROBE_FFS_AIO] = "ffs_aio",
	[PL_PROBE_EVENTFD_FLAGS] = "eventfd_flags",
};

static atomic_uint forced_mask;
static atomic_int probe_st[PL_PROBE_COUNT];
static char probe_msg[PL_PROBE_COUNT][PROBE_MSG_LEN];

const char *pl__probe_name(enum pl_probe p)
{
	return (unsigned)p < PL_PROBE_COUNT ? probe_names[p] : "?";
}

static unsigned parse_env(void)
{
	const char *s = getenv("PERFLINK_PROBE_FAIL");
	unsigned mask = 0;

	while (s && *s) {
		size_t len = strcspn(s, ",");
		const char *b = s, *e = s + len;
		unsigned i;

		while (b < e && (*b == ' ' || *b == '\t'))
			b++;
		while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		for (i = 0; i < PL_PROBE_COUNT; i++)
			if ((size_t)(e - b) == strlen(probe_names[i]) &&
			    memcmp(b, probe_names[i], (size_t)(e - b)) == 0)
				break;
		if (i < PL_PROBE_COUNT)
			mask |= 1u << i;
		else if (e > b)
			pl__log_warnx("PERFLINK_PROBE_FAIL: unknown probe '%.*s' ignored (known: "
				      "memfd, smaps_rollup, psi, delayacct, ffs_aio, eventfd_flags)",
				      (int)(e - b > 64 ? 64 : e - b), b);
		s += len;
		if (*s == ',')
			s++;
	}
	return mask | MASK_PARSED;
}

bool pl__probe_forced(enum pl_probe p)
{
	unsigned mask = atomic_load_explicit(&forced_mask, memory_order_acquire);

	if ((unsigned)p >= PL_PROBE_COUNT)
		return false;
	if (!(mask & MASK_PARSED)) {
		unsigned expect = 0, parsed = parse_env();

		/* Two first callers both parse; one stores, the other reads
		 * what was stored (the same mask, but only one warning matters
		 * little against a lock here). */
		if (atomic_compare_exchange_strong(&forced_mask, &expect, parsed))
			mask = parsed;
		else
			mask = expect;
	}
	return (mask >> p) & 1u;
}

bool pl__probe_absent(enum pl_probe p, bool warn, const char *fmt, ...)
{
	static const char forced[] = " (forced by PERFLINK_PROBE_FAIL)";
	int expect = ST_UNKNOWN;
	char *msg = probe_msg[p];
	size_t len;
	va_list ap;

	if ((unsigned)p >= PL_PROBE_COUNT)
		return false;
	if (!atomic_compare_exchange_strong(&probe_st[p], &expect, ST_CLAIMED)) {
		expect = ST_PRESENT; /* present once, absent now (a module unloaded) */
		if (!atomic_compare_exchange_strong(&probe_st[p], &expect, ST_CLAIMED))
			return false;
	}
	/* name, message, and the note that it was forced, which must survive
	 * a long message: the message is cut to leave room for it */
	len = strlen(probe_names[p]);
	memcpy(msg, probe_names[p], len);
	memcpy(msg + len, ": ", 3);
	len += 2;
	va_start(ap, fmt);
	vsnprintf(msg + len, PROBE_MSG_LEN - len - sizeof(forced), fmt, ap);
	va_end(ap);
	if (pl__probe_forced(p))
		strcat(msg, forced);
	atomic_store_explicit(&probe_st[p], ST_ABSENT, memory_order_release);
	if (warn)
		pl__log_warnx("%s", probe_msg[p]);
	else
		pl__log_info("%s", probe_msg[p]);
	return true;
}

void pl__probe_present(enum pl_probe p)
{
	int expect = ST_UNKNOWN;

	if ((unsigned)p < PL_PROBE_COUNT)
		atomic_compare_exchange_strong(&probe_st[p], &expect, ST_PRESENT);
}

enum pl_probe_state pl__probe_state(enum pl_probe p)
{
	if ((unsigned)p >= PL_PROBE_COUNT)
		return PL_PROBE_UNKNOWN;
	switch (atomic_load_explicit(&probe_st[p], memory_order_acquire)) {
	case ST_PRESENT: return PL_PROBE_PRESENT;
	case ST_ABSENT: return PL_PROBE_ABSENT;
	default: return PL_PROBE_UNKNOWN;
	}
}

const char *pl__probe_message(enum pl_probe p)
{
	if (pl__probe_state(p) != PL_PROBE_ABSENT)
		return "";
	return probe_msg[p];
}

void pl__probe_reset(void)
{
	unsigned i;

	atomic_store(&forced_mask, 0);
	for (i = 0; i < PL_PROBE_COUNT; i++) {
		atomic_store(&probe_st[i], ST_UNKNOWN);
		probe_msg[i][0] = '\0';
	}
}
