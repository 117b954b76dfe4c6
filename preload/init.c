/* Load, fork and exit of the shim.
 *
 * The constructor does the least it can. When the environment names
 * neither tool it returns at once: a dormant shim reads no setting and
 * resolves nothing, and its hooks look up the function they forward to on
 * their first call (real.c), as every hook called before the constructor
 * always has, and as a lazily bound PLT entry does. Otherwise it resolves
 * the real functions (so that no hook of a working tool enters dlsym
 * later), reads the environment, and only when profiling was asked for,
 * builds the stage table and starts the reporter. Hooks that run before
 * it (another library's constructor calling open or ioctl) find profiling
 * off and simply forward. */
#include "diag.h"
#include "events.h"
#include "profile.h"
#include "real.h"
#include "reporter.h"
#include "sampler.h"
#include "settings.h"
#include "stages.h"
#include "stats.h"

#include <pthread.h>

static void fork_child(void)
{
	if (!__atomic_load_n(&pl__profile_on, __ATOMIC_RELAXED))
		return;
	pl__stats_reset_after_fork();
	pl__reporter_fork_child();
}

__attribute__((constructor)) static void pl_preload_init(void)
{
	struct pl_settings s;
	char err[512];
	int r;

	if (!pl__settings_tool_named())
		return;
	pl__real_resolve_all();
	pl__settings_read(&s);
	pl__sampler_start(&s);
	if (!s.profile)
		return;
	r = pl__stages_build(s.stages_path, err, sizeof(err));
	if (r < 0) {
		/* a broken stage file must not break the target: stay dormant */
		pl__diag("%s; profiling stays off", err);
		return;
	}
	r = pl__stats_init();
	if (r < 0) {
		pl__diag("no memory for the per-thread statistics (error %d); profiling stays off",
			 -r);
		return;
	}
	r = pthread_atfork(NULL, NULL, fork_child);
	if (r != 0) {
		pl__diag("pthread_atfork failed (error %d); profiling stays off", r);
		return;
	}
	if (s.events) {
		r = pl__events_init(s.events_kb);
		if (r < 0)
			pl__diag("no memory for the events' ring (error %d); no events", -r);
	}
	if (pl__reporter_start(&s) < 0)
		return;
	__atomic_store_n(&pl__profile_on, 1, __ATOMIC_RELEASE);
}

/* A report that is due when the target exits is still written. */
__attribute__((destructor)) static void pl_preload_fini(void)
{
	pl__sampler_finish();
	if (__atomic_load_n(&pl__profile_on, __ATOMIC_RELAXED)) {
		pl__reporter_drain();
		pl__events_send(); /* what the last 100 ms left in the ring */
	}
}
