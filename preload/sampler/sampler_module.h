/* The boundary between the shim and its sampler module.
 *
 * The render sampler needs libunwind (the stack walk) and libdw (source
 * lines), which bring libelf, libz, liblzma and libbz2 along: loading them
 * costs every process the shim enters, and most have the sampler off. So
 * the sampler proper is a module of its own, libperflink-sampler.so, next
 * to the shim, and sampler_loader.c dlopens it only when PERFLINK_SAMPLE
 * turns the sampler on (from the constructor: outside any hook, before the
 * program's threads). A dormant shim, or one that only profiles, never
 * loads either library.
 *
 * What stays in the shim and the module shares with it goes through
 * pl_sampler_host: the render thread and its frames (sampler_frames.c, fed
 * by the exported swap hooks), the real open/close, the connection to
 * perflinkd. The module answers with pl_sampler_module. Both sides are
 * built from one tree; abi says so at load. */
#ifndef PL_PRELOAD_SAMPLER_MODULE_H
#define PL_PRELOAD_SAMPLER_MODULE_H

#include "real.h"
#include "settings.h"

#include <stdbool.h>
#include <sys/types.h>

#define PL_SAMPLER_MODULE_ABI 2
#define PL_SAMPLER_MODULE_NAME "libperflink-sampler.so"
#define PL_SAMPLER_MODULE_ENTRY "pl_sampler_module_load"

/* What the shim gives the module: each as sampler.h and report_daemon.h
 * describe it. */
struct pl_sampler_host {
	unsigned abi;
	const struct pl_real *real;
	pid_t (*render_tid)(void);
	void (*render_tid_set)(pid_t tid);
	void (*frames_read)(unsigned long *frames, unsigned long *render_us);
	void (*frames_init)(const char *thread_name);
	int (*in_swap_now)(void);
	bool (*sampler_is_on)(void);
	void (*sampler_set_on)(bool on);
	void (*report_daemon_init)(const struct pl_settings *s);
	bool (*report_daemon_enabled)(void);
	bool (*report_daemon_send)(const char *json_line);
	size_t (*report_daemon_line_max)(void);
	void (*report_daemon_fork_child)(void);
	void (*own_fd_watch)(int fd, bool mine);
	bool (*own_fd)(int fd);
};

/* What the module does for the shim: sampler.h's "sampler proper". */
struct pl_sampler_module {
	unsigned abi;
	void (*start)(const struct pl_settings *s);
	void (*finish)(void);
	void (*thread_warm)(void);
	void (*thread_wake)(void);
};

/* The module's one exported function. host outlives the module. NULL when
 * the ABIs differ. */
typedef const struct pl_sampler_module *(*pl_sampler_module_load_fn)(
	const struct pl_sampler_host *host);

#endif
