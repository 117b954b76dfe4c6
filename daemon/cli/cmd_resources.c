/* `perflink resources`: the resource sampler on its own timer.
 *
 * With a command, perflink starts it, samples it and every descendant until
 * it exits, and exits with its status (128 + N when signal N killed it).
 * perflink is the command's child subreaper, so a descendant whose parent
 * exits is reparented to perflink and stays in the sampled tree. Without a
 * command it samples --pids and --names until SIGINT or SIGTERM.
 *
 * One poll over a timerfd on absolute deadlines (a late tick does not push
 * the later ones back; missed ones are counted, not made up) and a
 * signalfd, so no signal is lost between a check and a sleep. */
#include "cli.h"
#include "log.h"
#include "options.h"
#include "resources.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

struct run {
	pid_t child;       /* 0: no command */
	bool child_done;
	int child_status;  /* as from waitpid */
	bool stop;         /* SIGINT/SIGTERM without a command */
	bool sampling;
	uint64_t missed;   /* timer expirations that found the sampler busy */
};

static void usage(FILE *out, const struct pl_option *table)
{
	fprintf(out,
		"usage: perflink resources [OPTIONS] [-- CMD [ARGS...]]\n\n"
		"Sample processes once per interval into JSON lines (docs/resources.md):\n"
		"CPU ticks, faults, per-thread schedstat and context switches, VM counters,\n"
		"meminfo, reclaim/compaction vmstat counters, buddyinfo free blocks per order;\n"
		"PSS every --pss-interval. The first line records the kernel, the clock tick,\n"
		"the page size, the CPUs and the reclaim/writeback sysctls.\n\n"
		"With CMD: run it, sample it and all its descendants until it exits, then\n"
		"exit with its status. Without: sample --pids/--names until SIGINT/SIGTERM.\n\n"
		"options:\n");
	pl__options_print_help(table, out);
}

/* The command gets the signal mask and fd limit perflink was given: the
 * sampler raises its own soft RLIMIT_NOFILE for its kept /proc files. */
static int spawn(char **cmd, const sigset_t *old_mask, const struct rlimit *old_nofile,
		 pid_t *out)
{
	int pipefd[2], child_errno = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(pipefd[0]);
		close(pipefd[1]);
		return err;
	}
	if (pid == 0) {
		int e;

		sigprocmask(SIG_SETMASK, old_mask, NULL);
		if (old_nofile)
			setrlimit(RLIMIT_NOFILE, old_nofile);
		close(pipefd[0]);
		execvp(cmd[0], cmd);
		e = errno;
		/* The parent learns why exec failed through the pipe;
		 * nothing more can be done if this write fails. */
		if (write(pipefd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	do
		n = read(pipefd[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	*out = pid;
	if (n == (ssize_t)sizeof(child_errno))
		return -child_errno;
	return 0;
}

static void reap(struct run *run)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid < 0 && errno == EINTR)
			continue;
		if (pid <= 0)
			return;
		/* Orphans reparented to us are reaped and forgotten. */
		if (pid == run->child) {
			run->child_done = true;
			run->child_status = status;
		}
	}
}

static void on_signals(int sfd, struct run *run)
{
	struct signalfd_siginfo si;

	for (;;) {
		ssize_t n = read(sfd, &si, sizeof(si));

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(si))
			return;
		if (si.ssi_signo == SIGCHLD) {
			reap(run);
			continue;
		}
		if (!run->child || run->child_done) {
			run->stop = true;
			continue;
		}
		/* A terminal's ^C (SI_KERNEL) already went to the whole
		 * foreground group, the command included; anything else is
		 * passed on, and perflink keeps sampling until it exits. */
		if (si.ssi_code != SI_KERNEL && kill(run->child, (int)si.ssi_signo) != 0)
			pl__log_warn("resources: passing signal %u to %d", si.ssi_signo,
				     (int)run->child);
	}
}

