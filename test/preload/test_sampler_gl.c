/* The render sampler under a real GL renderer: glxgears (mesa-utils) on a
 * private Xvfb display, drawn by Mesa's software rasteriser, under the
 * shim. glxgears counts its own frames ("N frames in 5.0 seconds = X
 * FPS"); the sampler's render_stats must agree within 5%, the hottest
 * stacks must be inside Mesa, and the report must rotate at a small cap.
 *
 * Nothing is waited for by sleeping: Xvfb says its display on -displayfd
 * when it is ready, glxgears' lines arrive on a pipe, and the sampler's
 * second window is seen through inotify (the rotation, then the folded
 * file closed). Skips when Xvfb or glxgears is not installed
 * (scripts/deps installs xvfb, mesa-utils, libgl1-mesa-dri).
 *
 *   test_sampler_gl              (PL_PRELOAD_LIB from the environment) */
#include "harness.h"
#include "read_file.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CAP_BYTES 3072 /* below two windows' text: the second one rotates */
#define DEADLINE_S 30
#define MESA_RE "(swrast_dri|kms_swrast|_dri\\.so|libgallium|llvmpipe|libGLX_mesa|libglapi|libEGL_mesa)"

extern char **environ;

struct proc {
	pid_t pid;
	int out; /* stdout and stderr, merged; -1 once closed */
	char text[64 * 1024];
	size_t len;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The first executable name in PATH, into out. */
static bool in_path(const char *name, char *out, size_t cap)
{
	const char *path = getenv("PATH");
	char dirs[4096], *save = NULL, *d;

	snprintf(dirs, sizeof(dirs), "%s", path ? path : "/usr/bin:/bin");
	for (d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, cap, "%s/%s", d, name);
		if (access(out, X_OK) == 0)
			return true;
	}
	return false;
}

/* argv with this environment minus LD_PRELOAD and PERFLINK_*, plus env;
 * extra_fd stays open in the child. */
static void spawn(struct proc *p, char *const argv[], const char *const env[], int extra_fd)
{
	int fds[2];
	char *envp[512];
	size_t k = 0, i;

	memset(p, 0, sizeof(*p));
	if (pipe2(fds, O_CLOEXEC) < 0)
		abort();
	for (i = 0; environ[i] && k < 500; i++) {
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 &&
		    strncmp(environ[i], "PERFLINK_", 9) != 0 && strncmp(environ[i], "DISPLAY=", 8) != 0)
			envp[k++] = environ[i];
	}
	for (i = 0; env && env[i] && k < 510; i++)
		envp[k++] = (char *)env[i];
	envp[k] = NULL;
	fflush(stdout);
	p->pid = fork();
	if (p->pid < 0)
		abort();
	if (p->pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		if (extra_fd >= 0)
			fcntl(extra_fd, F_SETFD, 0);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	close(fds[1]);
	p->out = fds[0];
}

/* Read what p printed; false at end of file. */
static bool take_output(struct proc *p)
{
	ssize_t n = read(p->out, p->text + p->len, sizeof(p->text) - 1 - p->len);

	if (n < 0 && errno == EINTR)
		return true;
	if (n <= 0) {
		close(p->out);
		p->out = -1;
		return false;
	}
	p->len += (size_t)n;
	p->text[p->len] = '\0';
	return true;
}

static int stop(struct proc *p)
{
	int status;

	kill(p->pid, SIGTERM);
	while (p->out >= 0)
		take_output(p);
	while (waitpid(p->pid, &status, 0) < 0) {
		if (errno != EINTR)
			abort();
	}
	return status;
}

/* glxgears' own frame rates, in order; returns how many. */
static int gears_fps(const char *text, double *fps, int max)
{
	int n = 0;
	const char *s = text;

	while (n < max && (s = strstr(s, " FPS")) != NULL) {
		const char *eq = s;

		while (eq > text && *eq != '=')
			eq--;
		if (*eq == '=')
			fps[n++] = atof(eq + 1);
		s += 4;
	}
	return n;
}

static bool matches(const char *re, const char *text)
{
	regex_t r;
	bool ok;

	if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB) != 0)
		abort();
	ok = regexec(&r, text, 0, NULL, 0) == 0;
	regfree(&r);
	return ok;
}

/* Xvfb on the first free display; its number, or -1. *keep must stay
 * open while Xvfb runs: it writes the number and a newline separately,
 * and dies if the second write meets a closed pipe. */
