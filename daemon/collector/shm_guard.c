/* See shm_guard.h. */
#include "shm_guard.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static struct sigaction previous;
static bool installed;
/* The run in progress: read by the handler, written only outside it. */
static sigjmp_buf run_jump;
static volatile sig_atomic_t running;
static const uint8_t *volatile run_base;
static volatile size_t run_len;

static void on_sigbus(int signo, siginfo_t *si, void *uc)
{
	const uint8_t *addr = si->si_addr;

	(void)uc;
	if (running && addr >= run_base && (size_t)(addr - run_base) < run_len) {
		running = 0;
		siglongjmp(run_jump, 1);
	}
	/* Not ours: back to what SIGBUS did before; returning re-runs the
	 * faulting access, which then gets that disposition. */
	sigaction(signo, &previous, NULL);
}

int pl__shm_guard_install(void)
{
	struct sigaction sa;

	if (installed)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &previous) < 0)
		return -errno;
	installed = true;
	return 0;
}

/* A run inside a run (draining one producer can wake the link, which may
 * drain another): the outer run's state is kept and put back after. */
struct saved_run {
	sigjmp_buf jump;
	const uint8_t *base;
	size_t len;
	sig_atomic_t running;
};

static void save(struct saved_run *s)
{
	memcpy(s->jump, run_jump, sizeof(run_jump));
	s->base = run_base;
	s->len = run_len;
	s->running = running;
}

static void restore(const struct saved_run *s)
{
	running = 0;
	memcpy(run_jump, s->jump, sizeof(run_jump));
	run_base = s->base;
	run_len = s->len;
	running = s->running;
}

int pl__shm_guard_run(const void *base, size_t len, int (*fn)(void *ctx), void *ctx)
{
	struct saved_run outer;
	int ret;

	if (!installed)
		return fn(ctx);
	save(&outer);
	running = 0;
	run_base = base;
	run_len = len;
	if (sigsetjmp(run_jump, 1)) {
		restore(&outer);
		return -EFAULT;
	}
	running = 1;
	ret = fn(ctx);
	restore(&outer);
	return ret;
}