static int arm_timer(int tfd, uint64_t interval_ns)
{
	struct itimerspec its;
	struct timespec now;

	if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
		return -errno;
	its.it_interval.tv_sec = (time_t)(interval_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(interval_ns % 1000000000u);
	its.it_value = now;
	its.it_value.tv_sec += its.it_interval.tv_sec;
	its.it_value.tv_nsec += its.it_interval.tv_nsec;
	if (its.it_value.tv_nsec >= 1000000000L) {
		its.it_value.tv_sec++;
		its.it_value.tv_nsec -= 1000000000L;
	}
	if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
		return -errno;
	return 0;
}

static int exit_status(const struct run *run, bool failed)
{
	int code = 0;

	if (run->child) {
		if (WIFEXITED(run->child_status))
			code = WEXITSTATUS(run->child_status);
		else if (WIFSIGNALED(run->child_status))
			code = 128 + WTERMSIG(run->child_status);
	}
	return failed && code == 0 ? 1 : code;
}

static int sample_loop(struct pl_resources *r, int tfd, int sfd, struct run *run,
		       long max_samples)
{
	uint64_t samples = 0;
	int err;

	for (;;) {
		struct pollfd pfd[2] = { { tfd, POLLIN, 0 }, { sfd, POLLIN, 0 } };
		bool final = run->child && run->child_done;

		if (run->sampling) {
			if ((err = pl__resources_tick(r)) < 0) {
				pl__log_warnx("resources: stopping the sampler");
				run->sampling = false;
				if (!run->child)
					return err;
			}
			samples++;
			if (max_samples > 0 && samples >= (uint64_t)max_samples)
				run->sampling = false;
		}
		if (final || run->stop || (!run->sampling && !run->child))
			return 0;
		/* Wait for the next deadline, a signal, or the command. */
		for (;;) {
			if (poll(pfd, 2, -1) < 0) {
				if (errno == EINTR)
					continue;
				return -errno;
			}
			if (pfd[1].revents & POLLIN)
				on_signals(sfd, run);
			if (run->stop || (run->child && run->child_done))
				break;
			if (pfd[0].revents & POLLIN) {
				uint64_t expirations;

				if (read(tfd, &expirations, sizeof(expirations)) ==
					    (ssize_t)sizeof(expirations) &&
				    expirations > 1)
					run->missed += expirations - 1;
				break;
			}
		}
	}
}

/* Blocks SIGINT, SIGTERM and SIGCHLD so that they arrive only through *sfd,
 * and creates the sample timer; *old_mask is the mask to restore. */
static int open_signal_and_timer(sigset_t *old_mask, int *sfd, int *tfd)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &mask, old_mask) != 0 ||
	    (*sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0 ||
	    (*tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0) {
		int err = -errno;

		pl__log_warn("resources: signalfd/timerfd");
		return err;
	}
	return 0;
}

/* 0 when the command runs and is sampled; 1 when it started but could not
 * be executed (it has been reaped); a negative errno when it did not start. */
static int start_command(struct pl_resources *r, char **cmd, const sigset_t *old_mask,
			 const struct rlimit *old_nofile, struct run *run)
{
	int err;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		pl__log_warn("resources: cannot become a subreaper; descendants "
			     "orphaned between two samples may be missed");
	err = spawn(cmd, old_mask, old_nofile, &run->child);
	if (err < 0 && run->child <= 0) {
		pl__log_warnc(err, "resources: cannot start %s", cmd[0]);
		return err;
	}
	if (err < 0) {
		pl__log_warnc(err, "resources: cannot run %s", cmd[0]);
		while (waitpid(run->child, &run->child_status, 0) < 0 && errno == EINTR)
			;
		return 1;
	}
	pl__resources_add_root_pid(r, run->child);
	pl__resources_add_descendants_of(r, getpid());
	return 0;
}

