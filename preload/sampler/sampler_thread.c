/* The sampler thread: arms the timer once the render thread is known,
 * moves samples from the ring into the window's table, keeps render_stats
 * every 5 s, and every window appends the report and its folded stacks.
 *
 * Names are resolved and files written here, never in the handler or on
 * the render thread (dladdr takes the loader's lock, a write can stall in
 * writeback). Like the reporter thread it blocks every signal, and it is
 * created by the constructor while the process has one thread. A mutex
 * keeps the destructor's last window apart from this thread's. Samples are
 * not taken in a fork child: timers and this thread do not survive fork. */
#include "report_daemon.h"
#include "sampler.h"
#include "diag.h"
#include "real.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TICK_NS 100000000L /* how often the ring is emptied: 0.1 s */
#define STATS_NS 5000000000ull
/* how long the sampler waits for a render thread before it says it has none */
/* (10 s: glmark2 on a loaded machine takes more than 5 to its first frame) */
#define NO_RENDER_THREAD_NS 10000000000ull
#define THREAD_STACK_BYTES (256 * 1024)

static struct pl_settings cfg;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pl_render_stats stats;
static uint64_t window_start_ns, stats_start_ns;
static unsigned long stats_frames, stats_render_us;
static pid_t armed_tid;
static bool gave_up; /* the program owns the signal: stay off for good */
static unsigned name_scan;
static uint64_t started_ns;
static bool said_no_render_thread;
/* a render thread was sampled once: its end (the program winding down)
 * is not "no render thread" */
static bool ever_armed;
static char folded_path[PL_PATH_MAX + 8];
/* The window's samples in time order, with the slot of the stack table
 * each went into (-1: idle or no room); the lines are known only when the
 * window's folded stacks are made. */
static struct {
	uint64_t mono_ns;
	int32_t slot;
} window_sample[PL_WINDOW_SAMPLES_MAX];
static size_t n_window_samples;
static uint64_t window_samples_dropped;
/* the thread the window's samples were taken on (the render thread may
 * have gone by the window's end) */
static pid_t window_tid;
/* atomic futex word: bumped by the render thread's first swap, which the
 * sampler thread waits on between ticks so that it arms the timer at once */
static uint32_t wake_word;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* PERFLINK_SAMPLE_THREAD: the first thread of that name. */
static pid_t find_named_thread(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	pid_t found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d)) != NULL) {
		char path[sizeof(e->d_name) + 32], name[PL_SAMPLE_THREAD_MAX + 2];
		ssize_t n;
		int fd;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		fd = pl__real.open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		do
			n = read(fd, name, sizeof(name) - 1);
		while (n < 0 && errno == EINTR);
		pl__real.close(fd);
		if (n <= 0)
			continue;
		name[n] = '\0';
		name[strcspn(name, "\n")] = '\0';
		if (strcmp(name, cfg.sample_thread) == 0)
			found = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	return found;
}

static bool thread_alive(pid_t tid)
{
	return syscall(SYS_tgkill, getpid(), tid, 0) == 0 || errno != ESRCH;
}

static void maybe_arm(void)
{
	pid_t tid;
	int r;

	if (gave_up)
		return;
	if (armed_tid != 0) {
		if (thread_alive(armed_tid))
			return;
		/* the render thread ended: the next one that swaps takes over */
		pl__signal_disarm();
		pl__capture_forget_bounds();
		armed_tid = 0;
		pl__render_tid_set(0);
	}
	/* a name not (yet) in use: look again once a second, not every tick */
	if (cfg.sample_thread[0] && pl__render_tid() == 0 && name_scan++ % 10 == 0) {
		tid = find_named_thread();
		if (tid)
			pl__render_tid_set(tid);
	}
	tid = pl__render_tid();
	if (tid == 0)
		return;
	r = pl__signal_arm(tid, cfg.sample_signal, cfg.sample_hz, cfg.sample_task_clock);
	if (r == -EBUSY) {
		pl__diag("the program handles signal %d itself; the sampler stays off "
			 "(PERFLINK_SAMPLE_SIGNAL chooses another)", cfg.sample_signal);
		gave_up = true;
	} else if (r < 0) {
		pl__diag("cannot start the sampling timer (error %d); the sampler stays off", -r);
		gave_up = true;
	} else {
		armed_tid = tid;
		ever_armed = true;
	}
}

/* Sampling was asked for and, a few seconds on, there is nothing to
 * sample: say so once, with what to do, rather than write nothing at all.
 * (A program that finds glXSwapBuffers with dlsym or glXGetProcAddress, as
 * glmark2 does, calls it past the shim's hook.) */