static int start_xvfb(struct proc *x, const char *xvfb, int *keep)
{
	int fds[2];
	char fdarg[16], num[16] = "";
	char *argv[] = { (char *)xvfb, "-displayfd", fdarg, "-screen", "0", "640x480x24",
			 "-nolisten", "tcp", "-noreset", NULL };
	double end = now_s() + 15;
	size_t len = 0;

	if (pipe2(fds, O_CLOEXEC) < 0)
		abort();
	snprintf(fdarg, sizeof(fdarg), "%d", fds[1]);
	spawn(x, argv, NULL, fds[1]);
	close(fds[1]);
	*keep = fds[0];
	/* written once it accepts clients */
	while (!memchr(num, '\n', len) && len < sizeof(num) - 1 && now_s() < end) {
		struct pollfd pfd = { fds[0], POLLIN, 0 };
		ssize_t n;

		if (poll(&pfd, 1, 1000) != 1)
			continue;
		n = read(fds[0], num + len, sizeof(num) - 1 - len);
		if (n <= 0)
			return -1;
		len += (size_t)n;
	}
	if (!memchr(num, '\n', len))
		return -1;
	return atoi(num);
}

/* Run glxgears until it printed want_lines rates and, when dir is given,
 * until the sampler finished its second window (inotify). */
static bool run_gears(struct proc *g, const char *gears, const char *const env[], int want_lines,
		      const char *dir)
{
	char *argv[] = { (char *)gears, NULL };
	int ino = -1, rotated = 0, done = dir == NULL;
	double end = now_s() + DEADLINE_S, fps[8];

	if (dir) {
		ino = inotify_init1(IN_CLOEXEC);
		if (ino < 0 || inotify_add_watch(ino, dir, IN_MOVED_TO | IN_CLOSE_WRITE) < 0)
			abort();
	}
	spawn(g, argv, env, -1);
	while (now_s() < end && (gears_fps(g->text, fps, 8) < want_lines || !done)) {
		struct pollfd p[2] = { { g->out, POLLIN, 0 }, { ino, POLLIN, 0 } };

		if (poll(p, 2, 500) < 0 && errno != EINTR)
			abort();
		if (p[0].revents && !take_output(g))
			break; /* glxgears ended on its own: a failure the caller sees */
		if (p[1].revents & POLLIN) {
			char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
			ssize_t n = read(ino, buf, sizeof(buf));
			ssize_t off = 0;

			while (n > 0 && off < n) {
				struct inotify_event *e = (struct inotify_event *)(buf + off);

				if ((e->mask & IN_MOVED_TO) && e->len && strcmp(e->name, "gl.txt.1") == 0)
					rotated = 1;
				if ((e->mask & IN_CLOSE_WRITE) && e->len && rotated &&
				    strcmp(e->name, "gl.txt.folded") == 0)
					done = 1;
				off += (ssize_t)sizeof(*e) + e->len;
			}
		}
	}
	if (ino >= 0)
		close(ino);
	return gears_fps(g->text, fps, 8) >= want_lines && done;
}

/* The render_stats fps of a window's text, or -1. */
static double report_fps(const char *text)
{
	const char *s = text ? strstr(text, "\nrender_stats fps=") : NULL;

	return s ? atof(s + strlen("\nrender_stats fps=")) : -1;
}

/* The highest "on the stack" share of a Mesa library, and whether no
 * entry from outside glxgears and libc has a higher one. Shares are
 * compared, not places in the list: a callee of Mesa's on every one of its
 * samples (libX11's XGetGeometry, waiting for a loaded X server) has the
 * same share as its Mesa callers, and the report lists equal shares by
 * name. */
static double mesa_share(const char *text, bool *mesa_hottest_outside)
{
	const char *s = text ? strstr(text, "-- on the stack") : NULL;
	double best = 0, best_other = 0;

	*mesa_hottest_outside = false;
	if (!s)
		return 0;
	for (s = strchr(s, '\n'); s && s[1] && strncmp(s + 1, "-- ", 3) != 0; s = strchr(s + 1, '\n')) {
		char line[256];
		double pct;

		snprintf(line, sizeof(line), "%.*s", (int)strcspn(s + 1, "\n"), s + 1);
		if (sscanf(line, "%lf%%", &pct) != 1)
			continue;
		if (matches(MESA_RE, line)) {
			if (pct > best)
				best = pct;
		} else if (!matches("(glxgears|libc\\.so)", line) && pct > best_other) {
			best_other = pct;
		}
	}
	*mesa_hottest_outside = best > 0 && best >= best_other;
	return best;
}

