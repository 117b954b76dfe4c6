/* The control socket on a real unix socket: the status answer, the error
 * lines for malformed, oversized and unknown requests, clients that are slow
 * or never finish, too many clients, peer credentials (with real other uids
 * when run as root), and the socket file's life. The loop is stepped by the
 * test so that every client here is also proof that the loop was not
 * blocked by the others. */
#include "control.h"
#include "control_peer.h"
#include "event_loop.h"
#include "stderr_capture.h"
#include "tap.h"

#include "clock.h"
#include "json_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>


/* The calls under test log why they fail; these keep what they logged in
 * err, for the checks to read. */
static int control_open(struct pl_control **c, struct pl_loop *loop,
			const struct pl_control_config *cfg, char *err, size_t errlen)
{
	struct stderr_capture cap;
	int ret;

	capture_begin(&cap);
	ret = pl__control_open(c, loop, cfg);
	capture_end_line(&cap, err, errlen);
	return ret;
}

static int policy_init(struct pl__control_peer_policy *p, const char *group, char *err,
		       size_t errlen)
{
	struct stderr_capture cap;
	int ret;

	capture_begin(&cap);
	ret = pl__control_peer_policy_init(p, group);
	capture_end_line(&cap, err, errlen);
	return ret;
}

static struct pl_loop *loop;
static char sock_path[100];
static const char *test_dir;
static size_t big_answer; /* when set, the status answer has this many bytes of padding */
static bool fail_status;
static unsigned status_calls;

static int status(void *ctx, struct pl_json *j)
{
	(void)ctx;
	status_calls++;
	if (fail_status)
		return -EIO;
	pl__json_begin_object(j, NULL);
	pl__json_str(j, "hello", "world");
	pl__json_u64(j, "n", status_calls);
	if (big_answer) {
		char *pad = malloc(big_answer + 1);

		memset(pad, 'p', big_answer);
		pad[big_answer] = '\0';
		pl__json_str(j, "pad", pad);
		free(pad);
	}
	pl__json_end_object(j);
	return 0;
}

static int client(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Read until EOF, stepping the loop; NULL after 3 s. The caller frees. */
static char *read_all(int fd)
{
	uint64_t until = pl__mono_ns() + 3000000000u;
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);

	while (pl__mono_ns() < until) {
		ssize_t n = recv(fd, buf + len, cap - 1 - len, MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno == ECONNRESET && len > 0)) {
			buf[len] = '\0';
			return buf;
		}
		if (n > 0) {
			len += (size_t)n;
			if (len == cap - 1)
				buf = realloc(buf, cap *= 2);
			continue;
		}
		if (errno != EAGAIN)
			break;
		pl__loop_run_once(loop, 10);
	}
	free(buf);
	return NULL;
}

static char *ask(const char *request, size_t len)
{
	int fd = client();
	char *answer;

	if (fd < 0)
		return NULL;
	if (send(fd, request, len, MSG_NOSIGNAL) != (ssize_t)len) {
		close(fd);
		return NULL;
	}
	answer = read_all(fd);
	close(fd);
	return answer;
}

/* An answer for a TAP message: one line. */
static const char *oneline(const char *a)
{
	static char buf[128];
	size_t i;

	snprintf(buf, sizeof(buf), "%s", a ? a : "(nothing)");
	for (i = 0; buf[i]; i++) {
		if (buf[i] == '\n')
			buf[i] = ' ';
	}
	return buf;
}

static bool has(const char *answer, const char *what)
{
	return answer && strstr(answer, what) != NULL;
}