static void say_if_no_render_thread(uint64_t now)
{
	if (said_no_render_thread || gave_up || armed_tid || pl__render_tid() || ever_armed ||
	    now - started_ns < NO_RENDER_THREAD_NS)
		return;
	said_no_render_thread = true;
	if (cfg.sample_thread[0])
		pl__diag("the sampler found no thread named '%s' in %llu s and samples nothing "
			 "until one appears (PERFLINK_SAMPLE_THREAD names a thread by its "
			 "/proc/PID/task/TID/comm)",
			 cfg.sample_thread, NO_RENDER_THREAD_NS / 1000000000ull);
	else
		pl__diag("the sampler saw no frame swap (glXSwapBuffers, eglSwapBuffers) in "
			 "%llu s and samples nothing: if the program renders, name its render "
			 "thread with PERFLINK_SAMPLE_THREAD=NAME (its comm)",
			 NO_RENDER_THREAD_NS / 1000000000ull);
}

struct walk_job {
	const struct pl_raw_sample *raw;
	struct pl_stack_sample stack;
};

static void walk_held(void *arg)
{
	struct walk_job *job = arg;

	pl__unwind(job->raw, &job->stack);
}

/* Each sample is walked under the loader's lock on its own, so a target's
 * dlopen waits for one walk at most. */
static void drain_ring(void)
{
	static unsigned long names_generation;
	struct walk_job job;

	pl__anon_refresh_maps();
	while ((job.raw = pl__ring_peek()) != NULL) {
		uint64_t taken_ns = job.raw->mono_ns;
		pid_t taken_tid = job.raw->tid;
		int slot;

		if (pl__modules_hold(walk_held, &job) < 0) {
			job.stack.idle = job.raw->idle;
			job.stack.cut_short = 1;
			job.stack.taken_ns = taken_ns;
			job.stack.depth = 1;
			job.stack.ip[0] = pl__regs_pc(job.raw->regs);
		}
		pl__ring_release();
		if (pl__modules_generation() != names_generation) {
			names_generation = pl__modules_generation();
			pl__stacks_names_refresh();
		}
		slot = pl__stacks_add(&job.stack);
		if (taken_tid > 0)
			window_tid = taken_tid;
		if (n_window_samples < PL_WINDOW_SAMPLES_MAX) {
			window_sample[n_window_samples].mono_ns = taken_ns;
			window_sample[n_window_samples++].slot = slot;
		} else {
			window_samples_dropped++;
		}
	}
}

/* The window's samples with their folded lines, for the host. */
static void window_samples(const int32_t *slot_line, struct pl_timed_sample *out,
			   struct pl_window_samples *ws)
{
	size_t i;

	for (i = 0; i < n_window_samples; i++) {
		int32_t slot = window_sample[i].slot;

		out[i].mono_ns = window_sample[i].mono_ns;
		out[i].line = slot >= 0 && slot < (int32_t)PL_STACK_SLOTS ? slot_line[slot] : -1;
	}
	/* read after the ring was emptied (the clock only goes forward): a
	 * sample taken since the caller read it is in this window */
	ws->end_ns = mono_ns();
	ws->tid = window_tid;
	ws->sample = out;
	ws->n = n_window_samples;
	ws->dropped = window_samples_dropped;
}

static void update_stats(uint64_t now)
{
	unsigned long f, us, df, dus;

	pl__frames_read(&f, &us);
	/* modular: the counters wrap on 32-bit targets */
	df = f - stats_frames;
	dus = us - stats_render_us;
	if (df > 0 && now > stats_start_ns) {
		stats.valid = true;
		stats.fps = (double)df * 1e9 / (double)(now - stats_start_ns);
		stats.frame_ms = (double)dus / 1e3 / (double)df;
	}
	stats_frames = f;
	stats_render_us = us;
	stats_start_ns = now;
}

