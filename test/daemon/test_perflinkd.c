/* perflinkd as a user and an init system meet it: the real executables,
 * started as processes, talked to over real sockets.
 *
 * usage: test_perflinkd PERFLINKD PERFLINK EXAMPLE_CONF
 *
 * Asserts: a bad config line stops the start with FILE:LINE; every config
 * key is also a flag (the same table) and is listed by --help and in the
 * example config; READY=1 and STOPPING=1 reach $NOTIFY_SOCKET; `perflink
 * status` gets the JSON; garbage and an endless line get error lines while
 * the daemon goes on serving; SIGHUP is ignored; SIGTERM ends it with exit 0
 * within a second and removes the control socket and the pid file. */
#include "tap.h"

#include "clock.h"
#include "json_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *perflinkd, *perflink, *example;
static char dir[] = "/tmp/pl-test-perflinkd-XXXXXX";
static char ctl[128], notify_path[128], pidfile[128], empty_conf[128], errlog[128];

struct run {
	int status; /* exit status, or 128 + signal, or -1 on timeout */
	char out[1 << 17];
	char err[1 << 14];
};

static char *path_in_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
	return buf;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

static char *read_file(const char *path)
{
	static char buf[1 << 16];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	return buf;
}

/* Wait for a child to exit, up to timeout_ms; SIGCHLD is blocked in this
 * process so that its arrival can be waited for. */
static int wait_exit(pid_t pid, int timeout_ms)
{
	uint64_t until = pl__mono_ns() + (uint64_t)timeout_ms * 1000000u;
	sigset_t chld;
	int st;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		uint64_t now;
		struct timespec ts;
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		now = pl__mono_ns();
		if (r < 0 || now >= until)
			return -1;
		ts.tv_sec = (time_t)((until - now) / 1000000000u);
		ts.tv_nsec = (long)((until - now) % 1000000000u);
		sigtimedwait(&chld, NULL, &ts);
	}
}

static void child_exec(char *const argv[], int out_fd, int err_fd, const char *notify)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (notify)
		setenv("NOTIFY_SOCKET", notify, 1);
	else
		unsetenv("NOTIFY_SOCKET");
	dup2(out_fd, 1);
	dup2(err_fd, 2);
	execv(argv[0], argv);
	_exit(127);
}

/* Run to completion (10 s at most), capturing stdout and stderr. */
static void run(struct run *r, char *const argv[])
{
	int out[2], err[2];
	size_t olen = 0, elen = 0;
	uint64_t until = pl__mono_ns() + 10000000000u;
	pid_t pid;

	if (pipe(out) < 0 || pipe(err) < 0)
		abort();
	pid = fork();
	if (pid == 0)
		child_exec(argv, out[1], err[1], NULL);
	close(out[1]);
	close(err[1]);
	for (;;) {
		struct pollfd p[2] = { { out[0], POLLIN, 0 }, { err[0], POLLIN, 0 } };
		ssize_t n;

		if ((p[0].fd < 0 && p[1].fd < 0) || pl__mono_ns() > until)
			break;
		if (poll(p, 2, 100) <= 0)
			continue;
		if (p[0].revents) {
			n = read(out[0], r->out + olen, sizeof(r->out) - 1 - olen);
			if (n <= 0)
				out[0] = -1;
			else
				olen += (size_t)n;
		}
		if (p[1].revents) {
			n = read(err[0], r->err + elen, sizeof(r->err) - 1 - elen);
			if (n <= 0)
				err[0] = -1;
			else
				elen += (size_t)n;
		}
	}
	r->out[olen] = '\0';
	r->err[elen] = '\0';
	if (out[0] >= 0)
		close(out[0]);
	if (err[0] >= 0)
		close(err[0]);
	r->status = wait_exit(pid, 5000);
	if (r->status < 0)
		kill(pid, SIGKILL), waitpid(pid, NULL, 0);
}