static void test_requests(void)
{
	char *a;

	a = ask("status\n", 7);
	TAP_EQ_STR(a, "{\"hello\":\"world\",\"n\":1}\n", "status: one JSON line, then EOF");
	free(a);
	a = ask("status\r\n", 8);
	TAP_OK(has(a, "\"hello\":\"world\""), "a CRLF line is fine too");
	free(a);
	a = ask("bogus\n", 6);
	TAP_OK(has(a, "{\"error\":\"unknown request"), "unknown request: error line (%s)", oneline(a));
	free(a);
	a = ask("sta\001tus\n", 8);
	TAP_OK(has(a, "{\"error\":\"malformed request"), "control bytes: error line (%s)", oneline(a));
	free(a);
	a = ask("\n", 1);
	TAP_OK(has(a, "unknown request"), "empty line: error line");
	free(a);
	a = ask("status\nstatus\n", 14);
	TAP_OK(a && has(a, "\"hello\"") && strchr(a, '\n') == a + strlen(a) - 1,
	       "one request per connection: one answer line");
	free(a);
	fail_status = true;
	a = ask("status\n", 7);
	TAP_OK(has(a, "{\"error\":\"internal error"), "a failing status callback: error line");
	free(a);
	fail_status = false;
}

static void test_eof_without_newline(void)
{
	int fd = client();
	char *a;

	TAP_OK(fd >= 0 && send(fd, "status", 6, 0) == 6 && shutdown(fd, SHUT_WR) == 0,
	       "send a request without newline, then EOF");
	a = read_all(fd);
	TAP_OK(has(a, "no newline"), "error line (%s)", oneline(a));
	free(a);
	close(fd);
}

/* A megabyte without a newline: the daemon reads what a request may be,
 * answers with an error and closes, however much the client still sends. */
static void test_oversized(void)
{
	static char chunk[65536];
	uint64_t until = pl__mono_ns() + 3000000000u;
	size_t sent = 0;
	int fd = client();
	char *a;

	memset(chunk, 'A', sizeof(chunk));
	while (sent < (1u << 20) && pl__mono_ns() < until) {
		ssize_t n = send(fd, chunk, sizeof(chunk), MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			sent += (size_t)n;
		} else if (n < 0 && errno == EAGAIN) {
			pl__loop_run_once(loop, 10);
		} else {
			break; /* the daemon closed: EPIPE */
		}
	}
	a = read_all(fd);
	TAP_OK(has(a, "{\"error\":\"request too long\"}"), "1 MB without newline: error line (%s)",
	       oneline(a));
	free(a);
	close(fd);
	a = ask("status\n", 7);
	TAP_OK(has(a, "\"hello\""), "the next client is served");
	free(a);
}

/* An answer far larger than a socket buffer, to a client that does not read
 * for a while: the loop goes on serving others meanwhile. */
static void test_slow_reader(void)
{
	int fd = client(), i;
	char *a, *other;

	big_answer = 3u << 20;
	TAP_OK(fd >= 0 && send(fd, "status\n", 7, 0) == 7, "slow client asks for a 3 MB answer");
	for (i = 0; i < 20; i++)
		pl__loop_run_once(loop, 5);
	big_answer = 0;
	other = ask("status\n", 7);
	TAP_OK(has(other, "\"hello\""), "another client is served while the slow one is stuck");
	free(other);
	a = read_all(fd);
	TAP_OK(a && strlen(a) > (3u << 20) && a[strlen(a) - 1] == '\n' &&
		       has(a, "\"pad\":\"ppp"),
	       "the slow client gets the whole answer (%zu bytes)", a ? strlen(a) : 0);
	free(a);
	close(fd);
}

static void test_timeout_and_busy(struct pl_control *c, unsigned max_clients)
{
	struct pl_control_stats st, st0;
	int idle[PL_CONTROL_CLIENTS_MAX], extra;
	unsigned i;
	char *a;

	pl__control_get_stats(c, &st0);
	for (i = 0; i < max_clients; i++)
		idle[i] = client();
	for (i = 0; i < 10; i++)
		pl__loop_run_once(loop, 1);
	pl__control_get_stats(c, &st);
	TAP_EQ_U64(st.clients, max_clients, "idle clients fill every slot");
	extra = client();
	a = read_all(extra);
	TAP_OK(has(a, "{\"error\":\"busy"), "one more is turned away: busy (%s)", oneline(a));
	free(a);
	close(extra);
	for (i = 0; i < max_clients; i++) {
		a = read_all(idle[i]);
		if (i == 0)
			TAP_OK(has(a, "{\"error\":\"timeout"), "an idle client is dropped with "
			       "a timeout line (%s)", oneline(a));
		free(a);
		close(idle[i]);
	}
	pl__control_get_stats(c, &st);
	TAP_EQ_U64(st.timeouts - st0.timeouts, max_clients, "all of them timed out");
	TAP_EQ_U64(st.busy - st0.busy, 1, "one was busy");
	TAP_EQ_U64(st.clients, 0, "no client left");
	a = ask("status\n", 7);
	TAP_OK(has(a, "\"hello\""), "and the daemon serves again");
	free(a);
}

