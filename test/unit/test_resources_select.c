/* Which processes the resource sampler follows, on the live /proc with real
 * processes: the descendants of a root (found again each tick, so a child
 * forked later joins, and a grandchild whose parent exits stays), a pid
 * that is reused by a new process (forced with kernel.ns_last_pid when the
 * test runs as root), names, and another user's process whose smaps cannot
 * be read (the sampler runs as nobody against a root process). */
#include "resources.h"
#include "tap.h"
#include "test_resources_jsonl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static struct pl_resources *open_live(const char *pids, const char *names, double pss_s,
				      struct jl_capture *cap)
{
	struct pl_resources_config cfg;
	struct pl_resources *r = NULL;

	pl__resources_config_init(&cfg);
	free(cfg.out_path);
	cfg.out_path = strdup("");
	cfg.pids = pids ? strdup(pids) : NULL;
	cfg.names = names ? strdup(names) : NULL;
	cfg.pss_interval_s = pss_s;
	cfg.on_line = jl_capture_line;
	cfg.on_line_ctx = cap;
	memset(cap, 0, sizeof(*cap));
	if (pl__resources_open(&r, &cfg) < 0)
		r = NULL;
	pl__resources_config_free(&cfg);
	return r;
}

/* Tick once and parse the line it wrote into *doc. */
static bool tick_doc(struct pl_resources *r, struct jl_capture *cap, struct jl_doc *doc)
{
	const char *last;
	size_t before = cap->len;

	if (pl__resources_tick(r) < 0)
		return false;
	/* The line just written starts after the last newline before it. */
	last = cap->text + before;
	if (before == 0) {
		last = strchr(cap->text, '\n');
		last = last ? last + 1 : cap->text;
	}
	return jl_parse(doc, last, strlen(last));
}

static bool has_pid(const struct jl_doc *d, pid_t pid)
{
	char s[16];

	snprintf(s, sizeof(s), "%d", (int)pid);
	return jl_index(d, "procs", "pid", s) >= 0;
}

static bool exited_pid(const struct jl_doc *d, pid_t pid)
{
	char s[16];

	snprintf(s, sizeof(s), "%d", (int)pid);
	return jl_index(d, "exited", "pid", s) >= 0;
}

/* Child processes for the tests. Each reports its pid through a pipe the
 * test created, so the test knows the pids of grandchildren too. */
static int pid_pipe[2] = { -1, -1 };

static void report_self(void)
{
	pid_t me = getpid();

	if (write(pid_pipe[1], &me, sizeof(me)) != sizeof(me))
		_exit(1);
}

static pid_t read_pid(void)
{
	pid_t pid;

	return read(pid_pipe[0], &pid, sizeof(pid)) == sizeof(pid) ? pid : -1;
}

static bool in_test_process = true;

/* Fork a child that reports itself and then runs fn. The test process
 * waits for the report and returns the pid; a child forking its own child
 * leaves the report for the test to read. */
static pid_t fork_reporting(void (*fn)(int), int arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		in_test_process = false;
		report_self();
		fn(arg);
		_exit(0);
	}
	if (pid < 0)
		return -1;
	return in_test_process ? read_pid() : pid;
}

static void just_wait(int arg)
{
	(void)arg;
	for (;;)
		pause();
}

/* depth levels below this one, each the child of the one above. */
static void chain(int depth)
{
	if (depth > 0 && fork_reporting(chain, depth - 1) < 0)
		_exit(1);
	just_wait(0);
}

/* The root of the tree: a chain of two below it, then one more child per
 * SIGUSR1. Children that exit are reaped by the kernel (SIGCHLD ignored). */