/* Arms the timer, samples until the loop ends, logs the run's summary. */
static int sample_and_log(struct pl_resources *r, int tfd, int sfd, struct run *run,
			  long max_samples)
{
	struct pl_resources_stats st;
	int err;

	if ((err = arm_timer(tfd, pl__resources_interval_ns(r))) < 0) {
		pl__log_warnc(err, "resources: timerfd_settime");
		return err;
	}
	run->sampling = true;
	err = sample_loop(r, tfd, sfd, run, max_samples);
	pl__resources_get_stats(r, &st);
	pl__log_info("resources: %llu samples, sampler %.3f ms last, %.3f ms max; "
		     "%llu processes exited; %llu ticks missed; %llu read errors",
		     (unsigned long long)st.samples, st.sampler_ms_last, st.sampler_ms_max,
		     (unsigned long long)st.exited, (unsigned long long)run->missed,
		     (unsigned long long)st.read_errors);
	return err;
}

/* The sampler may have stopped before the command: wait for it. */
static void wait_for_command(int sfd, struct run *run)
{
	while (run->child && !run->child_done) {
		struct pollfd pfd = { sfd, POLLIN, 0 };

		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			break;
		on_signals(sfd, run);
	}
}

/* Samples what cfg names and cmd (NULL: no command); returns the exit status. */
static int run_sampler(const struct pl_resources_config *cfg, char **cmd, long max_samples)
{
	struct pl_resources *r = NULL;
	struct run run = { 0 };
	sigset_t old_mask;
	struct rlimit nofile;
	bool have_nofile, failed = true; /* until the sampler has run */
	int ret, tfd = -1, sfd = -1;

	if (open_signal_and_timer(&old_mask, &sfd, &tfd) < 0)
		goto out;
	have_nofile = getrlimit(RLIMIT_NOFILE, &nofile) == 0;
	if (pl__resources_open(&r, cfg) < 0)
		goto out;
	if (cmd) {
		ret = start_command(r, cmd, &old_mask, have_nofile ? &nofile : NULL, &run);
		if (ret < 0)
			goto out;
		if (ret > 0) {
			ret = 127;
			goto close_all;
		}
	}
	failed = sample_and_log(r, tfd, sfd, &run, max_samples) < 0;
out:
	wait_for_command(sfd, &run);
	ret = exit_status(&run, failed);
close_all:
	pl__resources_close(r);
	if (tfd >= 0)
		close(tfd);
	if (sfd >= 0)
		close(sfd);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	return ret;
}

/* This command's options: the sampler's, then its own two. */
static void options_table(struct pl_option table[16], struct pl_resources_config *cfg,
			  long *max_samples, bool *verbose)
{
	const struct pl_option *ropts = pl__resources_options(cfg);
	size_t n = 0;

	/* at most 13 of the sampler's: room is left for ours and the end */
	for (; n < 13 && ropts[n].name; n++)
		table[n] = ropts[n];
	table[n++] = (struct pl_option){ "samples", PL_OPT_INT, max_samples, 0, 1e9, "N",
					 "stop sampling after N lines (0: no limit; a command "
					 "still runs to its end)" };
	table[n++] = (struct pl_option){ "verbose", PL_OPT_BOOL, verbose, 0, 0, NULL,
					 "log debug messages (each process that leaves)" };
	table[n] = (struct pl_option)PL_OPT_END;
}

int pl__cmd_resources(int argc, char **argv)
{
	struct pl_resources_config cfg;
	struct pl_option table[16];
	char err_msg[PL_ERRBUF];
	long max_samples = 0;
	bool verbose = false;
	int next = 0, ret;

	pl__resources_config_init(&cfg);
	options_table(table, &cfg, &max_samples, &verbose);
	ret = pl__options_parse_argv(table, argc, argv, &next, err_msg, sizeof(err_msg));
	if (ret == 1) {
		usage(stdout, table);
		ret = 0;
	} else if (ret < 0 || (next >= argc && !(cfg.pids && cfg.pids[0]) &&
			       !(cfg.names && cfg.names[0]))) {
		fprintf(stderr, "perflink resources: %s\n\n",
			ret < 0 ? err_msg : "nothing to sample: give --pids, --names or a command");
		usage(stderr, table);
		ret = 2;
	} else {
		pl__log_init("perflink", true, verbose ? 1 : 0);
		ret = run_sampler(&cfg, next < argc ? argv + next : NULL, max_samples);
	}
	pl__resources_config_free(&cfg);
	return ret;
}