/* Out of descriptors, the control socket stops watching its listener for a
 * second (daemon/core/accept_pause.c) instead of spinning on it: a client
 * whose accept fails with EMFILE leaves the loop idle, and is served once
 * descriptors are free again. */
static void test_out_of_fds(void)
{
	struct rlimit old, low;
	uint64_t start, until;
	unsigned turns = 0;
	int fd, next;
	char *a;

	if (getrlimit(RLIMIT_NOFILE, &old) < 0 || (next = dup(0)) < 0)
		abort();
	close(next);
	/* the client's socket takes the next descriptor, accept the one after */
	low = old;
	low.rlim_cur = (rlim_t)next + 1;
	if (setrlimit(RLIMIT_NOFILE, &low) < 0)
		abort();
	fd = client();
	TAP_OK(fd >= 0, "a client connects while the daemon is out of descriptors");
	start = pl__mono_ns();
	for (until = start + 300000000u; pl__mono_ns() < until; turns++)
		pl__loop_run_once(loop, 10);
	setrlimit(RLIMIT_NOFILE, &old);
	/* a spinning loop turns thousands of times in 300 ms; a paused one
	 * waits out its 10 ms timeouts (about 30) */
	TAP_OK(turns < 200, "the failing accept pauses the listener: %u loop turns in 300 ms",
	       turns);
	if (send(fd, "status\n", 7, MSG_NOSIGNAL) != 7)
		TAP_OK(0, "the client sends its request");
	a = read_all(fd);
	TAP_OK(has(a, "\"hello\""), "with descriptors free, it is served after the pause (%s)",
	       oneline(a));
	free(a);
	close(fd);
}

static void test_policy(void)
{
	struct pl__control_peer_policy p;
	struct pl__control_peer peer = { .pid = 1, .uid = 1000, .gid = 1000, .ngroups = 0 };
	char err[256] = "";

	TAP_OK(policy_init(&p, NULL, err, sizeof(err)) == 0, "no group");
	TAP_OK(!pl__control_peer_allowed(&p, &peer) || geteuid() == 1000, "a stranger is refused");
	peer.uid = 0;
	TAP_OK(pl__control_peer_allowed(&p, &peer), "root is allowed");
	peer.uid = geteuid();
	TAP_OK(pl__control_peer_allowed(&p, &peer), "our own uid is allowed");
	pl__control_peer_policy_free(&p);

	TAP_OK(policy_init(&p, "4242", err, sizeof(err)) == 0,
	       "a group by number need not exist");
	peer.uid = 4343;
	peer.gid = 4242;
	TAP_OK(pl__control_peer_allowed(&p, &peer), "member by primary gid");
	peer.gid = 100;
	peer.ngroups = 2;
	peer.groups[0] = 5;
	peer.groups[1] = 4242;
	TAP_OK(pl__control_peer_allowed(&p, &peer), "member by supplementary group");
	peer.groups[1] = 6;
	TAP_OK(!pl__control_peer_allowed(&p, &peer), "not a member");
	pl__control_peer_policy_free(&p);

	TAP_OK(policy_init(&p, "no-such-group-pl", err, sizeof(err)) == -ENOENT,
	       "an unknown group name is an error");
	TAP_OK(strstr(err, "no-such-group-pl") != NULL, "that names it (%s)", err);
	if (getgrnam("root")) {
		TAP_OK(policy_init(&p, "root", err, sizeof(err)) == 0 &&
			       p.has_group && p.gid == 0,
		       "a group by name");
		pl__control_peer_policy_free(&p);
	}
}

