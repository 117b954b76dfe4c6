/* A dormant shim costs a process start no page of its own (dormant.h):
 * dormant_pages calls the hooks a short program meets and reports how many
 * pages of the shim's .bss are present, which must be none whether the
 * environment names no tool or names one and turns it off. With the
 * profiler on, the same report shows pages there (its tables live in
 * .bss): the check sees a touch when there is one.
 *
 * Environment (set by meson): PL_PRELOAD_LIB, PL_DORMANT_PAGES. */
#include "harness.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The pages the target reported present, or -1 (its output quoted) when it
 * did not report. */
static long bss_pages(const char *target, const char *shim, const char *const env[],
		   const char *what)
{
	char *argv[] = { (char *)target, (char *)shim, NULL };
	struct h_run r;
	long kb = -1;
	const char *p;

	if (h_run(&r, argv, env) == 0 && r.status == 0 &&
	    (p = strstr(r.out, "bss_pages_present ")) != NULL)
		kb = strtol(p + 18, NULL, 10);
	else
		printf("# %s: status %d, out '%s', err '%s'\n", what, r.status,
		       h_oneline(r.out), h_oneline(r.err));
	h_run_free(&r);
	return kb;
}

int main(void)
{
	const char *shim = getenv("PL_PRELOAD_LIB"), *target = getenv("PL_DORMANT_PAGES");
	char preload[600];
	const char *nothing[] = { preload, NULL };
	const char *off[] = { preload, "PERFLINK_PROFILE=0", "PERFLINK_SAMPLE=0", NULL };
	const char *on[] = { preload, "PERFLINK_PROFILE=1", "PERFLINK_PROFILE_SYSLOG=off",
			     "PERFLINK_SOCKET=off", "PERFLINK_PROFILE_OUT=/dev/null", NULL };
	long kb;

	if (!shim || !target) {
		printf("Bail out! PL_PRELOAD_LIB and PL_DORMANT_PAGES are needed\n");
		return 1;
	}
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", shim);
	kb = bss_pages(target, shim, nothing, "no tool named");
	TAP_EQ_U64((uint64_t)kb, 0, "no tool named: the hooks ran and no page of the shim's .bss "
				    "was touched");
	kb = bss_pages(target, shim, off, "tools named off");
	TAP_EQ_U64((uint64_t)kb, 0, "PERFLINK_PROFILE=0 PERFLINK_SAMPLE=0: no page of .bss either");
	kb = bss_pages(target, shim, on, "profiler on");
	TAP_OK(kb > 0, "the profiler on: its tables in .bss show (%ld pages), so a touch is seen",
	       kb);
	return tap_done();
}
