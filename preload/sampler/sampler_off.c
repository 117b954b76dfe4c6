/* The sampler in a build without libunwind: the swap hooks still forward,
 * and PERFLINK_SAMPLE=1 says why nothing happens. */
#include "sampler.h"
#include "diag.h"
#include "dormant.h"

void pl__sampler_start(const struct pl_settings *s)
{
	if (s->sample)
		pl__diag("PERFLINK_SAMPLE=1 but this build has no libunwind; the sampler is off");
}

PL_DORMANT_CODE void pl__sampler_finish(void)
{
}

void pl__sampler_thread_warm(void)
{
}

void pl__sampler_thread_wake(void)
{
}