/* In a child with other credentials: 0 when the answer contains want. */
static int child_asks(uid_t uid, gid_t gid, gid_t supplementary, const char *want)
{
	struct timeval tv = { 3, 0 };
	char buf[512];
	ssize_t n, len = 0;
	int fd;

	if (setgroups(supplementary ? 1 : 0, &supplementary) < 0 || setgid(gid) < 0 ||
	    setuid(uid) < 0)
		_exit(3);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	{
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock_path);
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
			_exit(4);
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	/* A refused peer may find the connection closed before it sends:
	 * the refusal line is still there to read. */
	if (send(fd, "status\n", 7, MSG_NOSIGNAL) != 7 && errno != EPIPE)
		_exit(5);
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - (size_t)len)) > 0)
		len += n;
	buf[len] = '\0';
	_exit(strstr(buf, want) ? 0 : 6);
}

static int run_child(uid_t uid, gid_t gid, gid_t supplementary, const char *want)
{
	uint64_t until = pl__mono_ns() + 5000000000u;
	pid_t pid = fork();
	int st;

	if (pid == 0)
		child_asks(uid, gid, supplementary, want);
	while (pl__mono_ns() < until) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
		pl__loop_run_once(loop, 10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return 99;
}

static void test_other_users(void)
{
	struct pl_control_config cfg = { .path = sock_path, .group = "4242", .status = status };
	struct pl_control *c;
	char err[256];
	int st;

	if (geteuid() != 0) {
		TAP_SKIP("peer credentials of other users: needs root to become them");
		return;
	}
	/* mkdtemp made the test's directory 0700: let others reach the socket
	 * so that only its own mode and the credential check decide. */
	chmod(test_dir, 0755);
	TAP_OK(control_open(&c, loop, &cfg, err, sizeof(err)) == 0, "open with group 4242");
	{
		struct stat sb;

		TAP_OK(stat(sock_path, &sb) == 0 && sb.st_gid == 4242 && (sb.st_mode & 0777) == 0660,
		       "socket is 0660 and owned by the group");
	}
	st = run_child(65534, 65534, 0, "");
	TAP_EQ_U64(st, 4, "a stranger cannot even connect: the file mode says no");
	/* Open the file up so that the credential check itself is what
	 * refuses. */
	chmod(sock_path, 0666);
	st = run_child(65534, 65534, 0, "{\"error\":\"permission denied");
	TAP_EQ_U64(st, 0, "a stranger gets a refusal line from SO_PEERCRED");
	st = run_child(65534, 4242, 0, "\"hello\"");
	TAP_EQ_U64(st, 0, "a member by primary group is served");
	st = run_child(65534, 65534, 4242, "\"hello\"");
	TAP_EQ_U64(st, 0, "a member by supplementary group is served");
	pl__control_close(c);
}

/* A control socket in a directory others may write to, or that another user
 * owns: refused, with the reason, since that user could swap the socket
 * under perflinkd. */
static void test_untrusted_dirs(struct pl_loop *l, struct pl_control_config *cfg,
				const char *dir)
{
	char shared[300], path[340], err[512];
	struct pl_control *c = NULL;

	snprintf(shared, sizeof(shared), "%s/shared", dir);
	snprintf(path, sizeof(path), "%s/control", shared);
	mkdir(shared, 0700);
	chmod(shared, 01777);
	cfg->path = path;
	cfg->group = NULL;
	TAP_OK(control_open(&c, l, cfg, err, sizeof(err)) == -EPERM && strstr(err, "others may write"),
	       "a directory others may write to (1777) is refused: %s", err);
	if (geteuid() == 0) {
		chmod(shared, 0755);
		if (chown(shared, 65534, 65534) < 0)
			abort();
		TAP_OK(control_open(&c, l, cfg, err, sizeof(err)) == -EPERM &&
			       strstr(err, "belongs to uid 65534"),
		       "a directory another user owns is refused: %s", err);
	} else {
		TAP_SKIP("not root: cannot give a directory to another user");
	}
	rmdir(shared);
}

int main(void)
{
	char dir[] = "/tmp/pl-test-control-XXXXXX";
	struct pl_control_config cfg = { .status = status, .timeout_ms = 300, .max_clients = 4 };
	struct pl_control *c, *c2;
	char err[256] = "";
	struct stat sb;
	int fd;

	if (!mkdtemp(dir) || pl__loop_new(&loop) < 0)
		abort();
	test_dir = dir;
	/* A subdirectory that does not exist yet: the daemon makes it. */
	snprintf(sock_path, sizeof(sock_path), "%s/run/control", dir);
	cfg.path = sock_path;

	TAP_OK(control_open(&c, loop, &cfg, err, sizeof(err)) == 0, "open (%s)", err);
	TAP_OK(stat(sock_path, &sb) == 0 && S_ISSOCK(sb.st_mode) && (sb.st_mode & 0777) == 0660,
	       "a socket, mode 0660 (%o)", sb.st_mode & 0777);
	TAP_OK(control_open(&c2, loop, &cfg, err, sizeof(err)) == -EADDRINUSE &&
		       strstr(err, "another perflinkd"),
	       "a second daemon on the same socket is refused (%s)", err);
	TAP_OK(stat(sock_path, &sb) == 0, "and the first one's socket is still there");

	test_requests();
	test_eof_without_newline();
	test_oversized();
	/* The timeout bounds a connection's whole life: give the slow reader
	 * more than the 300 ms the timeout test wants, so that a slow machine
	 * (valgrind) does not cut its answer short. */
	pl__control_close(c);
	cfg.timeout_ms = 20000;
	TAP_OK(control_open(&c, loop, &cfg, err, sizeof(err)) == 0, "reopened, 20 s timeout");
	test_slow_reader();
	pl__control_close(c);
	cfg.timeout_ms = 300;
	TAP_OK(control_open(&c, loop, &cfg, err, sizeof(err)) == 0, "reopened, 300 ms timeout");
	test_timeout_and_busy(c, cfg.max_clients);
	{
		struct pl_control_stats st;

		pl__control_get_stats(c, &st);
		TAP_OK(st.served == 1 && st.errors == 0 && st.busy == 1 && st.timeouts == 4,
		       "stats count answers (%llu) and errors (%llu) since the reopen",
		       (unsigned long long)st.served, (unsigned long long)st.errors);
	}
	test_out_of_fds();
	pl__control_close(c);
	TAP_OK(stat(sock_path, &sb) < 0 && errno == ENOENT, "close removes the socket file");

	/* A socket left by a daemon that died (bound, nobody listening). */
	{
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock_path);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		TAP_OK(bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0, "a stale socket file");
		close(fd);
	}
	TAP_OK(control_open(&c, loop, &cfg, err, sizeof(err)) == 0, "is taken over (%s)", err);
	pl__control_close(c);
	fd = open(sock_path, O_CREAT | O_WRONLY, 0600);
	close(fd);
	TAP_OK(control_open(&c, loop, &cfg, err, sizeof(err)) == -EEXIST &&
		       strstr(err, "not a socket"),
	       "a regular file there is left alone (%s)", err);
	TAP_OK(stat(sock_path, &sb) == 0 && S_ISREG(sb.st_mode), "and still exists");
	unlink(sock_path);
	cfg.group = "no-such-group-pl";
	TAP_OK(control_open(&c, loop, &cfg, err, sizeof(err)) == -ENOENT &&
		       strstr(err, "control-group"),
	       "an unknown control-group is an error (%s)", err);

	test_untrusted_dirs(loop, &cfg, dir);
	test_policy();
	test_other_users();

	pl__loop_free(loop);
	unlink(sock_path);
	snprintf(sock_path, sizeof(sock_path), "%s/run", dir);
	rmdir(sock_path);
	rmdir(dir);
	return tap_done();
}
