/* pl_frame_published (include/perflink.h): a car renderer's
 * RenderPipelineSummary for renderers that annotate their frames. The arithmetic is
 * common/pipeline_summary.c; here are the process-wide state, the 5 s
 * period and where the summaries go (perflinkd as telemetry, and the file
 * named by PERFLINK_PIPELINE_OUT). The period that is running when the
 * process exits (or unloads the library) is summarised then, with its
 * shorter period_s: a run of a few seconds is not lost. */
#include "perflink.h"
#include "clock.h"
#include "json_writer.h"
#include "pipeline_summary.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pl_pipeline summary;
static bool started;
static pid_t owner; /* a forked child's copy of the parent's period is not its own */
static uint64_t period_start_ns;
/* Where the summaries go; opened lazily, at most one attempt per period. */
static struct pl_producer *daemon_conn;
static int out_fd = -2; /* -2: not tried yet */
static struct pl_json json;

static void open_outputs(void)
{
	/* secure_getenv: a set-user-ID program's caller must not choose
	 * where it writes */
	const char *path = secure_getenv("PERFLINK_PIPELINE_OUT");

	if (out_fd == -2) {
		out_fd = -1;
		if (path && *path) {
			/* a planted link is refused, not followed */
			out_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
				      0644);
			/* a bad value is said in its first 200 bytes: every
			 * process of a program that execs in a loop says it */
			if (out_fd < 0)
				fprintf(stderr, "perflink: PERFLINK_PIPELINE_OUT %.200s%s: %s; pipeline "
					"summaries go only to perflinkd\n", path,
					strlen(path) > 200 ? "..." : "", strerror(errno));
		}
	}
	if (!daemon_conn) {
		struct pl_producer_options o = { .name = "pipeline", .reply_bytes = 4096,
						 .telemetry_bytes = 64 * 1024 };

		if (pl_producer_open(&daemon_conn, &o) < 0)
			daemon_conn = NULL; /* no daemon is not an error: next period */
	}
}

/* Send the line; called with the lock held (the summaries are rare). */
static void emit(const char *line)
{
	size_t len = strlen(line);

	open_outputs();
	if (out_fd >= 0) {
		ssize_t n;

		do
			n = write(out_fd, line, len);
		while (n < 0 && errno == EINTR);
	}
	if (daemon_conn && pl_telemetry(daemon_conn, line) == -EPIPE) {
		pl_producer_close(daemon_conn);
		daemon_conn = NULL;
	}
}

/* Called with the lock held. */
static void report_period(uint64_t now)
{
	const char *line;

	pl__json_reset(&json);
	pl__pipeline_report(&summary, now - period_start_ns, now, &json);
	period_start_ns = now;
	if ((line = pl__json_finish(&json)))
		emit(line);
}

void pl_frame_published(uint64_t captured_ns, uint64_t submitted_ns, uint64_t published_ns,
			uint32_t camera_stream, uint64_t frame_id, uint64_t eof_ns)
{
	uint64_t now = pl__mono_ns();

	pthread_mutex_lock(&lock);
	if (!started) {
		pl__pipeline_init(&summary);
		pl__json_init(&json);
		started = true;
	}
	if (owner != getpid()) { /* the first frame here, or in a forked child */
		/* the parent's connection is the parent's: its rings have one
		 * writer. The child's copy is left, not closed (closing could
		 * say goodbye on the parent's behalf); the child connects anew. */
		if (owner != 0)
			daemon_conn = NULL;
		pl__pipeline_init(&summary);
		owner = getpid();
		period_start_ns = now;
	}
	pl__pipeline_add(&summary, captured_ns, submitted_ns, published_ns, camera_stream,
			 frame_id, eof_ns);
	if (now - period_start_ns >= PL_PIPELINE_PERIOD_NS)
		report_period(now);
	pthread_mutex_unlock(&lock);
}

/* At exit or unload: the period so far, if it has frames, to the file and
 * perflinkd (connected now if a run shorter than a period had not yet: a
 * daemon that does not answer holds the exit at most the 2 s
 * pl_producer_open allows). A thread still inside pl_frame_published
 * keeps the lock: then nothing is written rather than wait. */
__attribute__((destructor)) static void report_last_period(void)
{
	if (pthread_mutex_trylock(&lock) != 0)
		return;
	if (started && owner == getpid() && summary.frames > 0)
		report_period(pl__mono_ns());
	pthread_mutex_unlock(&lock);
}