static void tree_root(int arg)
{
	sigset_t set;
	int sig;

	(void)arg;
	signal(SIGCHLD, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (fork_reporting(chain, 1) < 0)
		_exit(1);
	for (;;) {
		if (sigwait(&set, &sig) == 0 && fork_reporting(just_wait, 0) < 0)
			_exit(1);
	}
}

static bool wait_gone(pid_t pid)
{
	char path[32];
	int i;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	for (i = 0; i < 500; i++) {
		if (access(path, F_OK) != 0)
			return true;
		usleep(2000);
	}
	return false;
}

static void test_tree(void)
{
	struct pl_resources *r;
	struct jl_capture cap;
	struct jl_doc d;
	pid_t root, child, grandchild, late = -1, other;

	root = fork_reporting(tree_root, 0);
	child = read_pid();
	grandchild = read_pid();
	other = fork_reporting(just_wait, 0);
	TAP_OK(root > 0 && child > 0 && grandchild > 0 && other > 0,
	       "a tree %d -> %d -> %d and an unrelated %d", (int)root, (int)child,
	       (int)grandchild, (int)other);
	r = open_live(NULL, NULL, 0, &cap);
	TAP_OK(r != NULL, "sampler opens on /proc");
	if (!r)
		goto out;
	pl__resources_add_root_pid(r, root);
	TAP_OK(tick_doc(r, &cap, &d), "tick 1");
	TAP_OK(has_pid(&d, root), "the root is sampled");
	TAP_OK(has_pid(&d, child), "its child is sampled");
	TAP_OK(has_pid(&d, grandchild), "its grandchild is sampled");
	TAP_OK(!has_pid(&d, other), "an unrelated process is not");
	TAP_OK(!has_pid(&d, getpid()), "the root's parent (this test) is not");
	TAP_EQ_U64(jl_len(&d, "procs"), 3, "exactly the tree");
	TAP_EQ_STR(jl_str(&d, "procs.0.by.0"), "tree", "chosen as a tree");
	jl_free(&d);

	/* The root forks another child after the first tick. */
	kill(root, SIGUSR1);
	late = read_pid();
	TAP_OK(late > 0, "a child forked later (%d)", (int)late);
	TAP_OK(tick_doc(r, &cap, &d), "tick 2");
	TAP_OK(has_pid(&d, late), "the later child is found on the next tick");
	TAP_EQ_U64(jl_len(&d, "procs"), 4, "four now");
	jl_free(&d);

	/* The middle one exits: the grandchild is reparented out of the tree
	 * and stays sampled (chosen once, followed until it exits). */
	kill(child, SIGKILL);
	TAP_OK(wait_gone(child), "the middle process is gone");
	TAP_OK(tick_doc(r, &cap, &d), "tick 3");
	TAP_OK(exited_pid(&d, child), "its exit is reported");
	TAP_OK(!has_pid(&d, child), "and it is not sampled");
	TAP_OK(has_pid(&d, grandchild), "the orphaned grandchild still is");
	jl_free(&d);

	/* The root exits: its remaining descendants stay followed, and no new
	 * process is taken as the root. */
	kill(root, SIGKILL);
	waitpid(root, NULL, 0);
	TAP_OK(tick_doc(r, &cap, &d), "tick 4");
	TAP_OK(exited_pid(&d, root) && has_pid(&d, late) && has_pid(&d, grandchild),
	       "root reported exited, its descendants still sampled");
	jl_free(&d);
	pl__resources_close(r);
	free(cap.text);
out:
	kill(grandchild, SIGKILL);
	if (late > 0)
		kill(late, SIGKILL);
	kill(root, SIGKILL);
	kill(other, SIGKILL);
	waitpid(root, NULL, 0);
	waitpid(other, NULL, 0);
}

/* Make the next fork get pid want, through kernel.ns_last_pid (root only). */
static pid_t fork_with_pid(pid_t want, void (*fn)(int), int arg)
{
	char buf[16];
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
	int n;

	if (fd < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%d", (int)want - 1);
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	close(fd);
	return fork_reporting(fn, arg);
}

static void named_wait(int which)
{
	char name[16];

	snprintf(name, sizeof(name), "plreuse-%d", which);
	prctl(PR_SET_NAME, name);
	just_wait(0);
}

static void test_pid_reuse(void)
{
	struct pl_resources *r;
	struct jl_capture cap;
	struct jl_doc d;
	char pids[16];
	pid_t x, y;
	const char *ystart, *xstart;

	if (geteuid() != 0 || access("/proc/sys/kernel/ns_last_pid", W_OK) != 0) {
		TAP_SKIP("pid reuse needs root and kernel.ns_last_pid");
		return;
	}
	/* --pids: the process that had the pid, never its successor. */
	x = fork_reporting(just_wait, 0);
	snprintf(pids, sizeof(pids), "%d", (int)x);
	r = open_live(pids, NULL, 0, &cap);
	TAP_OK(r != NULL && tick_doc(r, &cap, &d) && has_pid(&d, x), "--pids %d sampled", (int)x);
	jl_free(&d);
	kill(x, SIGKILL);
	waitpid(x, NULL, 0);
	y = fork_with_pid(x, just_wait, 0);
	if (y != x) {
		TAP_SKIP("another process took the pid first");
	} else {
		TAP_OK(r && tick_doc(r, &cap, &d), "tick after the pid was reused");
		TAP_OK(exited_pid(&d, x), "the first process is reported exited");
		TAP_OK(!has_pid(&d, y), "the new process under the same pid is not sampled");
		jl_free(&d);
	}
	kill(y, SIGKILL);
	waitpid(y, NULL, 0);
	pl__resources_close(r);
	free(cap.text);

	/* --names: both match; the new one is a new process, reported as such
	 * even when it started within the same clock tick as the old one. */
	x = fork_reporting(named_wait, 1);
	usleep(20000); /* the rename happens after the pid is reported */
	r = open_live(NULL, "plreuse", 0, &cap);
	TAP_OK(r != NULL && tick_doc(r, &cap, &d) && has_pid(&d, x), "--names found %d", (int)x);
	xstart = jl_str(&d, "procs.0.starttime_ticks");
	xstart = xstart ? strdup(xstart) : NULL;
	jl_free(&d);
	kill(x, SIGKILL);
	waitpid(x, NULL, 0);
	y = fork_with_pid(x, named_wait, 2);
	usleep(20000);
	if (y != x) {
		TAP_SKIP("another process took the pid first");
	} else {
		TAP_OK(r && tick_doc(r, &cap, &d), "tick after the pid was reused");
		TAP_OK(exited_pid(&d, x), "the old one is reported exited");
		TAP_OK(has_pid(&d, y), "the new one is sampled under the same pid");
		TAP_EQ_STR(jl_str(&d, "procs.0.comm"), "plreuse-2", "with its own comm");
		ystart = jl_str(&d, "procs.0.starttime_ticks");
		TAP_OK(xstart && ystart, "start times %s and %s", xstart ? xstart : "?",
		       ystart ? ystart : "?");
		jl_free(&d);
	}
	free((void *)xstart);
	kill(y, SIGKILL);
	waitpid(y, NULL, 0);
	pl__resources_close(r);
	free(cap.text);
}

static int rename_pipe[2] = { -1, -1 };

static void rename_later(int arg)
{
	char c;

	(void)arg;
	prctl(PR_SET_NAME, "pl-before");
	if (read(rename_pipe[0], &c, 1) == 1)
		prctl(PR_SET_NAME, "plres-renamed");
	just_wait(0);
}

static void test_names_rename(void)
{
	struct pl_resources *r;
	struct jl_capture cap;
	struct jl_doc d;
	pid_t p;

	if (pipe(rename_pipe) != 0) {
		TAP_SKIP("pipe");
		return;
	}
	p = fork_reporting(rename_later, 0);
	usleep(20000);
	r = open_live(NULL, "plres-", 0, &cap);
	TAP_OK(r && tick_doc(r, &cap, &d) && !has_pid(&d, p), "not matched before the rename");
	jl_free(&d);
	if (write(rename_pipe[1], "r", 1) != 1)
		TAP_OK(0, "write");
	usleep(20000);
	TAP_OK(r && tick_doc(r, &cap, &d) && has_pid(&d, p), "matched after it renamed itself");
	TAP_EQ_STR(jl_str(&d, "procs.0.by.0"), "name", "by name");
	jl_free(&d);
	pl__resources_close(r);
	free(cap.text);
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}

/* Run as nobody against a root process: smaps_rollup (ptrace-guarded) is
 * EACCES; status, stat, schedstat are world-readable. */
static void test_other_user(void)
{
	pid_t parent = getpid(), pid;
	int status = 0;

	if (geteuid() != 0) {
		TAP_SKIP("needs root to become another user");
		return;
	}
	pid = fork();
	if (pid == 0) {
		struct pl_resources *r;
		struct jl_capture cap;
		struct jl_doc d;
		char pids[16];
		int bad = 0;

		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(100);
		snprintf(pids, sizeof(pids), "%d", (int)parent);
		r = open_live(pids, NULL, 1, &cap);
		if (!r || !tick_doc(r, &cap, &d))
			_exit(101);
		if (!has_pid(&d, parent))
			bad |= 1;
		if (!jl_str(&d, "procs.0.pss_error") ||
		    strcmp(jl_str(&d, "procs.0.pss_error"), "Permission denied") != 0)
			bad |= 2;
		if (jl_has(&d, "procs.0.pss_kb"))
			bad |= 4;
		if (jl_u64(&d, "procs.0.vm_kb.VmRSS") == JL_MISSING)
			bad |= 8;
		if (jl_len(&d, "procs.0.threads") < 1)
			bad |= 16;
		jl_free(&d);
		pl__resources_close(r);
		free(cap.text);
		_exit(bad);
	}
	TAP_OK(pid > 0 && waitpid(pid, &status, 0) == pid, "sampler ran as nobody");
	TAP_OK(WIFEXITED(status) && WEXITSTATUS(status) < 100, "it could sample (status %d)",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	TAP_OK(WIFEXITED(status) && (WEXITSTATUS(status) & 1) == 0, "the root process is listed");
	TAP_OK(WIFEXITED(status) && (WEXITSTATUS(status) & 6) == 0,
	       "its PSS is marked 'Permission denied', no numbers");
	TAP_OK(WIFEXITED(status) && (WEXITSTATUS(status) & 24) == 0,
	       "VM counters and threads still sampled");
}

int main(void)
{
	if (pipe(pid_pipe) != 0)
		return 1;
	test_tree();
	test_pid_reuse();
	test_names_rename();
	test_other_user();
	return tap_done();
}
