/* Reports to perflinkd's collector (common/ipc/producer_proto.h), which sends
 * them to the host over the link. The preload library is a telemetry-only
 * producer, connected lazily from the reporter thread.
 *
 * No daemon is not an error: the connection is tried again at most every
 * RETRY_NS, quietly. A full ring drops the report and counts it (the next
 * report that gets through says how many were lost); nothing here blocks
 * the target's threads, only the reporter's and the sampler's, which both
 * send here (one lock: they send a few lines a second at most). */
#include "report_daemon.h"
#include "clock.h"
#include "diag.h"
#include "perflink.h"
#include "own_fds.h"
#include "producer_fork.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define RETRY_NS (10ull * 1000 * 1000 * 1000)
/* 1 MiB (the most perflinkd grants): a render window of deep C++ stacks
 * (LLVM's, in Mesa's shader compiler) makes a line of several hundred KiB */
#define RING_BYTES (1024u * 1024)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char socket_path[PL_SUN_PATH_MAX];
static struct pl_producer *conn;
static uint64_t next_try_ns;
static uint64_t dropped;
static bool said_connected;
static bool said_taken;

void pl__report_daemon_init(const struct pl_settings *s)
{
	memcpy(socket_path, s->daemon_socket, sizeof(socket_path));
	/* the connection's socket is the shim's: the target's close hooks
	 * leave it alone (own_fds.h) */
	pl__producer_fd_watch = pl__own_fd_watch;
	/* and it is never written to after the hello: perflinkd polls */
	pl__producer_polled = true;
}

static bool connected(void)
{
	uint64_t now = pl__mono_ns();
	struct pl_producer_options o = { .socket_path = socket_path,
					 .name = program_invocation_short_name,
					 .telemetry_bytes = RING_BYTES,
					 .reply_bytes = 4096 };
	int ret;

	/* The connection's descriptor is checked before every use: a target
	 * that closed every descriptor (close_range, closefrom, a close loop)
	 * may have one of its own under that number now, which must be neither
	 * written to nor closed. */
	if (conn && !pl__producer_still_ours(conn)) {
		pl__producer_forget(conn);
		conn = NULL;
		next_try_ns = 0;
		if (!said_taken) {
			said_taken = true;
			pl__diag("the target closed the connection to perflinkd; reports go on "
				 "through a new one");
		}
	}
	if (conn && pl_producer_check(conn) == 0)
		return true;
	if (conn) {
		pl_producer_close(conn);
		conn = NULL;
		pl__diag("perflinkd went away; reports go to it again when it is back");
		next_try_ns = now + RETRY_NS;
	}
	if (now < next_try_ns)
		return false;
	next_try_ns = now + RETRY_NS;
	ret = pl_producer_open(&conn, &o);
	if (ret == -EBADF) {
		/* the target closed every descriptor while this one was being
		 * connected, before the shim could call it its own: try again
		 * with the next report */
		conn = NULL;
		next_try_ns = 0;
		return false;
	}
	if (ret < 0) {
		conn = NULL;
		/* Missing or refusing daemons are normal; anything else is said once. */
		if (ret != -ENOENT && ret != -ECONNREFUSED && !said_connected)
			pl__diag("cannot hand reports to perflinkd at %s (error %d)", socket_path,
				 -ret);
		return false;
	}
	said_connected = true;
	return true;
}

bool pl__report_daemon_enabled(void)
{
	return socket_path[0] != '\0';
}

uint64_t pl__report_daemon_dropped(void)
{
	uint64_t n;

	pthread_mutex_lock(&lock);
	n = dropped;
	pthread_mutex_unlock(&lock);
	return n;
}

bool pl__report_daemon_send(const char *json_line)
{
	bool kept = true;

	if (!socket_path[0])
		return true;
	pthread_mutex_lock(&lock);
	if (connected() && pl_telemetry(conn, json_line) < 0) {
		dropped++;
		kept = false;
	}
	pthread_mutex_unlock(&lock);
	return kept;
}

size_t pl__report_daemon_line_max(void)
{
	return RING_BYTES / 2;
}

void pl__report_daemon_fork_child(void)
{
	/* The lock may have been held by a thread the child does not have. */
	pthread_mutex_init(&lock, NULL);
	if (conn && pl__producer_still_ours(conn))
		pl__producer_abandon(conn);
	else
		pl__producer_forget(conn);
	conn = NULL;
	next_try_ns = 0;
	dropped = 0;
}
