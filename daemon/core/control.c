/* See control.h. */
#include "control.h"
#include "accept_pause.h"
#include "control_peer.h"
#include "event_loop.h"

#include "clock.h"
#include "json_writer.h"
#include "log.h"
#include "unix_listen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define ACCEPTS_PER_WAKEUP 32

struct client {
	struct pl_control *c;
	int fd; /* -1: free slot */
	struct pl_loop_watch *w;
	uint64_t deadline_ns;
	char in[PL_CONTROL_REQUEST_MAX];
	size_t in_len;
	struct pl_json out; /* the answer, while it does not fit the socket */
	size_t out_off;
	bool answering;
};

struct pl_control {
	struct pl_loop *loop;
	char *path;
	int fd;
	bool bound; /* the socket file is ours to unlink */
	struct pl_loop_watch *listen_w, *sweep_w;
	struct pl__control_peer_policy policy;
	pl__control_status_fn status;
	void *status_ctx;
	uint64_t timeout_ns;
	struct pl_accept_pause pause; /* accept paused after EMFILE */
	bool sweeping;
	struct pl_control_stats stats;
	struct pl__ratelimit rl;
	unsigned max_clients;
	struct client *clients;
};

static void update_sweep(struct pl_control *c)
{
	bool want = c->stats.clients > 0 || c->pause.until_ns != 0;
	uint64_t period = c->timeout_ns / 4;

	if (want == c->sweeping)
		return;
	if (period < 10000000u)
		period = 10000000u;
	if (pl__loop_timer_set(c->sweep_w, want ? period : 0, period) == 0)
		c->sweeping = want;
}

static void client_close(struct client *cl)
{
	struct pl_control *c = cl->c;

	pl__loop_remove(cl->w);
	cl->w = NULL;
	close(cl->fd);
	cl->fd = -1;
	pl__json_free(&cl->out);
	cl->out_off = 0;
	cl->in_len = 0;
	cl->answering = false;
	c->stats.clients--;
	update_sweep(c);
}

/* Write what the socket takes; 1 when all is out, 0 to wait, -errno. */
static int flush(struct client *cl)
{
	while (cl->out_off < cl->out.len) {
		ssize_t n = send(cl->fd, cl->out.buf + cl->out_off, cl->out.len - cl->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		cl->out_off += (size_t)n;
	}
	return 1;
}

/* Send cl->out (already finished) and close once it is out. */
static void answer(struct client *cl)
{
	int ret;

	cl->answering = true;
	cl->out_off = 0;
	ret = flush(cl);
	if (ret != 0 || pl__loop_mod_fd(cl->w, EPOLLOUT) < 0)
		client_close(cl);
}

static void answer_error(struct client *cl, const char *msg)
{
	pl__json_reset(&cl->out);
	pl__json_begin_object(&cl->out, NULL);
	pl__json_str(&cl->out, "error", msg);
	pl__json_end_object(&cl->out);
	if (!pl__json_finish(&cl->out)) {
		client_close(cl);
		return;
	}
	answer(cl);
}

static void answer_status(struct client *cl)
{
	struct pl_control *c = cl->c;
	int ret;

	pl__json_reset(&cl->out);
	/* Counted first so that the answer counts itself. */
	c->stats.served++;
	ret = c->status(c->status_ctx, &cl->out);
	if (ret < 0 || !pl__json_finish(&cl->out) || cl->out.len > PL_CONTROL_ANSWER_MAX) {
		pl__log_warnx_limited(&c->rl, "control: could not build the status answer");
		c->stats.served--;
		c->stats.errors++;
		answer_error(cl, "internal error: status unavailable");
		return;
	}
	answer(cl);
}

static void handle_line(struct client *cl, size_t len)
{
	struct pl_control *c = cl->c;
	size_t i;

	if (len > 0 && cl->in[len - 1] == '\r')
		len--;
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)cl->in[i];

		if (ch < 0x20 || ch > 0x7e) {
			c->stats.errors++;
			answer_error(cl, "malformed request: not printable ASCII");
			return;
		}
	}
	if (len == 6 && memcmp(cl->in, "status", 6) == 0) {
		answer_status(cl);
		return;
	}
	c->stats.errors++;
	answer_error(cl, "unknown request (known: status)");
}

static void on_client(void *ctx, int fd, uint32_t events)
{
	struct client *cl = ctx;
	char *nl;
	ssize_t n;

	if (cl->answering) {
		if (events & (EPOLLERR | EPOLLHUP) || flush(cl) != 0)
			client_close(cl);
		return;
	}
	do
		n = recv(fd, cl->in + cl->in_len, sizeof(cl->in) - cl->in_len, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			client_close(cl);
		return;
	}
	if (n == 0) {
		if (cl->in_len == 0) {
			client_close(cl);
			return;
		}
		cl->c->stats.errors++;
		answer_error(cl, "malformed request: no newline before end of input");
		return;
	}
	nl = memchr(cl->in + cl->in_len, '\n', (size_t)n);
	cl->in_len += (size_t)n;
	if (nl) {
		handle_line(cl, (size_t)(nl - cl->in));
		return;
	}
	if (cl->in_len == sizeof(cl->in)) {
		cl->c->stats.errors++;
		answer_error(cl, "request too long");
	}
}

/* Best effort: one short line to a connection we drop. A fresh connection's
 * socket buffer always has room for it; a stalled one may not, and then the
 * line is lost, which is fine for a client that stopped reading. */
static void send_line(int fd, const char *line)
{
	ssize_t n;

	do
		n = send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
}

static void turn_away(int fd, const char *line)
{
	send_line(fd, line);
	close(fd);
}

static struct client *free_slot(struct pl_control *c)
{
	unsigned i;

