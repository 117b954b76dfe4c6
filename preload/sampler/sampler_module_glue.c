/* The module's side of sampler_module.h: its entry point, and the shim's
 * functions the sampler's files call, forwarded to the shim through the
 * host table. */
#include "report_daemon.h"
#include "sampler.h"
#include "own_fds.h"
#include "sampler_module.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>

static const struct pl_sampler_host *host;

pid_t pl__render_tid(void)
{
	return host->render_tid();
}

void pl__render_tid_set(pid_t tid)
{
	host->render_tid_set(tid);
}

void pl__frames_read(unsigned long *frames, unsigned long *render_us)
{
	host->frames_read(frames, render_us);
}

void pl__frames_init(const char *thread_name)
{
	host->frames_init(thread_name);
}

int pl__in_swap_now(void)
{
	return host->in_swap_now();
}

bool pl__sampler_is_on(void)
{
	return host->sampler_is_on();
}

void pl__sampler_set_on(bool on)
{
	host->sampler_set_on(on);
}

void pl__report_daemon_init(const struct pl_settings *s)
{
	host->report_daemon_init(s);
}

bool pl__report_daemon_enabled(void)
{
	return host->report_daemon_enabled();
}

bool pl__report_daemon_send(const char *json_line)
{
	return host->report_daemon_send(json_line);
}

size_t pl__report_daemon_line_max(void)
{
	return host->report_daemon_line_max();
}

void pl__report_daemon_fork_child(void)
{
	host->report_daemon_fork_child();
}

void pl__own_fd_watch(int fd, bool mine)
{
	host->own_fd_watch(fd, mine);
}

bool pl__own_fd(int fd)
{
	return host->own_fd(fd);
}

/* The real open and close, read from the shim's table at each call: the
 * shim resolves its entries lazily and stores them there. */
static int real_open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	return host->real->open(path, flags, mode);
}

static int real_close(int fd)
{
	return host->real->close(fd);
}

/* Only what the sampler's files use. */
struct pl_real pl__real = { .open = real_open, .close = real_close };

static const struct pl_sampler_module module = {
	.abi = PL_SAMPLER_MODULE_ABI,
	.start = pl__sampler_start,
	.finish = pl__sampler_finish,
	.thread_warm = pl__sampler_thread_warm,
	.thread_wake = pl__sampler_thread_wake,
};

__attribute__((visibility("default"))) const struct pl_sampler_module *
pl_sampler_module_load(const struct pl_sampler_host *h);

const struct pl_sampler_module *pl_sampler_module_load(const struct pl_sampler_host *h)
{
	if (!h || h->abi != PL_SAMPLER_MODULE_ABI)
		return NULL;
	host = h;
	return &module;
}
