/* DIR/telemetry/perflink-stage-calls.jsonl read back: every timed call of
 * the device's stage profiler with events on (docs/stages.md, "Events").
 * A line is taken whole or skipped whole: one call without all seven of
 * its numbers, or naming a stage the line does not list, makes the line
 * bad (counted), as does a line without a pid. */
#include "json_reader.h"
#include "proc_parse.h"
#include "recording.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CALLS 65536   /* in one line; the device writes at most 512 */
#define MAX_STAGE_NAMES 256
#define CALL_FIELDS 7     /* start, wall, cpu, tid, stage, result, bytes */

struct raw_call {
	uint64_t v[CALL_FIELDS];
	uint8_t seen; /* a bit a field */
};

struct line_state {
	struct pl_recording *r;
	int err;      /* -ENOMEM: stop */
	bool bad;     /* something of this line that must be there is not */
	bool is_calls, have_pid, have_dropped;
	int64_t pid;
	uint64_t events_dropped; /* if have_dropped */
	char comm[PL_REC_NAME];
	char (*stage_names)[PL_REC_NAME];
	size_t n_stage_names;
	struct raw_call *calls;
	size_t n_calls, cap_calls;
};

static void on_call_field(struct line_state *s, size_t index, const char *rest,
			  enum pl_json_kind kind, const char *value)
{
	struct raw_call *c;
	unsigned long k;
	char *end;

	errno = 0;
	k = strtoul(rest, &end, 10);
	if (errno || *end || rest[0] < '0' || rest[0] > '9' || k >= CALL_FIELDS ||
	    kind != PL_JSON_NUMBER) {
		s->bad = true;
		return;
	}
	c = pl__recording_item_at((void **)&s->calls, &s->n_calls, &s->cap_calls, sizeof(*c), index);
	if (!c) {
		s->err = -ENOMEM;
		return;
	}
	if (!pl__parse_u64_all(value, &c->v[k]))
		s->bad = true;
	c->seen |= (uint8_t)(1u << k);
}

static void on_scalar(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct line_state *s = ctx;
	const char *rest;
	size_t index;

	if (s->err)
		return;
	if (strcmp(path, "type") == 0) {
		s->is_calls = kind == PL_JSON_STRING && strcmp(value, "perflink-stage-calls") == 0;
	} else if (strcmp(path, "pid") == 0) {
		uint64_t v = 0;

		/* Linux pids and tids are below 2^22 (PID_MAX_LIMIT): the trace's
		 * track ids are made of them */
		s->have_pid = kind == PL_JSON_NUMBER && pl__parse_u64_all(value, &v) && v < (1u << 22);
		s->pid = (int64_t)v;
	} else if (strcmp(path, "comm") == 0 && kind == PL_JSON_STRING) {
		pl__recording_copy_name(s->comm, value);
	} else if (strcmp(path, "events_dropped") == 0) {
		s->have_dropped = kind == PL_JSON_NUMBER && pl__parse_u64_all(value, &s->events_dropped);
	} else if (strncmp(path, "stage_names.", 12) == 0) {
		char *end;
		unsigned long i;

		errno = 0;
		i = strtoul(path + 12, &end, 10);
		if (errno || *end || i != s->n_stage_names || i >= MAX_STAGE_NAMES ||
		    kind != PL_JSON_STRING) {
			s->bad = true; /* in order, each a string */
			return;
		}
		pl__recording_copy_name(s->stage_names[s->n_stage_names++], value);
	} else if ((rest = pl__recording_item_of(path, "calls", MAX_CALLS, &index))) {
		on_call_field(s, index, rest, kind, value);
	} else if (strncmp(path, "calls.", 6) == 0) {
		s->bad = true; /* an index past MAX_CALLS, or a call that is no array */
	}
}

static int take_line(struct line_state *s)
{
	struct pl_recording *r = s->r;
	int stage_ids[MAX_STAGE_NAMES], comm_id;
	struct pl_recorded_loss *loss;
	size_t i;

	if (!s->is_calls || !s->have_pid || s->bad)
		return 1;
	for (i = 0; i < s->n_calls; i++) {
		if (s->calls[i].seen != (1u << CALL_FIELDS) - 1 ||
		    s->calls[i].v[4] >= s->n_stage_names || s->calls[i].v[3] >= (1u << 22) ||
		    s->calls[i].v[5] > 4)
			return 1;
	}
	comm_id = pl__recording_intern(r, s->comm[0] ? s->comm : "?");
	for (i = 0; i < s->n_stage_names; i++) {
		if (comm_id < 0)
			break;
		stage_ids[i] = pl__recording_intern(r, s->stage_names[i]);
		if (stage_ids[i] < 0)
			comm_id = stage_ids[i]; /* the failure, for below */
	}
	if (comm_id == -2)
		return -ENOMEM;
	if (comm_id < 0)
		return 1; /* more names than a recording may hold */
	if (s->have_dropped) { /* the process's total so far: the latest line's */
		if (!(loss = pl__recording_loss(r, s->pid, s->comm[0] ? s->comm : "?")))
			return -ENOMEM;
		loss->have_events = true;
		loss->events_dropped = s->events_dropped;
	}
	for (i = 0; i < s->n_calls; i++) {
		const struct raw_call *c = &s->calls[i];
		struct pl_recorded_call *e;

		if (pl__recording_grow((void **)&r->calls, &r->cap_calls, r->n_calls,
				       sizeof(*r->calls)) < 0)
			return -ENOMEM;
		e = &r->calls[r->n_calls++];
		memset(e, 0, sizeof(*e));
		e->pid = s->pid;
		e->start_ns = c->v[0];
		e->wall_ns = c->v[1];
		e->cpu_ns = c->v[2];
		e->tid = (uint32_t)c->v[3];
		e->stage = (uint16_t)stage_ids[c->v[4]];
		e->comm = (uint16_t)comm_id;
		e->result = (uint8_t)c->v[5];
		e->bytes = c->v[6];
	}
	return 0;
}

static int calls_line(void *ctx, const char *text, size_t len)
{
	struct line_state *s = ctx;
	int err;

	s->err = 0;
	s->bad = s->is_calls = s->have_pid = s->have_dropped = false;
	s->comm[0] = '\0';
	s->n_stage_names = s->n_calls = 0;
	err = pl__json_walk(text, len, on_scalar, s);
	if (s->err < 0 || err == -ENOMEM)
		return -ENOMEM;
	if (err < 0)
		return 1;
	return take_line(s);
}

int pl__recording_read_stage_calls(struct pl_recording *r, int dir_fd)
{
	struct line_state s = { .r = r };
	int err;

	s.stage_names = malloc(MAX_STAGE_NAMES * sizeof(*s.stage_names));
	if (!s.stage_names)
		return -ENOMEM;
	err = pl__recording_each_line(r, dir_fd, PL_REC_STAGE_CALLS, calls_line, &s);
	free(s.stage_names);
	free(s.calls);
	return err;
}
