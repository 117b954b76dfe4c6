/* The event loop: fd watches, timerfd timers, signalfd signals, and watches
 * removed from inside a callback while their event is in the same batch. */
#include "event_loop.h"
#include "tap.h"

#include "clock.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

struct counter {
	int calls;
	uint64_t expirations;
	int last_signo;
	struct pl_loop *loop;
	struct pl_loop_watch *victim; /* removed by the callback, if set */
	bool stop;
};

static void on_fd(void *ctx, int fd, uint32_t events)
{
	struct counter *c = ctx;
	char buf[16];

	c->calls++;
	if (events & EPOLLIN)
		(void)!read(fd, buf, sizeof(buf));
	if (c->victim) {
		pl__loop_remove(c->victim);
		c->victim = NULL;
	}
	if (c->stop)
		pl__loop_stop(c->loop);
}

static void on_timer(void *ctx, uint64_t expirations)
{
	struct counter *c = ctx;

	c->calls++;
	c->expirations += expirations;
	if (c->stop)
		pl__loop_stop(c->loop);
}

static void on_signal(void *ctx, int signo)
{
	struct counter *c = ctx;

	c->calls++;
	c->last_signo = signo;
}

/* Run the loop until cond holds or 2 s have passed. */
#define RUN_UNTIL(loop, cond)                                                   \
	do {                                                                    \
		uint64_t until_ = pl__mono_ns() + 2000000000u;                 \
		while (!(cond) && pl__mono_ns() < until_)                       \
			pl__loop_run_once(loop, 50);                            \
	} while (0)

int main(void)
{
	struct pl_loop *l;
	struct pl_loop_watch *wa, *wb, *wt;
	struct counter a = { 0 }, b = { 0 }, t = { 0 }, s = { 0 };
	int pa[2], pb[2];
	uint64_t t0;
	sigset_t cur;

	TAP_OK(pl__loop_new(&l) == 0, "loop created");
	a.loop = b.loop = t.loop = l;

	/* fd watches */
	TAP_OK(pipe(pa) == 0 && pipe(pb) == 0, "pipes");
	TAP_OK(pl__loop_add_fd(l, pa[0], EPOLLIN, on_fd, &a, &wa) == 0, "watch pipe a");
	TAP_OK(pl__loop_add_fd(l, pb[0], EPOLLIN, on_fd, &b, &wb) == 0, "watch pipe b");
	TAP_EQ_U64(pl__loop_run_once(l, 0), 0, "nothing ready, nothing dispatched");
	(void)!write(pa[1], "x", 1);
	RUN_UNTIL(l, a.calls == 1);
	TAP_EQ_U64(a.calls, 1, "readable pipe calls its callback once");
	TAP_EQ_U64(b.calls, 0, "the other one is not called");

	/* Both ready in one batch: whichever runs first removes the other,
	 * which must then not run (its event is already in the batch). */
	a.calls = b.calls = 0;
	a.victim = wb;
	b.victim = wa;
	(void)!write(pa[1], "x", 1);
	(void)!write(pb[1], "x", 1);
	TAP_OK(pl__loop_run_once(l, 1000) >= 1, "batch dispatched");
	TAP_EQ_U64(a.calls + b.calls, 1, "a watch removed in the same batch is not called");
	(void)!write(pa[1], "x", 1);
	(void)!write(pb[1], "x", 1);
	a.calls = b.calls = 0;
	pl__loop_run_once(l, 100);
	TAP_EQ_U64(a.calls + b.calls, 1, "and stays removed");
	/* The survivor is the one whose callback ran and used its victim. */
	pl__loop_remove(a.victim == NULL ? wa : wb);

	/* Watching for nothing, then for writability. */
	TAP_OK(pl__loop_add_fd(l, pa[1], 0, on_fd, &a, &wa) == 0, "watch a pipe's write end for nothing");
	a.calls = 0;
	pl__loop_run_once(l, 50);
	TAP_EQ_U64(a.calls, 0, "no events asked, none delivered");
	TAP_OK(pl__loop_mod_fd(wa, EPOLLOUT) == 0, "now ask for EPOLLOUT");
	RUN_UNTIL(l, a.calls > 0);
	TAP_OK(a.calls > 0, "writable pipe reported");
	pl__loop_remove(wa);
	TAP_OK(pl__loop_add_fd(l, 12345, EPOLLIN, on_fd, &a, NULL) == -EBADF,
	       "a closed fd is -EBADF");

	/* Timers: a periodic one fires repeatedly, and no sooner than asked. */
	t0 = pl__mono_ns();
	TAP_OK(pl__loop_add_timer(l, 20000000, 20000000, on_timer, &t, &wt) == 0,
	       "20 ms periodic timer");
	RUN_UNTIL(l, t.expirations >= 3);
	TAP_OK(t.expirations >= 3, "it fired 3 times (%llu)", (unsigned long long)t.expirations);
	TAP_OK(pl__mono_ns() - t0 >= 60000000u, "not before 3 intervals passed");
	TAP_OK(pl__loop_timer_set(wt, 0, 0) == 0, "disarmed");
	t.calls = 0;
	pl__loop_run_once(l, 100);
	TAP_EQ_U64(t.calls, 0, "a disarmed timer stays quiet");
	TAP_OK(pl__loop_timer_set(wt, 1000000, 0) == 0, "re-armed as a one-shot");
	t.stop = true;
	TAP_OK(pl__loop_run(l) == 0 && t.calls == 1, "pl__loop_run returns after pl__loop_stop");
	TAP_OK(pl__loop_add_timer(l, 0, 0, on_timer, &t, &wt) == 0, "a disarmed timer is created");
	TAP_OK(pl__loop_timer_set(wt, 0, 0) == 0 && pl__loop_mod_fd(wt, EPOLLIN) == 0,
	       "and can be left alone");

	/* Signals go through the signalfd, not a handler. */
	TAP_OK(pl__loop_add_signal(l, SIGUSR1, on_signal, &s) == 0, "SIGUSR1 handled by the loop");
	TAP_OK(pl__loop_add_signal(l, SIGUSR2, on_signal, &s) == 0, "SIGUSR2 too");
	TAP_OK(pl__loop_add_signal(l, 0, on_signal, &s) == -EINVAL, "signal 0 refused");
	sigprocmask(SIG_BLOCK, NULL, &cur);
	TAP_OK(sigismember(&cur, SIGUSR1) && sigismember(&cur, SIGUSR2), "both are blocked");
	kill(getpid(), SIGUSR2);
	RUN_UNTIL(l, s.calls == 1);
	TAP_OK(s.calls == 1 && s.last_signo == SIGUSR2, "SIGUSR2 dispatched (%d)", s.last_signo);
	kill(getpid(), SIGUSR1);
	RUN_UNTIL(l, s.calls == 2);
	TAP_OK(s.calls == 2 && s.last_signo == SIGUSR1, "SIGUSR1 dispatched");

	/* Freeing restores the mask and eats pending signals (otherwise the
	 * default action, death, would follow). */
	kill(getpid(), SIGUSR1);
	pl__loop_free(l);
	sigprocmask(SIG_BLOCK, NULL, &cur);
	TAP_OK(!sigismember(&cur, SIGUSR1) && !sigismember(&cur, SIGUSR2),
	       "the mask is restored after free");
	TAP_OK(true, "a pending signal did not kill us");
	pl__loop_free(NULL);
	close(pa[0]);
	close(pa[1]);
	close(pb[0]);
	close(pb[1]);
	return tap_done();
}
