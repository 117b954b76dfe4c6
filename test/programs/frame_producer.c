/* A camera-like application using libperflink: it writes frames straight
 * into perflinkd's shared memory at a steady rate and reads the host's
 * replies, then says what happened. The demo and the end-to-end tests run
 * it; it is also the smallest example of the API (include/perflink.h).
 *
 *   frame_producer [--socket PATH] [--frames N] [--bytes B] [--fps F]
 *                  [--wait-replies S] [--pipeline] [--keep-every-frame]
 *
 * --keep-every-frame: PL_PRODUCER_KEEP_EVERY_FRAME (frames wait for the
 * link instead of being replaced; the producer slows down).
 *
 * Prints one line: frames N committed N queued N sent N held N not_sent N
 * lost N replies N bad_replies N, the stats as they are once the replies
 * were waited for (queued: committed, not taken by perflinkd yet; with
 * --wait-replies 0, read right after the last commit). A reply is good
 * when it is the host's echo of the frame or its 16-byte ack; exit 0 when
 * every frame was answered, 3 as soon as perflinkd went away. */
#include "perflink.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fill(uint8_t *buf, size_t len, uint64_t frame)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(frame * 31 + i);
}

static uint64_t replies, bad_replies;
static uint8_t reply[1 << 20];

static void read_replies(struct pl_producer *p, size_t frame_bytes)
{
	uint64_t id;
	size_t len;

	pl_producer_ack_fd(p);
	while (pl_reply_read(p, &id, reply, sizeof(reply), &len) == 1) {
		bool echo = len == frame_bytes;

		for (size_t i = 0; echo && i < len; i++)
			echo = reply[i] == (uint8_t)(id * 31 + i);
		if (echo || len == 16)
			replies++;
		else
			bad_replies++;
	}
}

int main(int argc, char **argv)
{
	struct pl_producer_options o = { .name = "frame_producer", .frame_slots = 4,
					 .frame_bytes = 65536, .reply_bytes = 1 << 20 };
	struct pl_producer_stats st;
	struct pl_producer *p;
	long frames = 100;
	double fps = 30, wait_s = 5;
	bool pipeline = false;
	uint64_t next, period;
	int ret;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--pipeline")) {
			pipeline = true;
			continue;
		}
		if (!strcmp(a, "--keep-every-frame")) {
			o.flags |= PL_PRODUCER_KEEP_EVERY_FRAME;
			continue;
		}
		if (!v) {
			fprintf(stderr, "frame_producer: %s needs a value\n", a);
			return 2;
		}
		i++;
		if (!strcmp(a, "--socket"))
			o.socket_path = v;
		else if (!strcmp(a, "--frames"))
			frames = atol(v);
		else if (!strcmp(a, "--bytes"))
			o.frame_bytes = (size_t)atol(v);
		else if (!strcmp(a, "--fps"))
			fps = atof(v);
		else if (!strcmp(a, "--wait-replies"))
			wait_s = atof(v);
		else {
			fprintf(stderr, "frame_producer: unknown option %s\n", a);
			return 2;
		}
	}
	if (frames < 0 || fps <= 0 || o.frame_bytes == 0) {
		fprintf(stderr, "frame_producer: bad --frames, --fps or --bytes\n");
		return 2;
	}
	if ((ret = pl_producer_open(&p, &o)) < 0) {
		fprintf(stderr, "frame_producer: cannot reach perflinkd: %s\n", strerror(-ret));
		return 1;
	}
	period = (uint64_t)(1e9 / fps);
	next = now_ns();
	for (long f = 0; f < frames; f++) {
		struct timespec ts;
		size_t cap;
		uint8_t *buf;
		uint64_t captured = now_ns(), submitted;

		/* Wait for a slot (the link gives them back as frames go out). */
		while (!(buf = pl_frame_begin(p, &cap)) && pl_producer_check(p) == 0) {
			struct pollfd pfd = { pl_producer_fd(p), POLLIN, 0 };

			poll(&pfd, 1, 100);
			read_replies(p, o.frame_bytes);
		}
		if (!buf || pl_producer_check(p) < 0) {
			if (buf)
				pl_frame_abort(p, buf);
			fprintf(stderr, "frame_producer: perflinkd went away after %ld frames\n", f);
			pl_producer_close(p);
			return 3;
		}
		fill(buf, o.frame_bytes, (uint64_t)f);
		/* the stamps as they happen: captured when the frame began, submitted
		 * when it is handed over, published once perflinkd has it (a made-up
		 * submit stamp after the publish one made the summary ignore every
		 * frame, as common/pipeline_summary.h's rules say) */
		submitted = now_ns();
		if (pl_frame_commit(p, buf, o.frame_bytes, (uint64_t)f) == -EPIPE) {
			fprintf(stderr, "frame_producer: perflinkd went away after %ld frames\n", f);
			pl_producer_close(p);
			return 3;
		}
		if (pipeline)
			pl_frame_published(captured, submitted, now_ns(), 0, (uint64_t)f, 0);
		read_replies(p, o.frame_bytes);
		next += period;
		ts.tv_sec = (time_t)(next / 1000000000u);
		ts.tv_nsec = (long)(next % 1000000000u);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	for (uint64_t end = now_ns() + (uint64_t)(wait_s * 1e9);
	     replies + bad_replies < (uint64_t)frames && now_ns() < end;) {
		struct pollfd pfd = { pl_producer_fd(p), POLLIN, 0 };

		poll(&pfd, 1, 50);
		read_replies(p, o.frame_bytes);
	}
	pl_producer_get_stats(p, &st);
	printf("frames %ld committed %llu queued %llu sent %llu held %llu not_sent %llu lost %llu "
	       "replies %llu bad_replies %llu\n",
	       frames, (unsigned long long)st.frames_committed,
	       (unsigned long long)st.frames_queued, (unsigned long long)st.frames_sent,
	       (unsigned long long)st.frames_held, (unsigned long long)st.frames_not_sent,
	       (unsigned long long)st.frames_lost, (unsigned long long)replies,
	       (unsigned long long)bad_replies);
	pl_producer_close(p);
	return replies == (uint64_t)frames && !bad_replies ? 0 : 1;
}