/* Caller holds lock. */
static void write_window(uint64_t now)
{
	static int32_t slot_line[PL_STACK_SLOTS];
	static struct pl_timed_sample timed[PL_WINDOW_SAMPLES_MAX];
	uint32_t window_s = (uint32_t)((now - window_start_ns + 500000000u) / 1000000000u);
	struct pl_window_samples ws;
	char *text, *folded = NULL;
	size_t len, flen = 0, fcap = 0;
	int r;

	drain_ring();
	/* no window at all while no render thread was ever known (a shell or
	 * a helper the shim entered): nothing to report, no file */
	text = ever_armed ? pl__report_text(window_s, &stats, &len) : NULL;
	if (text) {
		r = pl__rotating_append(cfg.sample_out, text, len, cfg.sample_max_bytes);
		if (r < 0)
			pl__diag("cannot append to %s (error %d)", cfg.sample_out, -r);
		if (pl__stacks_folded(&folded, &flen, &fcap, slot_line) == 0 && flen > 0) {
			r = pl__rotating_append(folded_path, folded, flen, cfg.sample_max_bytes);
			if (r < 0)
				pl__diag("cannot append to %s (error %d)", folded_path, -r);
		}
		window_samples(slot_line, timed, &ws);
		pl__sampler_forward(window_s, (uint64_t)pl__signal_period_ns(cfg.sample_hz), &stats,
				    text, len, folded, flen, &ws);
	}
	free(text);
	free(folded);
	pl__stacks_reset();
	pl__anon_new_window();
	n_window_samples = 0;
	window_samples_dropped = 0;
	window_tid = 0;
	window_start_ns = now;
}

void pl__sampler_thread_wake(void)
{
	__atomic_add_fetch(&wake_word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *sampler_main(void *unused)
{
	struct timespec tick = { 0, TICK_NS };
	uint32_t woken = __atomic_load_n(&wake_word, __ATOMIC_ACQUIRE);

	(void)unused;
	for (;;) {
		uint64_t now;

		/* a tick, or less when the render thread became known (the word
		 * moved: EAGAIN at once); a short wait is harmless */
		syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, woken, &tick, NULL, 0);
		woken = __atomic_load_n(&wake_word, __ATOMIC_ACQUIRE);
		now = mono_ns();
		pthread_mutex_lock(&lock);
		if (pl__sampler_is_on()) {
			maybe_arm();
			say_if_no_render_thread(now);
			drain_ring();
			if (now - stats_start_ns >= STATS_NS)
				update_stats(now);
			if (now - window_start_ns >= (uint64_t)cfg.sample_window_s * 1000000000u) {
				if (armed_tid && !pl__signal_intact(cfg.sample_signal)) {
					pl__diag("the program replaced the handler of signal %d; "
						 "the sampler stops", cfg.sample_signal);
					pl__signal_disarm();
					armed_tid = 0;
					gave_up = true;
				}
				write_window(now);
			}
		}
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void fork_child(void)
{
	/* no thread and no timer here: the hooks forward and nothing more */
	pl__sampler_set_on(false);
	pl__signal_fork_child();
	/* nor the parent's connection to perflinkd (idempotent: the profiler's
	 * fork handler may have let go of it already) */
	pl__report_daemon_fork_child();
}

void pl__sampler_start(const struct pl_settings *s)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t tid;
	int r;

	if (!s->sample)
		return;
	cfg = *s;
	pl__report_daemon_init(s);
	if ((size_t)snprintf(folded_path, sizeof(folded_path), "%s.folded", cfg.sample_out) >=
	    sizeof(folded_path)) {
		pl__diag("PERFLINK_SAMPLE_OUT is too long; the sampler stays off");
		return;
	}
	r = pl__signal_init();
	if (r == 0)
		r = pl__stacks_init();
	if (r == 0)
		r = -pthread_atfork(NULL, NULL, fork_child);
	if (r < 0) {
		pl__diag("cannot set the sampler up (error %d); it stays off", -r);
		return;
	}
	pl__frames_init(cfg.sample_thread);
	window_start_ns = stats_start_ns = started_ns = mono_ns();

	r = pthread_attr_init(&attr);
	if (r != 0) {
		pl__diag("cannot start the sampler thread (error %d); it stays off", r);
		return;
	}
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, THREAD_STACK_BYTES);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&tid, &attr, sampler_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r != 0) {
		pl__diag("cannot start the sampler thread (error %d); it stays off", r);
		return;
	}
#ifdef __GLIBC__
	pthread_setname_np(tid, "perflink-sample");
#endif
	pl__sampler_set_on(true);
}

void pl__sampler_finish(void)
{
	struct timespec deadline;

	if (!pl__sampler_is_on())
		return;
	/* a write stuck in writeback must not hold the exit for long */
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 3;
	if (pthread_mutex_timedlock(&lock, &deadline) != 0)
		return;
	pl__sampler_set_on(false);
	pl__signal_disarm();
	pl__stacks_exiting();
	update_stats(mono_ns());
	write_window(mono_ns());
	pthread_mutex_unlock(&lock);
}
