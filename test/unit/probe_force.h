/* Forcing run-time probes absent in a test, through the same seam a user
 * has (PERFLINK_PROBE_FAIL, common/probe.h), and forgetting what the probes
 * found before so that the next use asks again. */
#ifndef PL_TEST_PROBE_FORCE_H
#define PL_TEST_PROBE_FORCE_H

#include "probe.h"

#include <stdlib.h>

/* names: "memfd,psi,..."; NULL: nothing forced. */
static inline void probe_force(const char *names)
{
	if (names)
		setenv("PERFLINK_PROBE_FAIL", names, 1);
	else
		unsetenv("PERFLINK_PROBE_FAIL");
	pl__probe_reset();
}

#endif