	for (i = 0; i < c->max_clients; i++) {
		if (c->clients[i].fd < 0)
			return &c->clients[i];
	}
	return NULL;
}

static void accept_one(struct pl_control *c, int fd)
{
	struct pl__control_peer peer = { .pid = -1, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	struct client *cl;

	if (pl__control_peer_get(fd, &peer) < 0 ||
	    !pl__control_peer_allowed(&c->policy, &peer)) {
		c->stats.refused++;
		pl__log_warnx_limited(&c->rl, "control: refused uid %ld (pid %ld)",
				      (long)peer.uid, (long)peer.pid);
		turn_away(fd, "{\"error\":\"permission denied: not root, perflinkd's user or "
			      "in its control-group\"}\n");
		return;
	}
	cl = free_slot(c);
	if (!cl) {
		c->stats.busy++;
		pl__log_warnx_limited(&c->rl, "control: %u clients already, turning one away",
				      c->max_clients);
		turn_away(fd, "{\"error\":\"busy: too many clients\"}\n");
		return;
	}
	if (pl__loop_add_fd(c->loop, fd, EPOLLIN, on_client, cl, &cl->w) < 0) {
		close(fd);
		return;
	}
	cl->fd = fd;
	cl->in_len = 0;
	cl->answering = false;
	cl->deadline_ns = pl__mono_ns() + c->timeout_ns;
	c->stats.clients++;
	update_sweep(c);
}

static void on_listen(void *ctx, int lfd, uint32_t events)
{
	struct pl_control *c = ctx;
	int i, fd;

	(void)events;
	for (i = 0; i < ACCEPTS_PER_WAKEUP; i++) {
		do
			fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		while (fd < 0 && errno == EINTR);
		if (fd >= 0) {
			accept_one(c, fd);
			continue;
		}
		if (pl__accept_pause_begin(&c->pause, c->listen_w, errno, "control", &c->rl))
			update_sweep(c); /* the sweep ends the pause */
		return;
	}
}

static void on_sweep(void *ctx, uint64_t expirations)
{
	struct pl_control *c = ctx;
	uint64_t now = pl__mono_ns();
	unsigned i;

	(void)expirations;
	for (i = 0; i < c->max_clients; i++) {
		struct client *cl = &c->clients[i];

		if (cl->fd < 0 || now < cl->deadline_ns)
			continue;
		c->stats.timeouts++;
		if (!cl->answering)
			send_line(cl->fd, "{\"error\":\"timeout: no request line in time\"}\n");
		client_close(cl);
	}
	pl__accept_pause_check(&c->pause, c->listen_w, now);
	update_sweep(c);
}

static int bind_socket(struct pl_control *c)
{
	int fd = pl__unix_listen(c->path, SOCK_STREAM, c->policy.has_group, c->policy.gid,
				 "control-socket");

	if (fd < 0)
		return fd;
	c->fd = fd;
	c->bound = true;
	return 0;
}

int pl__control_open(struct pl_control **out, struct pl_loop *loop,
		     const struct pl_control_config *cfg)
{
	struct pl_control *c = calloc(1, sizeof(*c));
	struct pl__ratelimit rl = PL_RATELIMIT_INIT(1000);
	unsigned i;
	int ret = -ENOMEM;

	if (!c) {
		pl__log_warnx("control: out of memory");
		return -ENOMEM;
	}
	c->fd = -1;
	c->loop = loop;
	c->rl = rl;
	c->status = cfg->status;
	c->status_ctx = cfg->status_ctx;
	c->max_clients = cfg->max_clients ? cfg->max_clients : PL_CONTROL_CLIENTS_MAX;
	c->timeout_ns = (uint64_t)(cfg->timeout_ms ? cfg->timeout_ms : PL_CONTROL_TIMEOUT_MS) *
			1000000u;
	c->path = strdup(cfg->path ? cfg->path : PL_CONTROL_SOCKET_DEFAULT);
	c->clients = calloc(c->max_clients, sizeof(*c->clients));
	if (!c->path || !c->clients) {
		pl__log_warnx("control: out of memory");
		goto fail;
	}
	for (i = 0; i < c->max_clients; i++) {
		c->clients[i].c = c;
		c->clients[i].fd = -1;
	}
	ret = pl__control_peer_policy_init(&c->policy, cfg->group);
	if (ret < 0)
		goto fail;
	ret = bind_socket(c);
	if (ret < 0)
		goto fail;
	ret = pl__loop_add_fd(loop, c->fd, EPOLLIN, on_listen, c, &c->listen_w);
	if (ret == 0)
		ret = pl__loop_add_timer(loop, 0, 0, on_sweep, c, &c->sweep_w);
	if (ret < 0) {
		pl__log_warnx("control: event loop: %s", strerror(-ret));
		goto fail;
	}
	*out = c;
	return 0;

fail:
	pl__control_close(c);
	return ret;
}

void pl__control_get_stats(const struct pl_control *c, struct pl_control_stats *out)
{
	*out = c->stats;
}

void pl__control_close(struct pl_control *c)
{
	unsigned i;

	if (!c)
		return;
	for (i = 0; c->clients && i < c->max_clients; i++) {
		if (c->clients[i].fd >= 0)
			client_close(&c->clients[i]);
	}
	pl__loop_remove(c->listen_w);
	pl__loop_remove(c->sweep_w);
	if (c->fd >= 0)
		close(c->fd);
	if (c->bound && unlink(c->path) < 0 && errno != ENOENT)
		pl__log_warn("control: unlink %s", c->path);
	pl__control_peer_policy_free(&c->policy);
	free(c->clients);
	free(c->path);
	free(c);
}