/* Start perflinkd in the background with stderr going to errlog. */
static pid_t spawn(char *const argv[], const char *notify)
{
	int fd = open(errlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	pid_t pid;

	if (fd < 0)
		abort();
	pid = fork();
	if (pid == 0)
		child_exec(argv, fd, fd, notify);
	close(fd);
	return pid;
}

static int notify_listener(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%.100s", notify_path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		abort();
	return fd;
}

/* The next datagram within timeout_ms, or "" */
static const char *notify_recv(int fd, int timeout_ms)
{
	static char buf[256];
	struct pollfd p = { fd, POLLIN, 0 };
	ssize_t n = 0;

	if (poll(&p, 1, timeout_ms) == 1)
		n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static int raw_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { 3, 0 };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%.100s", ctl);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		abort();
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static const char *raw_read(int fd)
{
	static char buf[4096];
	size_t len = 0;
	ssize_t n;

	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fd);
	return buf;
}

/* Every scalar as "\npath=value", to look fields up with strstr. */
static void flatten(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	char *buf = ctx;
	size_t len = strlen(buf);

	(void)kind;
	snprintf(buf + len, 8192 - len, "\n%s=%s", path, value);
}

/* ---- settings ---------------------------------------------------------- */

/* The keys from --print-config, with a changed value for each: booleans
 * flipped, strings replaced, numbers kept (their ranges are the modules'
 * business). */
struct key {
	char name[64];
	char value[160];   /* as it appears after "name = " in the changed dump */
	char flag[240];    /* --name=value */
};

static size_t parse_keys(const char *dump, struct key *keys, size_t max)
{
	const char *line = dump;
	size_t n = 0;

	while (*line && n < max) {
		const char *end = strchr(line, '\n');
		char text[256], name[64], value[160];
		size_t len = end ? (size_t)(end - line) : strlen(line);

		snprintf(text, sizeof(text), "%.*s", (int)len, line);
		line += len + (end ? 1 : 0);
		if (sscanf(text, "# %63[a-z0-9_-] = (unset)", name) == 1) {
			snprintf(value, sizeof(value), "\"/pl-test/%s\"", name);
		} else if (sscanf(text, "%63[a-z0-9_-] = %159[^\n]", name, value) == 2) {
			if (strcmp(value, "yes") == 0)
				snprintf(value, sizeof(value), "no");
			else if (strcmp(value, "no") == 0)
				snprintf(value, sizeof(value), "yes");
			else if (value[0] == '"')
				snprintf(value, sizeof(value), "\"/pl-test/%s\"", name);
		} else {
			continue;
		}
		snprintf(keys[n].name, sizeof(keys[n].name), "%s", name);
		snprintf(keys[n].value, sizeof(keys[n].value), "%s", value);
		if (value[0] == '"')
			snprintf(keys[n].flag, sizeof(keys[n].flag), "--%s=%.*s", name,
				 (int)strlen(value) - 2, value + 1);
		else
			snprintf(keys[n].flag, sizeof(keys[n].flag), "--%s=%s", name, value);
		n++;
	}
	return n;
}

/* The dump without its first (comment) line, which names the file. */
static const char *body(const char *dump)
{
	const char *nl = strchr(dump, '\n');

	return nl ? nl + 1 : dump;
}

static void test_settings(void)
{
	static struct run r, r2;
	static struct key keys[256];
	static char expected[1 << 16], conf[1 << 16];
	char *argv_flags[300];
	char conf_path[128];
	size_t n, i, ne = 0, nc = 0;
	bool all_help = true, all_example = true;
	char missing_help[256] = "", missing_example[512] = "";

	{
		char *argv[] = { (char *)perflinkd, "--config", empty_conf, "--print-config", NULL };

		run(&r, argv);
	}
	TAP_OK(r.status == 0, "--print-config runs (%d: %s)", r.status, r.err);
	n = parse_keys(body(r.out), keys, 256);
	TAP_OK(n >= 7, "it lists the settings (%zu keys)", n);
	TAP_OK(strstr(r.out, "\ntrace = no\n") && strstr(r.out, "\nresources = no\n") &&
		       strstr(r.out, "\ncontrol-socket = \""),
	       "the daemon's own keys are there");
	for (i = 0; i < n; i++) {
		if (strncmp(keys[i].name, "trace-", 6) == 0)
			break;
	}
	TAP_OK(i < n, "the tracer's keys are there, prefixed trace-");
	for (i = 0; i < n; i++) {
		if (strncmp(keys[i].name, "resources-", 10) == 0)
			break;
	}
	TAP_OK(i < n, "the sampler's keys are there, prefixed resources-");

	/* The same changes by flags and by file must give the same dump. */
	argv_flags[0] = (char *)perflinkd;
	argv_flags[1] = "--config";
	argv_flags[2] = empty_conf;
	argv_flags[3] = "--print-config";
	for (i = 0; i < n; i++) {
		argv_flags[4 + i] = keys[i].flag;
		ne += (size_t)snprintf(expected + ne, sizeof(expected) - ne, "%s = %s\n",
				       keys[i].name, keys[i].value);
		nc += (size_t)snprintf(conf + nc, sizeof(conf) - nc, "%s = %s\n", keys[i].name,
				       keys[i].value);
	}
	argv_flags[4 + n] = NULL;
	run(&r2, argv_flags);
	TAP_OK(r2.status == 0, "every key is accepted as a flag (%s)", r2.err);
	TAP_EQ_STR(body(r2.out), expected, "and the flags set what the dump says");
	path_in_dir(conf_path, sizeof(conf_path), "changed.conf");
	write_file(conf_path, conf);
	{
		char *argv[] = { (char *)perflinkd, "--config", conf_path, "--print-config", NULL };

		run(&r2, argv);
	}
	TAP_OK(r2.status == 0, "every key is accepted in the file (%s)", r2.err);
	TAP_EQ_STR(body(r2.out), expected, "with the same result as the flags");

	/* Flags win over the file. */
	{
		char *argv[] = { (char *)perflinkd, "--config", conf_path, "--print-config",
				 "--control-socket=/from/flag", NULL };

		write_file(conf_path, "control-socket = /from/file\n");
		run(&r2, argv);
		TAP_OK(r2.status == 0 && strstr(r2.out, "control-socket = \"/from/flag\""),
		       "a flag overrides the file");
	}

	/* --help lists every key; the example config documents every key and
	 * loads as it is. */
	{
		char *argv[] = { (char *)perflinkd, "--help", NULL };

		run(&r2, argv);
	}
	TAP_OK(r2.status == 0 && strstr(r2.out, "usage: perflinkd"), "--help");
	{
		const char *ex = read_file(example);

		for (i = 0; i < n; i++) {
			char want[80], want2[80], want3[80];

			snprintf(want, sizeof(want), "  --%.60s ", keys[i].name);
			if (!strstr(r2.out, want)) {
				all_help = false;
				snprintf(missing_help + strlen(missing_help),
					 sizeof(missing_help) - strlen(missing_help), " %.60s",
					 keys[i].name);
			}
			snprintf(want2, sizeof(want2), "\n# %.60s =", keys[i].name);
			snprintf(want3, sizeof(want3), "\n%.60s =", keys[i].name);
			if (!strstr(ex, want2) && !strstr(ex, want3)) {
				all_example = false;
				snprintf(missing_example + strlen(missing_example),
					 sizeof(missing_example) - strlen(missing_example), " %.60s",
					 keys[i].name);
			}
		}
	}
	TAP_OK(all_help, "--help lists every key (missing:%s)", missing_help);
	TAP_OK(all_example, "the example config documents every key (missing:%s)",
	       missing_example);
	{
		char *argv[] = { (char *)perflinkd, "--config", (char *)example, "--print-config",
				 NULL };

		run(&r2, argv);
		TAP_OK(r2.status == 0, "the example config loads (%s)", r2.err);
	}
	{
		char *argv[] = { (char *)perflinkd, "--version", NULL };

		run(&r2, argv);
		TAP_OK(r2.status == 0 && strncmp(r2.out, "perflinkd ", 10) == 0, "--version");
	}
}

static void expect_refusal(const char *text, const char *want, const char *what)
{
	static struct run r;
	char path[128], want_full[256];
	char *argv[] = { (char *)perflinkd, "--foreground", "--config", path,
			 "--control-socket", ctl, NULL };

	path_in_dir(path, sizeof(path), "bad.conf");
	write_file(path, text);
	snprintf(want_full, sizeof(want_full), "%s:%s", path, want);
	run(&r, argv);
	TAP_OK(r.status != 0 && r.status != -1, "%s: refuses to start (exit %d)", what, r.status);
	TAP_OK(strstr(r.err, want_full) != NULL, "%s: the message names file:line (%s)", what,
	       strtok(r.err, "\n"));
}

static void test_bad_config(void)
{
	static struct run r;
	struct stat sb;
	char missing[128];

	expect_refusal("# fine\ntrace = no\nthis is not a setting\n", "3: expected 'key = value'",
		       "a line without '='");
	expect_refusal("\n\ncolour = blue\n", "3: unknown key 'colour'", "an unknown key");
	expect_refusal("trace = perhaps\n", "1: trace: 'perhaps' is not a boolean",
		       "a bad boolean");
	expect_refusal("config = /etc/other.conf\n", "1: unknown key 'config'",
		       "--config is a flag only");
	TAP_OK(stat(ctl, &sb) < 0, "no control socket was made");

	path_in_dir(missing, sizeof(missing), "missing.conf");
	{
		char *argv[] = { (char *)perflinkd, "--config", missing, "--print-config", NULL };

		run(&r, argv);
	}
	TAP_OK(r.status == 1 && strstr(r.err, missing), "a missing --config file is an error (%s)",
	       strtok(r.err, "\n"));
	{
		char *argv[] = { (char *)perflinkd, "--no-such-flag", NULL };

		run(&r, argv);
	}
	TAP_OK(r.status == 1 && strstr(r.err, "--no-such-flag"), "an unknown flag is an error");
	{
		char *argv[] = { (char *)perflinkd, "--print-config", NULL };

		/* The default file is in PL_SYSCONFDIR; where it does not
		 * exist, that is fine. */
		run(&r, argv);
	}
	TAP_OK(r.status == 0, "no --config: a missing default file is fine (%s)", r.err);
}

/* ---- the running daemon ------------------------------------------------ */

static void test_status(void)
{
	static struct run r;
	static char flat[8192];
	char *argv[] = { (char *)perflink, "status", "--socket", ctl, "--json", NULL };
	char *argv_text[] = { (char *)perflink, "status", "--socket", ctl, NULL };
	char want[64];

	run(&r, argv);
	TAP_OK(r.status == 0, "perflink status --json (%s)", r.err);
	flat[0] = '\0';
	TAP_OK(pl__json_walk(r.out, strlen(r.out), flatten, flat) == 0 &&
		       strchr(r.out, '\n') == r.out + strlen(r.out) - 1,
	       "the answer is one JSON line");
	TAP_OK(strstr(flat, "\nversion=") && strstr(flat, "\nuptime_s="), "version and uptime");
	TAP_OK(strstr(flat, "\nmodules.tracer.state=off") &&
		       strstr(flat, "\nmodules.resources.state=off"),
	       "the modules, both off as configured");
	TAP_OK(strstr(flat, "\nself.rss_kib=") && strstr(flat, "\nself.cpu_user_s="),
	       "the daemon's own RSS and CPU");
	snprintf(want, sizeof(want), "\npid=");
	TAP_OK(strstr(flat, want) != NULL, "its pid");

	run(&r, argv_text);
	TAP_OK(r.status == 0 && strstr(r.out, "perflinkd ") && strstr(r.out, "tracer") &&
		       strstr(r.out, "resources"),
	       "perflink status prints a summary");
}

static void test_hostile_clients(void)
{
	static char chunk[65536];
	static struct run r;
	char *argv[] = { (char *)perflink, "status", "--socket", ctl, "--json", NULL };
	uint64_t until;
	size_t sent = 0;
	int fd;

	fd = raw_connect();
	TAP_OK(send(fd, "GET / HTTP/1.0\r\n\r\n", 18, MSG_NOSIGNAL) == 18, "send garbage");
	TAP_OK(strstr(raw_read(fd), "{\"error\":\"unknown request") != NULL, "gets an error line");

	fd = raw_connect();
	memset(chunk, 'A', sizeof(chunk));
	until = pl__mono_ns() + 3000000000u;
	while (sent < (1u << 20) && pl__mono_ns() < until) {
		struct pollfd p = { fd, POLLOUT, 0 };
		ssize_t n;

		poll(&p, 1, 100);
		n = send(fd, chunk, sizeof(chunk), MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0)
			sent += (size_t)n;
		else if (n < 0 && errno != EAGAIN)
			break; /* closed by the daemon */
	}
	TAP_OK(strstr(raw_read(fd), "{\"error\":\"request too long\"}") != NULL,
	       "1 MB without newline gets an error line (%zu bytes were taken)", sent);

	run(&r, argv);
	TAP_OK(r.status == 0 && strstr(r.out, "\"errors\":2"),
	       "the daemon serves the next client, and counted both errors");
}

static void test_lifecycle(void)
{
	static struct run r;
	struct stat sb;
	uint64_t t0;
	char text[32];
	pid_t pid;
	int nfd, st;
	char *argv[] = { (char *)perflinkd, "--foreground", "--config", empty_conf,
			 "--control-socket", ctl, "--pidfile", pidfile, NULL };

	nfd = notify_listener();
	pid = spawn(argv, notify_path);
	TAP_EQ_STR(notify_recv(nfd, 5000), "READY=1", "READY=1 on $NOTIFY_SOCKET");
	TAP_OK(stat(ctl, &sb) == 0 && S_ISSOCK(sb.st_mode) && (sb.st_mode & 0777) == 0660,
	       "the control socket is there when READY=1 is, mode 0660");
	snprintf(text, sizeof(text), "%ld\n", (long)pid);
	TAP_EQ_STR(read_file(pidfile), text, "the pid file holds its pid");

	/* A second daemon is refused, by the pid file or by the socket. */
	run(&r, argv);
	TAP_OK(r.status == 1 && strstr(r.err, "already runs"), "a second one with the same pid "
	       "file is refused (%s)", strtok(r.err, "\n"));
	{
		char other[128];
		char *argv2[] = { (char *)perflinkd, "--foreground", "--config", empty_conf,
				  "--control-socket", ctl, "--pidfile", other, NULL };

		path_in_dir(other, sizeof(other), "other.pid");
		run(&r, argv2);
		TAP_OK(r.status == 1 && strstr(r.err, "another perflinkd"),
		       "a second one on the same socket is refused (%s)", strtok(r.err, "\n"));
		TAP_OK(stat(other, &sb) < 0, "and removes its own pid file");
	}

	test_status();
	test_hostile_clients();

	TAP_OK(kill(pid, SIGHUP) == 0, "SIGHUP");
	{
		char *argv3[] = { (char *)perflink, "status", "--socket", ctl, NULL };

		run(&r, argv3);
		TAP_OK(r.status == 0, "it still runs after SIGHUP");
	}

	t0 = pl__mono_ns();
	TAP_OK(kill(pid, SIGTERM) == 0, "SIGTERM");
	st = wait_exit(pid, 1000);
	TAP_OK(st == 0, "exit 0 within a second (%d after %.0f ms)", st,
	       (double)(pl__mono_ns() - t0) / 1e6);
	if (st < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	TAP_EQ_STR(notify_recv(nfd, 1000), "STOPPING=1", "STOPPING=1 on $NOTIFY_SOCKET");
	TAP_OK(stat(ctl, &sb) < 0 && errno == ENOENT, "the control socket is removed");
	TAP_OK(stat(pidfile, &sb) < 0 && errno == ENOENT, "the pid file is removed");
	TAP_OK(strstr(read_file(errlog), "SIGHUP ignored") != NULL, "SIGHUP was logged as ignored");
	close(nfd);
	unlink(notify_path);

	run(&r, (char *[]){ (char *)perflink, "status", "--socket", ctl, NULL });
	TAP_OK(r.status == 1 && strstr(r.err, "no perflinkd is running"),
	       "perflink status says clearly that no daemon runs (%s)", strtok(r.err, "\n"));
}

/* The status answer flattened into flat (see flatten); false if none. */
static bool status_flat(char *flat)
{
	int fd = raw_connect();
	const char *a;

	flat[0] = '\0';
	if (send(fd, "status\n", 7, MSG_NOSIGNAL) != 7) {
		close(fd);
		return false;
	}
	a = raw_read(fd);
	return pl__json_walk(a, strlen(a), flatten, flat) == 0;
}

static unsigned long field(const char *flat, const char *path)
{
	char want[128];
	const char *p;

	snprintf(want, sizeof(want), "\n%s=", path);
	p = strstr(flat, want);
	return p ? strtoul(p + strlen(want), NULL, 10) : 0;
}

static unsigned count_lines(const char *path)
{
	const char *p = read_file(path);
	unsigned n = 0;

	for (; *p; p++)
		n += *p == '\n';
	return n;
}

/* The real tracer and sampler on their timerfds, and a sampler whose
 * output fails (/dev/full): that module stops, the daemon goes on. */
static void test_modules(void)
{
	static char flat[8192];
	char csv[128], jsonl[128], pids[32];
	uint64_t until;
	int nfd, st;
	pid_t pid;

	path_in_dir(csv, sizeof(csv), "trace.csv");
	path_in_dir(jsonl, sizeof(jsonl), "resources.jsonl");
	snprintf(pids, sizeof(pids), "%ld", (long)getpid());
	{
		char *argv[] = { (char *)perflinkd, "--foreground", "--config", empty_conf,
				 "--control-socket", ctl, "--trace", "--trace-hz=50", "--trace-out",
				 csv, "--resources", "--resources-interval=0.05",
				 "--resources-out", jsonl, "--resources-pids", pids, NULL };

		nfd = notify_listener();
		pid = spawn(argv, notify_path);
	}
	TAP_EQ_STR(notify_recv(nfd, 5000), "READY=1", "with both modules: READY=1");
	until = pl__mono_ns() + 5000000000u;
	while (status_flat(flat) && pl__mono_ns() < until &&
	       (field(flat, "modules.tracer.stats.ticks") < 3 ||
		field(flat, "modules.resources.stats.samples") < 3))
		poll(NULL, 0, 20);
	TAP_OK(strstr(flat, "\nmodules.tracer.state=running") &&
		       strstr(flat, "\nmodules.resources.state=running"),
	       "status shows both modules running");
	TAP_OK(field(flat, "modules.tracer.stats.ticks") >= 3 &&
		       field(flat, "modules.resources.stats.samples") >= 3,
	       "and their ticks counting (%lu tracer ticks, %lu samples)",
	       field(flat, "modules.tracer.stats.ticks"),
	       field(flat, "modules.resources.stats.samples"));
	TAP_OK(field(flat, "modules.resources.forwarded") >= 3,
	       "the sampler's lines are handed to the daemon");
	{
		/* the daemon raised its soft limit to the hard one */
		struct rlimit rl;
		unsigned long limit, sum = field(flat, "modules.tracer.stats.fd_budget") +
					   field(flat, "modules.resources.stats.fd_budget");

		getrlimit(RLIMIT_NOFILE, &rl);
		limit = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (1u << 20) ? 1u << 20
										  : rl.rlim_max;
		TAP_OK(field(flat, "modules.tracer.stats.fd_budget") > 0 &&
			       field(flat, "modules.resources.stats.fd_budget") > 0 &&
			       sum <= limit - 128,
		       "the two keep /proc descriptors within one budget: %lu of %lu", sum,
		       limit - 128);
	}
	kill(pid, SIGTERM);
	st = wait_exit(pid, 2000);
	TAP_OK(st == 0, "SIGTERM: exit 0 (%d)", st);
	TAP_EQ_STR(notify_recv(nfd, 1000), "STOPPING=1", "STOPPING=1");
	TAP_OK(count_lines(csv) >= 3, "the tracer's CSV was written and flushed (%u lines)",
	       count_lines(csv));
	TAP_OK(count_lines(jsonl) >= 3, "the sampler's JSON lines too (%u lines)",
	       count_lines(jsonl));

	{
		char *argv[] = { (char *)perflinkd, "--foreground", "--config", empty_conf,
				 "--control-socket", ctl, "--resources", "--resources-interval=0.05",
				 "--resources-out=/dev/full", NULL };

		pid = spawn(argv, notify_path);
	}
	TAP_EQ_STR(notify_recv(nfd, 5000), "READY=1", "a sampler that cannot write: READY=1");
	until = pl__mono_ns() + 5000000000u;
	while (status_flat(flat) && pl__mono_ns() < until &&
	       !strstr(flat, "\nmodules.resources.state=stopped"))
		poll(NULL, 0, 20);
	TAP_OK(strstr(flat, "\nmodules.resources.state=stopped") &&
		       strstr(flat, "\nmodules.resources.error=No space left on device"),
	       "its module stops, with the reason in status");
	TAP_OK(status_flat(flat) && strstr(flat, "\nversion="), "the daemon keeps running");
	kill(pid, SIGTERM);
	TAP_OK(wait_exit(pid, 2000) == 0, "and exits 0 on SIGTERM");
	TAP_EQ_STR(notify_recv(nfd, 1000), "STOPPING=1", "STOPPING=1");
	close(nfd);
	unlink(notify_path);

	{
		static struct run r;
		char bad[128];
		char *argv[] = { (char *)perflinkd, "--foreground", "--config", empty_conf,
				 "--control-socket", ctl, "--trace", "--trace-out", bad, NULL };

		path_in_dir(bad, sizeof(bad), "no/such/dir/trace.csv");
		run(&r, argv);
		TAP_OK(r.status == 1 && strstr(r.err, "not started"),
		       "a tracer that cannot open its output: perflinkd refuses to start");
	}
}

int main(int argc, char **argv)
{
	sigset_t chld;

	if (argc != 4) {
		fprintf(stderr, "usage: %s PERFLINKD PERFLINK EXAMPLE_CONF\n", argv[0]);
		return 2;
	}
	perflinkd = argv[1];
	perflink = argv[2];
	example = argv[3];
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	if (!mkdtemp(dir))
		abort();
	path_in_dir(ctl, sizeof(ctl), "run/control");
	path_in_dir(notify_path, sizeof(notify_path), "notify");
	path_in_dir(pidfile, sizeof(pidfile), "perflinkd.pid");
	path_in_dir(empty_conf, sizeof(empty_conf), "empty.conf");
	path_in_dir(errlog, sizeof(errlog), "stderr.log");
	write_file(empty_conf, "");

	test_settings();
	test_bad_config();
	test_lifecycle();
	test_modules();

	if (tap_failed == 0) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	} else {
		printf("# files kept in %s\n", dir);
	}
	return tap_done();
}