int main(void)
{
	char xvfb[512], gears[512], dir[256], out[300], p[320];
	char env_lib[600], env_out[340], env_disp[32], env_cap[64];
	const char *preload_lib = getenv("PL_PRELOAD_LIB");
	struct proc x, g;
	double fps[8], ours, first_share;
	bool first_mesa;
	char *w1, *w2;
	int display, n, xfd;

	if (!preload_lib) {
		printf("Bail out! PL_PRELOAD_LIB is not set\n");
		return 1;
	}
	if (!in_path("Xvfb", xvfb, sizeof(xvfb)) || !in_path("glxgears", gears, sizeof(gears))) {
		printf("1..0 # SKIP Xvfb or glxgears not installed (Debian: xvfb mesa-utils "
		       "libgl1-mesa-dri)\n");
		return 0;
	}
	if (h_tempdir(dir, sizeof(dir), "sampler_gl") < 0) {
		printf("Bail out! no temporary directory\n");
		return 1;
	}
	display = start_xvfb(&x, xvfb, &xfd);
	if (display < 0) {
		stop(&x);
		close(xfd);
		printf("1..0 # SKIP Xvfb did not start: %s\n", h_oneline(x.text));
		return 0;
	}
	snprintf(env_disp, sizeof(env_disp), "DISPLAY=:%d", display);
	snprintf(env_lib, sizeof(env_lib), "LD_PRELOAD=%s", preload_lib);
	snprintf(out, sizeof(out), "%s/gl.txt", dir);
	snprintf(env_out, sizeof(env_out), "PERFLINK_SAMPLE_OUT=%s", out);
	snprintf(env_cap, sizeof(env_cap), "PERFLINK_SAMPLE_MAX_BYTES=%d", CAP_BYTES);

	{
		/* Mesa's software rasteriser even where a GPU driver exists */
		const char *env[] = { env_disp, "LIBGL_ALWAYS_SOFTWARE=1", NULL };

		TAP_OK(run_gears(&g, gears, env, 1, NULL), "glxgears runs on Xvfb :%d without the shim",
		       display);
		stop(&g);
		TAP_OK(gears_fps(g.text, fps, 8) >= 1 && fps[0] > 0,
		       "and counts its own frames: %s", h_oneline(g.text));
	}
	{
		const char *env[] = { env_disp, "LIBGL_ALWAYS_SOFTWARE=1", env_lib, "PERFLINK_SAMPLE=1",
				      "PERFLINK_SAMPLE_HZ=1000", "PERFLINK_SAMPLE_WINDOW=5", env_cap,
				      env_out, NULL };

		/* two 5 s periods of glxgears' own count, two windows of ours.
		 * The clock is the render thread's CPU time, and llvmpipe
		 * rasterises in threads of its own: at 250 Hz a window on a
		 * busy 2-core machine held 20-60 busy samples, too few for the
		 * shares below to mean anything; at 1000 Hz it holds 300+. */
		TAP_OK(run_gears(&g, gears, env, 2, dir),
		       "glxgears under the sampler: two periods, two windows, within %d s", DEADLINE_S);
		stop(&g);
	}
	stop(&x);
	close(xfd);
	if (!strstr(g.text, "FPS"))
		h_diag(x.text);
	h_diag(g.text);
	n = gears_fps(g.text, fps, 8);
	TAP_OK(!strstr(g.text, "perflink"), "no message from the shim: %s", h_oneline(g.text));

	w1 = test_read_file(strcat(strcpy(p, out), ".1"));
	w2 = test_read_file(out);
	TAP_OK(w1 && strncmp(w1, "==== ", 5) == 0, "the first window rotated to gl.txt.1");
	TAP_OK(w2 && strncmp(w2, "==== ", 5) == 0 && h_count(w2, "==== ") == 1,
	       "gl.txt started again with the second window");
	{
		struct stat a, b;

		TAP_OK(stat(p, &a) == 0 && stat(out, &b) == 0 && a.st_size <= CAP_BYTES &&
			       b.st_size <= CAP_BYTES,
		       "both within the %d-byte cap", CAP_BYTES);
		strcat(strcpy(p, out), ".folded");
		TAP_OK(stat(p, &a) == 0 && a.st_size > 0 && a.st_size <= CAP_BYTES,
		       "folded stacks written beside it, within the cap");
	}
	if (w2)
		h_diag(w2);

	/* The second periods overlap but for glxgears' start-up (its clock
	 * starts at its first frame, ours in the constructor): the first
	 * periods differ by that, the second ones are comparable. */
	ours = report_fps(w2);
	TAP_OK(n >= 2 && ours > 0 && fabs(ours - fps[1]) <= 0.05 * fps[1],
	       "render_stats fps %.1f matches glxgears' own %.1f within 5%%", ours, n >= 2 ? fps[1] : 0);

	first_share = mesa_share(w2, &first_mesa);
	TAP_OK(first_mesa, "the hottest function outside glxgears and libc is in Mesa");
	TAP_OK(first_share >= 40.0, "a Mesa frame on the stack in %.1f%% of busy samples", first_share);
	first_share = mesa_share(w1, &first_mesa);
	TAP_OK(first_mesa && first_share >= 40.0, "the same in the first window (%.1f%%)", first_share);
	if (!(first_mesa && first_share >= 40.0) && w1)
		h_diag(w1);
	free(w1);
	free(w2);
	h_rmdir(dir);
	return tap_done();
}
