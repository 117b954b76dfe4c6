/* The shim's side of sampler_module.h: load the sampler module when the
 * sampler is asked for, and forward the sampler's entry points to it. */
#include "diag.h"
#include "dormant.h"
#include "own_fds.h"
#include "report_daemon.h"
#include "sampler.h"
#include "sampler_module.h"

#include <dlfcn.h>
#include <limits.h>
#include <string.h>

/* atomic: read by the swap hooks and the destructor */
static const struct pl_sampler_module *module PL_DORMANT_STATE;

static const struct pl_sampler_host host = {
	.abi = PL_SAMPLER_MODULE_ABI,
	.real = &pl__real,
	.render_tid = pl__render_tid,
	.render_tid_set = pl__render_tid_set,
	.frames_read = pl__frames_read,
	.frames_init = pl__frames_init,
	.in_swap_now = pl__in_swap_now,
	.sampler_is_on = pl__sampler_is_on,
	.sampler_set_on = pl__sampler_set_on,
	.report_daemon_init = pl__report_daemon_init,
	.report_daemon_enabled = pl__report_daemon_enabled,
	.report_daemon_send = pl__report_daemon_send,
	.report_daemon_line_max = pl__report_daemon_line_max,
	.report_daemon_fork_child = pl__report_daemon_fork_child,
	.own_fd_watch = pl__own_fd_watch,
	.own_fd = pl__own_fd,
};

/* PL_SAMPLER_MODULE_NAME in the shim's own directory: the module is
 * installed, and built, next to it. false when the path does not fit. */
static bool module_path(char *out, size_t cap)
{
	Dl_info di;
	const char *slash;
	size_t dir;

	if (!dladdr(&module, &di) /* an object of the shim's */ || !di.dli_fname ||
	    !(slash = strrchr(di.dli_fname, '/')))
		return false;
	dir = (size_t)(slash - di.dli_fname) + 1;
	if (dir + sizeof(PL_SAMPLER_MODULE_NAME) > cap)
		return false;
	memcpy(out, di.dli_fname, dir);
	memcpy(out + dir, PL_SAMPLER_MODULE_NAME, sizeof(PL_SAMPLER_MODULE_NAME));
	return true;
}

void pl__sampler_start(const struct pl_settings *s)
{
	char path[PATH_MAX];
	pl_sampler_module_load_fn load;
	const struct pl_sampler_module *m;
	void *h, *sym;

	if (!s->sample)
		return;
	if (!module_path(path, sizeof(path))) {
		pl__diag("cannot find the shim's own directory; the sampler is off");
		return;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		pl__diag("cannot load the sampler (%s); it is off", dlerror());
		return;
	}
	sym = dlsym(h, PL_SAMPLER_MODULE_ENTRY);
	memcpy(&load, &sym, sizeof(load)); /* POSIX: a function's address fits */
	m = sym ? load(&host) : NULL;
	if (!m) {
		pl__diag("%s is not this shim's sampler; the sampler is off", path);
		dlclose(h);
		return;
	}
	/* kept loaded for the process's life: its handler and thread run on */
	__atomic_store_n(&module, m, __ATOMIC_RELEASE);
	m->start(s);
}

/* run by the destructor of every process, dormant or not: kept with the
 * load-time code (dormant.h) */
PL_DORMANT_CODE void pl__sampler_finish(void)
{
	const struct pl_sampler_module *m = __atomic_load_n(&module, __ATOMIC_ACQUIRE);

	if (m)
		m->finish();
}

void pl__sampler_thread_warm(void)
{
	const struct pl_sampler_module *m = __atomic_load_n(&module, __ATOMIC_ACQUIRE);

	if (m)
		m->thread_warm();
}

void pl__sampler_thread_wake(void)
{
	const struct pl_sampler_module *m = __atomic_load_n(&module, __ATOMIC_ACQUIRE);

	if (m)
		m->thread_wake();
}
