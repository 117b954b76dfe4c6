/* The per-call events, from the ring (events.h) to the JSON output: lines
 * of type perflink-stage-calls, at most BATCH events each (docs/stages.md,
 * "Events"). Runs on the reporter thread every EVENTS_DRAIN_MS, and once
 * more from the destructor for what the last interval left. */
#include "clock.h"
#include "events.h"
#include "json_writer.h"
#include "reporter.h"
#include "settings.h"
#include "stages.h"

#include <pthread.h>

#define BATCH 512 /* events a line: about 30 KB of JSON */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pl_event batch[BATCH];
static uint64_t sent, lines;       /* since the start (or fork) */
static uint64_t dropped_total;     /* widened from the ring's 32-bit count */
static uint32_t dropped_seen;

static void send_batch(size_t n)
{
	/* the stages this line's events name, in order of first use: an event
	 * names its stage by its place in that list */
	uint8_t place[PL_MAX_STAGES] = { 0 }; /* 1 + the place; 0: not listed */
	uint8_t listed[PL_MAX_STAGES];
	unsigned n_listed = 0, i;
	struct pl_json j;
	size_t k;
	uint32_t d = pl__events_dropped();

	dropped_total += (uint32_t)(d - dropped_seen);
	dropped_seen = d;
	sent += n;
	lines++;
	for (k = 0; k < n; k++) {
		unsigned st = batch[k].stage;

		if (st < PL_MAX_STAGES && !place[st]) {
			listed[n_listed] = (uint8_t)st;
			place[st] = (uint8_t)++n_listed;
		}
	}
	pl__report_json_begin(&j, "perflink-stage-calls");
	pl__json_u64(&j, "mono_ns", pl__mono_ns()); /* when the line was made */
	pl__json_u64(&j, "line", lines);
	pl__json_u64(&j, "events_sent", sent);
	pl__json_u64(&j, "events_dropped", dropped_total);
	pl__json_begin_array(&j, "stage_names");
	for (i = 0; i < n_listed; i++)
		pl__json_str(&j, NULL, listed[i] < pl__stages.n_stages ?
					       pl__stages.stage[listed[i]].name : "?");
	pl__json_end_array(&j);
	pl__json_begin_array(&j, "calls");
	for (k = 0; k < n; k++) {
		const struct pl_event *e = &batch[k];

		pl__json_begin_array(&j, NULL);
		pl__json_u64(&j, NULL, e->start_ns);
		pl__json_u64(&j, NULL, e->wall_ns);
		pl__json_u64(&j, NULL, e->cpu_ns);
		pl__json_u64(&j, NULL, e->tid);
		pl__json_u64(&j, NULL, e->stage < PL_MAX_STAGES ? place[e->stage] - 1u : 0u);
		pl__json_u64(&j, NULL, e->result);
		pl__json_u64(&j, NULL, e->bytes);
		pl__json_end_array(&j);
	}
	pl__json_end_array(&j);
	pl__json_end_object(&j);
	pl__report_json_send(&j);
}

/* At most a ring's worth a call, whatever the writers add meanwhile. */
#define MAX_BATCHES_A_SEND (PL_EVENTS_KB_MAX * 1024u / sizeof(struct pl_event) / BATCH)

void pl__events_send(void)
{
	unsigned rounds = 0;
	size_t n;

	if (!pl__events_on)
		return;
	pthread_mutex_lock(&lock);
	/* nobody takes them: still empty the ring, so that drops mean a ring
	 * too small for what is sent, not nowhere to send */
	do {
		n = pl__events_take(batch, BATCH);
		if (n && pl__report_json_wanted())
			send_batch(n);
	} while (n == BATCH && ++rounds < MAX_BATCHES_A_SEND);
	pthread_mutex_unlock(&lock);
}

void pl__events_out_fork_child(void)
{
	pthread_mutex_init(&lock, NULL); /* another thread may have held it */
	sent = lines = dropped_total = 0;
	dropped_seen = 0;
	pl__events_fork_child();
}
