/* See perfetto_trace.h. Field numbers: perfetto_subset.proto. */
#include "perfetto_trace.h"
#include "protobuf_writer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum {
	TRACE_PACKET = 1,
	PACKET_TIMESTAMP = 8,
	PACKET_SEQUENCE_ID = 10,
	PACKET_INTERNED_DATA = 12,
	PACKET_TRACK_EVENT = 11,
	PACKET_SEQUENCE_FLAGS = 13,
	PACKET_PERF_SAMPLE = 66,
	INTERNED_FUNCTION_NAMES = 5,
	INTERNED_FRAMES = 6,
	INTERNED_CALLSTACKS = 7,
	INTERNED_MAPPING_PATHS = 17,
	INTERNED_MAPPINGS = 19,
	STRING_IID = 1,
	STRING_STR = 2,
	MAPPING_IID = 1,
	MAPPING_PATH_STRING_IDS = 7,
	FRAME_IID = 1,
	FRAME_FUNCTION_NAME_ID = 2,
	FRAME_MAPPING_ID = 3,
	FRAME_REL_PC = 4,
	CALLSTACK_IID = 1,
	CALLSTACK_FRAME_IDS = 2,
	PERF_SAMPLE_PID = 2,
	PERF_SAMPLE_TID = 3,
	PERF_SAMPLE_CALLSTACK_IID = 4,
	PERF_SAMPLE_CPU_MODE = 5,
	PACKET_TRACK_DESCRIPTOR = 60,
	TRACK_UUID = 1,
	TRACK_NAME = 2,
	TRACK_PROCESS = 3,
	TRACK_THREAD = 4,
	TRACK_PARENT_UUID = 5,
	TRACK_COUNTER = 8,
	COUNTER_UNIT = 3,
	COUNTER_UNIT_NAME = 6,
	PROCESS_PID = 1,
	PROCESS_NAME = 6,
	THREAD_PID = 1,
	THREAD_TID = 2,
	THREAD_NAME = 5,
	EVENT_DEBUG_ANNOTATIONS = 4,
	ANNOTATION_UINT = 3,
	ANNOTATION_STRING = 6,
	ANNOTATION_NAME = 10,
	EVENT_TYPE = 9,
	EVENT_TRACK_UUID = 11,
	EVENT_CATEGORIES = 22,
	EVENT_NAME = 23,
	EVENT_DOUBLE_COUNTER_VALUE = 44,
	EVENT_FLOW_IDS = 47,
	EVENT_TERMINATING_FLOW_IDS = 48,
};

enum { SLICE_BEGIN = 1, SLICE_END = 2, INSTANT = 3, COUNTER = 4 };
enum { UNIT_COUNT = 2, UNIT_SIZE_BYTES = 3 };

#define SEQUENCE_ID 1
#define SEQ_INCREMENTAL_STATE_CLEARED 1
#define SEQ_NEEDS_INCREMENTAL_STATE 2
#define CPU_MODE_USER 2
#define LINK_TRACK_UUID 1 /* its lanes: the uuids after it */
#define LINK_LANES 16
/* a process track: this plus the pid (pids are below 2^22 on Linux); a
 * thread track: this plus pid << 22 plus the tid */
#define PROCESS_TRACK_UUID_BASE (1ull << 32)
#define THREAD_TRACK_UUID_BASE (1ull << 48)
/* a counter track: this plus its kind << 22 plus the pid (0: system-wide) */
#define COUNTER_TRACK_UUID_BASE (2ull << 48)
#define PID_BITS 22

/* What a packet is, for rotation: a part may end only where no slice is
 * open, and every part starts with the track descriptors written so far. */
enum packet_kind { PK_DESCRIPTOR, PK_BEGIN, PK_END, PK_WHOLE };

struct trace {
	struct pl_pb pb;
	FILE *out;
	bool first;
	int err;
	const struct pl_trace_parts *parts; /* NULL: one file, no cap */
	unsigned part;
	uint64_t written;   /* bytes in this part */
	bool has_events;    /* this part holds more than the descriptors */
	unsigned open;      /* slices begun and not ended */
	uint8_t *descriptors; /* every descriptor packet so far, as written */
	size_t n_descriptors, cap_descriptors;
};

/* one TracePacket, written out as soon as it is complete */
static void packet_begin(struct trace *t, uint64_t timestamp_ns, bool with_timestamp)
{
	pl__pb_begin(&t->pb, TRACE_PACKET);
	if (with_timestamp)
		pl__pb_varint_field(&t->pb, PACKET_TIMESTAMP, timestamp_ns);
	pl__pb_varint_field(&t->pb, PACKET_SEQUENCE_ID, SEQUENCE_ID);
	if (t->first) {
		pl__pb_varint_field(&t->pb, PACKET_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
		t->first = false;
	}
}

static void keep_descriptor(struct trace *t)
{
	size_t want = t->n_descriptors + t->pb.n;
	uint8_t *p;

	if (want > t->cap_descriptors) {
		size_t cap = t->cap_descriptors ? t->cap_descriptors * 2 : 4096;

		while (cap < want)
			cap *= 2;
		if (!(p = realloc(t->descriptors, cap))) {
			if (!t->err)
				t->err = -ENOMEM;
			return;
		}
		t->descriptors = p;
		t->cap_descriptors = cap;
	}
	memcpy(t->descriptors + t->n_descriptors, t->pb.buf, t->pb.n);
	t->n_descriptors = want;
}

/* The part is full: close it, open the next and start it with every
 * track descriptor so far, so that it opens on its own. */
static void next_part(struct trace *t)
{
	const struct pl_trace_parts *pp = t->parts;
	int err;

	if ((err = pp->close(pp->ctx, t->part, true)) < 0 ||
	    (err = pp->open(pp->ctx, ++t->part, &t->out)) < 0) {
		t->out = NULL;
		if (!t->err)
			t->err = err;
		return;
	}
	if (t->n_descriptors && fwrite(t->descriptors, 1, t->n_descriptors, t->out) != t->n_descriptors &&
	    !t->err)
		t->err = -EIO;
	t->written = t->n_descriptors;
	t->has_events = false;
}

static void packet_end(struct trace *t, enum packet_kind kind)
{
	size_t n;
	int err;

	pl__pb_end(&t->pb);
	if (!t->out) {
		pl__pb_discard(&t->pb); /* a part failed to open: write nothing more */
		return;
	}
	n = t->pb.n;
	if (kind == PK_DESCRIPTOR && t->parts)
		keep_descriptor(t);
	if ((err = pl__pb_flush(&t->pb, t->out)) < 0 && !t->err)
		t->err = err;
	t->written += n;
	if (kind == PK_BEGIN)
		t->open++;
	else if (kind == PK_END && t->open)
		t->open--;
	if (kind != PK_DESCRIPTOR)
		t->has_events = true;
	if (t->parts && t->parts->cap_bytes && !t->open && t->has_events && !t->err &&
	    t->written >= t->parts->cap_bytes && kind != PK_DESCRIPTOR)
		next_part(t);
}

/* parent_uuid 0: none */
static void track(struct trace *t, uint64_t uuid, const char *name, uint64_t parent_uuid,
		  bool is_process, int64_t pid)
{
	packet_begin(t, 0, false);
	pl__pb_begin(&t->pb, PACKET_TRACK_DESCRIPTOR);
	pl__pb_varint_field(&t->pb, TRACK_UUID, uuid);
	pl__pb_string_field(&t->pb, TRACK_NAME, name);
	if (parent_uuid)
		pl__pb_varint_field(&t->pb, TRACK_PARENT_UUID, parent_uuid);
	if (is_process) {
		pl__pb_begin(&t->pb, TRACK_PROCESS);
		pl__pb_varint_field(&t->pb, PROCESS_PID, (uint64_t)pid);
		pl__pb_string_field(&t->pb, PROCESS_NAME, name);
		pl__pb_end(&t->pb);
	}
	pl__pb_end(&t->pb);
	packet_end(t, PK_DESCRIPTOR);
}

static void event(struct trace *t, uint64_t ts_ns, uint64_t track_uuid, unsigned type,
		  const char *category, const char *name)
{
	packet_begin(t, ts_ns, true);
	pl__pb_begin(&t->pb, PACKET_TRACK_EVENT);
	pl__pb_varint_field(&t->pb, EVENT_TYPE, type);
	pl__pb_varint_field(&t->pb, EVENT_TRACK_UUID, track_uuid);
	if (name) {
		pl__pb_string_field(&t->pb, EVENT_CATEGORIES, category);
		pl__pb_string_field(&t->pb, EVENT_NAME, name);
	}
	pl__pb_end(&t->pb);
	packet_end(t, type == SLICE_BEGIN ? PK_BEGIN : type == SLICE_END ? PK_END : PK_WHOLE);
}

static void slice(struct trace *t, uint64_t track_uuid, uint64_t start_ns, uint64_t end_ns,
		  const char *category, const char *name)
{
	event(t, start_ns, track_uuid, SLICE_BEGIN, category, name);
	event(t, end_ns, track_uuid, SLICE_END, category, NULL);
}

/* "frame N" for perflink stream's frames, "frame N of producer P" for an
 * application's (docs/wire.md, "Frame ids": its producer's number in the
 * top 16 bits, its own frame number in the low 48). */
static void frame_name(char *out, size_t cap, uint64_t frame_id)
{
	uint64_t producer = frame_id >> 48, number = frame_id & ((1ull << 48) - 1);

	if (producer)
		snprintf(out, cap, "frame %" PRIu64 " of producer %" PRIu64, number, producer);
	else
		snprintf(out, cap, "frame %" PRIu64, number);
}

/* Frames overlap when a reply takes longer than the frame interval, and
 * slices on one track must nest: each frame goes on the first lane (a
 * child track of the link's) that is free at its send. */
static void frame_slices(struct trace *t, const struct pl_recording *r)
{
	uint64_t lane_end[LINK_LANES];
	unsigned lanes = 0, k, best;
	size_t i;

	for (i = 0; i < r->n_frames; i++) {
		const struct pl_recorded_frame *f = &r->frames[i];
		uint64_t end;
		char name[64];

		if (f->have_round_trip)
			end = f->device_send_ns + f->round_trip_ns;
		else if (f->have_recv && f->host_recv_device_ns >= f->device_send_ns)
			end = f->host_recv_device_ns;
		else
			continue;
		for (k = 0, best = 0; k < lanes && lane_end[k] > f->device_send_ns; k++)
			if (lane_end[k] < lane_end[best])
				best = k;
		if (k == lanes && lanes < LINK_LANES) {
			snprintf(name, sizeof(name), "frames %u", lanes);
			track(t, LINK_TRACK_UUID + 1 + lanes, name, LINK_TRACK_UUID, false, 0);
			lanes++;
		} else if (k == lanes) {
			k = best; /* all lanes busy: the one free soonest */
		}
		lane_end[k] = end;
		frame_name(name, sizeof(name), f->frame_id);
		slice(t, LINK_TRACK_UUID + 1 + k, f->device_send_ns, end, "frame", name);
	}
}

/* where the device's link_diag totals of held, replaced and lost frames
 * went up: which frames, the recording does not say */
static void link_instants(struct trace *t, const struct pl_recording *r)
{
	size_t i;

	for (i = 0; i < r->n_link_changes; i++) {
		const struct pl_recorded_link_change *c = &r->link_changes[i];
		const struct {
			const char *what;
			uint64_t n;
		} kinds[] = { { "held", c->held }, { "replaced", c->replaced }, { "lost", c->lost } };
		char name[64];
		size_t k;

		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			if (!kinds[k].n)
				continue;
			snprintf(name, sizeof(name), "frames %s +%" PRIu64, kinds[k].what, kinds[k].n);
			event(t, c->mono_ns, LINK_TRACK_UUID, INSTANT, "link", name);
		}
	}
}

/* The stall as a slice on its victim; with a bully, an instant on the
 * bully's process track where the stall window starts, "wrote N MiB",
 * and a flow from it to the stall (the flow's id: the stall's place in
 * the recording, from 1). */
static void stall_slice(struct trace *t, const struct pl_recording *r,
			const struct pl_recorded_stall *e, uint64_t uuid, uint64_t start,
			const char *name)
{
	uint64_t flow = (uint64_t)(e - r->stalls) + 1;

	if (e->bully_pid) {
		char what[PL_REC_NAME + 64];

		snprintf(what, sizeof(what), "bully of %s %" PRId64 ": wrote %.1f MiB", e->comm,
			 e->pid, e->bully_wbytes_kb / 1024);
		packet_begin(t, start, true);
		pl__pb_begin(&t->pb, PACKET_TRACK_EVENT);
		pl__pb_varint_field(&t->pb, EVENT_TYPE, INSTANT);
		pl__pb_varint_field(&t->pb, EVENT_TRACK_UUID,
				    PROCESS_TRACK_UUID_BASE + (uint64_t)e->bully_pid);
		pl__pb_string_field(&t->pb, EVENT_CATEGORIES, "stall");
		pl__pb_string_field(&t->pb, EVENT_NAME, what);
		pl__pb_fixed64_field(&t->pb, EVENT_FLOW_IDS, flow);
		pl__pb_end(&t->pb);
		packet_end(t, PK_WHOLE);
	}
	packet_begin(t, start, true);
	pl__pb_begin(&t->pb, PACKET_TRACK_EVENT);
	pl__pb_varint_field(&t->pb, EVENT_TYPE, SLICE_BEGIN);
	pl__pb_varint_field(&t->pb, EVENT_TRACK_UUID, uuid);
	pl__pb_string_field(&t->pb, EVENT_CATEGORIES, "stall");
	pl__pb_string_field(&t->pb, EVENT_NAME, name);
	if (e->bully_pid)
		pl__pb_fixed64_field(&t->pb, EVENT_TERMINATING_FLOW_IDS, flow);
	pl__pb_end(&t->pb);
	packet_end(t, PK_BEGIN);
	event(t, e->start_ns + e->duration_ns, uuid, SLICE_END, NULL, NULL);
}

static int cmp_stall(const void *a, const void *b)
{
	const struct pl_recorded_stall *x = *(const struct pl_recorded_stall *const *)a;
	const struct pl_recorded_stall *y = *(const struct pl_recorded_stall *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Per victim in time order; a window that overlaps the one before starts
 * where that ended, so that the slices on a track nest. */
static int stall_slices(struct trace *t, const struct pl_recording *r)
{
	const struct pl_recorded_stall **by_pid;
	uint64_t previous_end = 0;
	size_t i;

	if (!r->n_stalls)
		return 0;
	by_pid = malloc(r->n_stalls * sizeof(*by_pid));
	if (!by_pid)
		return -ENOMEM;
	for (i = 0; i < r->n_stalls; i++)
		by_pid[i] = &r->stalls[i];
	qsort(by_pid, r->n_stalls, sizeof(*by_pid), cmp_stall);
	for (i = 0; i < r->n_stalls; i++) {
		const struct pl_recorded_stall *e = by_pid[i];
		uint64_t uuid = PROCESS_TRACK_UUID_BASE + (uint64_t)e->pid, start = e->start_ns;
		char name[PL_REC_NAME + 32];

		if (i == 0 || by_pid[i - 1]->pid != e->pid)
			previous_end = 0;
		if (start < previous_end)
			start = previous_end;
		if (start > e->start_ns + e->duration_ns)
			continue;
		snprintf(name, sizeof(name), "stall: %s", e->mechanism);
		stall_slice(t, r, e, uuid, start, name);
		previous_end = e->start_ns + e->duration_ns;
	}
	free(by_pid);
	return 0;
}

/* --- processes, their threads and their stage calls ---------------------- */

struct proc_name {
	int64_t pid;
	const char *comm;
};

static int cmp_proc(const void *a, const void *b)
{
	const struct proc_name *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* One track for each process the stalls or the stage calls name, written
 * once (the first name seen for a pid is its name). */
static int process_tracks(struct trace *t, const struct pl_recording *r)
{
	size_t n = 0, i;
	struct proc_name *p;

	if (!r->n_stalls && !r->n_calls && !r->n_points && !r->n_windows)
		return 0;
	p = malloc((2 * r->n_stalls + r->n_calls + r->n_points + r->n_windows) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (i = 0; i < r->n_stalls; i++) {
		p[n++] = (struct proc_name){ r->stalls[i].pid, r->stalls[i].comm };
		if (r->stalls[i].bully_pid)
			p[n++] = (struct proc_name){ r->stalls[i].bully_pid,
						     r->stalls[i].bully_comm };
	}
	for (i = 0; i < r->n_calls; i++)
		p[n++] = (struct proc_name){ r->calls[i].pid, r->names[r->calls[i].comm] };
	for (i = 0; i < r->n_points; i++)
		if (r->points[i].pid)
			p[n++] = (struct proc_name){ r->points[i].pid, r->names[r->points[i].comm] };
	for (i = 0; i < r->n_windows; i++)
		p[n++] = (struct proc_name){ r->windows[i].pid, r->windows[i].comm };
	/* stable enough: equal pids keep a name of theirs, whichever */
	qsort(p, n, sizeof(*p), cmp_proc);
	for (i = 0; i < n; i++) {
		char name[PL_REC_NAME + 32];

		if (i > 0 && p[i].pid == p[i - 1].pid)
			continue;
		snprintf(name, sizeof(name), "%s %" PRId64, p[i].comm[0] ? p[i].comm : "?",
			 p[i].pid);
		track(t, PROCESS_TRACK_UUID_BASE + (uint64_t)p[i].pid, name, 0, true, p[i].pid);
	}
	free(p);
	return 0;
}

static uint64_t thread_uuid(int64_t pid, uint32_t tid)
{
	return THREAD_TRACK_UUID_BASE + ((uint64_t)pid << PID_BITS) + tid;
}

static void thread_track(struct trace *t, int64_t pid, uint32_t tid, const char *comm)
{
	char name[PL_REC_NAME + 32];

	/* the main thread's id is the pid; the device does not send names */
	if ((int64_t)tid == pid)
		snprintf(name, sizeof(name), "%s", comm);
	else
		snprintf(name, sizeof(name), "thread %" PRIu32, tid);
	packet_begin(t, 0, false);
	pl__pb_begin(&t->pb, PACKET_TRACK_DESCRIPTOR);
	pl__pb_varint_field(&t->pb, TRACK_UUID, thread_uuid(pid, tid));
	pl__pb_varint_field(&t->pb, TRACK_PARENT_UUID, PROCESS_TRACK_UUID_BASE + (uint64_t)pid);
	pl__pb_begin(&t->pb, TRACK_THREAD);
	pl__pb_varint_field(&t->pb, THREAD_PID, (uint64_t)pid);
	pl__pb_varint_field(&t->pb, THREAD_TID, tid);
	pl__pb_string_field(&t->pb, THREAD_NAME, name);
	pl__pb_end(&t->pb);
	pl__pb_end(&t->pb);
	packet_end(t, PK_DESCRIPTOR);
}

struct thread_name {
	int64_t pid;
	uint32_t tid;
	const char *comm;
};

static int cmp_thread(const void *a, const void *b)
{
	const struct thread_name *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The comm of a window of pid: the sampled process's name. */
static const char *window_comm(const struct pl_recording *r, int64_t pid)
{
	size_t i;

	for (i = 0; i < r->n_windows; i++)
		if (r->windows[i].pid == pid)
			return r->windows[i].comm;
	return "?";
}

/* One track for each thread the stage calls or the timed samples are on,
 * written once. */
static int thread_tracks(struct trace *t, const struct pl_recording *r)
{
	struct thread_name *th;
	size_t n = 0, i;

	if (!r->n_calls && !r->n_samples)
		return 0;
	th = malloc((r->n_calls + r->n_samples) * sizeof(*th));
	if (!th)
		return -ENOMEM;
	for (i = 0; i < r->n_calls; i++)
		th[n++] = (struct thread_name){ r->calls[i].pid, r->calls[i].tid,
						r->names[r->calls[i].comm] };
	for (i = 0; i < r->n_samples; i++)
		th[n++] = (struct thread_name){ r->samples[i].pid, r->samples[i].tid,
						window_comm(r, r->samples[i].pid) };
	qsort(th, n, sizeof(*th), cmp_thread);
	for (i = 0; i < n; i++)
		if (i == 0 || th[i].pid != th[i - 1].pid || th[i].tid != th[i - 1].tid)
			thread_track(t, th[i].pid, th[i].tid, th[i].comm);
	free(th);
	return 0;
}

static void annotation_string(struct trace *t, const char *name, const char *v)
{
	pl__pb_begin(&t->pb, EVENT_DEBUG_ANNOTATIONS);
	pl__pb_string_field(&t->pb, ANNOTATION_NAME, name);
	pl__pb_string_field(&t->pb, ANNOTATION_STRING, v);
	pl__pb_end(&t->pb);
}

/* The stack's innermost frames for a sample's argument: the whole stack
 * would make every sample a kilobyte. */
#define SAMPLE_STACK_FRAMES 8

/* A render sample as an instant on its thread, named by its innermost
 * frame, with the innermost frames of its stack (innermost last, as in
 * the folded stacks). */
static void sample_instant(struct trace *t, const struct pl_recording *r,
			   const struct pl_recorded_sample *s)
{
	const char *frames = r->stacks[s->stack].frames, *leaf = strrchr(frames, ';');
	const char *from = frames + strlen(frames);
	unsigned k = 0;

	leaf = leaf ? leaf + 1 : frames;
	while (from > frames && k < SAMPLE_STACK_FRAMES)
		if (*--from == ';' && ++k == SAMPLE_STACK_FRAMES)
			from++;
	packet_begin(t, s->mono_ns, true);
	pl__pb_begin(&t->pb, PACKET_TRACK_EVENT);
	pl__pb_varint_field(&t->pb, EVENT_TYPE, INSTANT);
	pl__pb_varint_field(&t->pb, EVENT_TRACK_UUID, thread_uuid(s->pid, s->tid));
	pl__pb_string_field(&t->pb, EVENT_CATEGORIES, "sample");
	pl__pb_string_field(&t->pb, EVENT_NAME, leaf);
	annotation_string(t, "stack", from);
	pl__pb_end(&t->pb);
	packet_end(t, PK_WHOLE);
}

static void sample_instants(struct trace *t, const struct pl_recording *r)
{
	size_t i;

	for (i = 0; i < r->n_samples; i++)
		if (r->samples[i].stack >= 0 && (size_t)r->samples[i].stack < r->n_stacks)
			sample_instant(t, r, &r->samples[i]);
}

/* The render samples as Perfetto's own samples (PerfSample packets, which
 * the UI shows on the thread with a flame graph of any selection), beside
 * the instants above. Their stacks go into the sequence's interned data, in
 * one packet kept with the descriptors, so that every part of a rotated
 * trace starts with it: a function name per distinct frame, a frame per
 * name (in one mapping, "render sampler", whose rel_pc is the frame's own
 * number: the device sends names, not addresses), a callstack per stack of
 * the recording (iid: its index + 1; frames outermost first, as Perfetto's
 * "bottom frame first" and the folded stacks both have them). */
struct name_table {
	char **names; /* by iid - 1 */
	size_t n, cap;
	uint32_t *slots; /* open addressing: iid, 0 empty */
	size_t n_slots;
};

static uint64_t hash_name(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

static int table_grow(struct name_table *tb)
{
	size_t n_slots = tb->n_slots ? tb->n_slots * 2 : 1024;
	uint32_t *slots = calloc(n_slots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < tb->n; i++) {
		size_t k = hash_name(tb->names[i], strlen(tb->names[i])) & (n_slots - 1);

		while (slots[k])
			k = (k + 1) & (n_slots - 1);
		slots[k] = (uint32_t)(i + 1);
	}
	free(tb->slots);
	tb->slots = slots;
	tb->n_slots = n_slots;
	return 0;
}

/* The iid of name[0..len), added when new; 0 when out of memory. */
static uint32_t intern_name(struct name_table *tb, const char *name, size_t len)
{
	size_t k;
	char *copy;

	if ((tb->n + 1) * 2 > tb->n_slots && table_grow(tb) < 0)
		return 0;
	for (k = hash_name(name, len) & (tb->n_slots - 1); tb->slots[k];
	     k = (k + 1) & (tb->n_slots - 1)) {
		const char *have = tb->names[tb->slots[k] - 1];

		if (strncmp(have, name, len) == 0 && have[len] == '\0')
			return tb->slots[k];
	}
	if (tb->n == tb->cap) {
		size_t cap = tb->cap ? tb->cap * 2 : 256;
		char **names = realloc(tb->names, cap * sizeof(*names));

		if (!names)
			return 0;
		tb->names = names;
		tb->cap = cap;
	}
	if (!(copy = malloc(len + 1)))
		return 0;
	memcpy(copy, name, len);
	copy[len] = '\0';
	tb->names[tb->n++] = copy;
	tb->slots[k] = (uint32_t)tb->n;
	return (uint32_t)tb->n;
}

static void table_free(struct name_table *tb)
{
	for (size_t i = 0; i < tb->n; i++)
		free(tb->names[i]);
	free(tb->names);
	free(tb->slots);
}

static void interned_string(struct trace *t, unsigned field, uint64_t iid, const char *str)
{
	pl__pb_begin(&t->pb, field);
	pl__pb_varint_field(&t->pb, STRING_IID, iid);
	pl__pb_string_field(&t->pb, STRING_STR, str);
	pl__pb_end(&t->pb);
}

/* The callstacks of every stack a sample uses, with their frames and names. */
static int sample_stacks(struct trace *t, const struct pl_recording *r, const bool *used)
{
	struct name_table tb = { 0 };
	uint32_t *ids = NULL;
	size_t cap_ids = 0, i, k;
	int err = 0;

	packet_begin(t, 0, false);
	pl__pb_begin(&t->pb, PACKET_INTERNED_DATA);
	for (i = 0; i < r->n_stacks && !err; i++) {
		const char *f = r->stacks[i].frames;
		size_t n = 0;

		if (!used[i])
			continue;
		while (*f) {
			size_t len = strcspn(f, ";");
			uint32_t id;

			if (n == cap_ids) {
				uint32_t *p = realloc(ids, (cap_ids = cap_ids ? cap_ids * 2 : 64) *
								  sizeof(*ids));
				if (!p) {
					err = -ENOMEM;
					break;
				}
				ids = p;
			}
			if (!(id = intern_name(&tb, f, len))) {
				err = -ENOMEM;
				break;
			}
			ids[n++] = id;
			f += len + (f[len] == ';');
		}
		if (err || !n)
			continue;
		pl__pb_begin(&t->pb, INTERNED_CALLSTACKS);
		pl__pb_varint_field(&t->pb, CALLSTACK_IID, i + 1);
		for (k = 0; k < n; k++)
			pl__pb_varint_field(&t->pb, CALLSTACK_FRAME_IDS, ids[k]);
		pl__pb_end(&t->pb);
	}
	for (k = 0; k < tb.n && !err; k++) {
		interned_string(t, INTERNED_FUNCTION_NAMES, k + 1, tb.names[k]);
		pl__pb_begin(&t->pb, INTERNED_FRAMES);
		pl__pb_varint_field(&t->pb, FRAME_IID, k + 1);
		pl__pb_varint_field(&t->pb, FRAME_FUNCTION_NAME_ID, k + 1);
		pl__pb_varint_field(&t->pb, FRAME_MAPPING_ID, 1);
		pl__pb_varint_field(&t->pb, FRAME_REL_PC, k + 1);
		pl__pb_end(&t->pb);
	}
	interned_string(t, INTERNED_MAPPING_PATHS, 1, "render sampler");
	pl__pb_begin(&t->pb, INTERNED_MAPPINGS);
	pl__pb_varint_field(&t->pb, MAPPING_IID, 1);
	pl__pb_varint_field(&t->pb, MAPPING_PATH_STRING_IDS, 1);
	pl__pb_end(&t->pb);
	pl__pb_end(&t->pb);
	if (err)
		pl__pb_discard(&t->pb);
	else
		packet_end(t, PK_DESCRIPTOR);
	free(ids);
	table_free(&tb);
	return err;
}

static int perf_samples(struct trace *t, const struct pl_recording *r)
{
	bool *used = calloc(r->n_stacks ? r->n_stacks : 1, sizeof(*used));
	size_t i, n = 0;
	int err;

	if (!used)
		return -ENOMEM;
	for (i = 0; i < r->n_samples; i++)
		if (r->samples[i].stack >= 0 && (size_t)r->samples[i].stack < r->n_stacks &&
		    r->stacks[r->samples[i].stack].frames[0]) {
			used[r->samples[i].stack] = true;
			n++;
		}
	if (!n || (err = sample_stacks(t, r, used)) < 0) {
		free(used);
		return n ? err : 0;
	}
	for (i = 0; i < r->n_samples; i++) {
		const struct pl_recorded_sample *s = &r->samples[i];

		if (s->stack < 0 || (size_t)s->stack >= r->n_stacks || !used[s->stack])
			continue;
		packet_begin(t, s->mono_ns, true);
		pl__pb_varint_field(&t->pb, PACKET_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
		pl__pb_begin(&t->pb, PACKET_PERF_SAMPLE);
		pl__pb_varint_field(&t->pb, PERF_SAMPLE_PID, (uint64_t)s->pid);
		pl__pb_varint_field(&t->pb, PERF_SAMPLE_TID, s->tid);
		pl__pb_varint_field(&t->pb, PERF_SAMPLE_CALLSTACK_IID, (uint64_t)s->stack + 1);
		pl__pb_varint_field(&t->pb, PERF_SAMPLE_CPU_MODE, CPU_MODE_USER);
		pl__pb_end(&t->pb);
		packet_end(t, PK_WHOLE);
	}
	free(used);
	return 0;
}

static void annotation_uint(struct trace *t, const char *name, uint64_t v)
{
	pl__pb_begin(&t->pb, EVENT_DEBUG_ANNOTATIONS);
	pl__pb_string_field(&t->pb, ANNOTATION_NAME, name);
	pl__pb_varint_field(&t->pb, ANNOTATION_UINT, v);
	pl__pb_end(&t->pb);
}

static const char *const result_names[] = { "ok", "EAGAIN", "ENODATA", "EINTR", "error" };

/* A call as a slice on its thread, with its CPU time, result and bytes. */
static void call_slice(struct trace *t, const struct pl_recording *r,
		       const struct pl_recorded_call *c, uint64_t start)
{
	uint64_t uuid = thread_uuid(c->pid, c->tid);

	packet_begin(t, start, true);
	pl__pb_begin(&t->pb, PACKET_TRACK_EVENT);
	pl__pb_varint_field(&t->pb, EVENT_TYPE, SLICE_BEGIN);
	pl__pb_varint_field(&t->pb, EVENT_TRACK_UUID, uuid);
	pl__pb_string_field(&t->pb, EVENT_CATEGORIES, "stage");
	pl__pb_string_field(&t->pb, EVENT_NAME, r->names[c->stage]);
	annotation_uint(t, "cpu_ns", c->cpu_ns);
	annotation_string(t, "result", result_names[c->result < 5 ? c->result : 4]);
	if (c->bytes)
		annotation_uint(t, "bytes", c->bytes);
	pl__pb_end(&t->pb);
	packet_end(t, PK_BEGIN);
	event(t, c->start_ns + c->wall_ns, uuid, SLICE_END, NULL, NULL);
}

static int cmp_call(const void *a, const void *b)
{
	const struct pl_recorded_call *x = *(const struct pl_recorded_call *const *)a;
	const struct pl_recorded_call *y = *(const struct pl_recorded_call *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Per thread in time order; a call that would start before the one before
 * it ended (a wall time cut at 4.29 s) starts at that end, so that the
 * slices on a track nest. */
static int call_slices(struct trace *t, const struct pl_recording *r)
{
	const struct pl_recorded_call **order;
	uint64_t previous_end = 0;
	size_t i;

	if (!r->n_calls)
		return 0;
	order = malloc(r->n_calls * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < r->n_calls; i++)
		order[i] = &r->calls[i];
	qsort(order, r->n_calls, sizeof(*order), cmp_call);
	for (i = 0; i < r->n_calls; i++) {
		const struct pl_recorded_call *c = order[i];
		uint64_t start = c->start_ns;

		if (i == 0 || order[i - 1]->pid != c->pid || order[i - 1]->tid != c->tid)
			previous_end = 0;
		if (start < previous_end)
			start = previous_end;
		if (start > c->start_ns + c->wall_ns)
			continue;
		call_slice(t, r, c, start);
		previous_end = c->start_ns + c->wall_ns;
	}
	free(order);
	return 0;
}

/* --- counters ------------------------------------------------------------ */

static const struct {
	const char *name;
	unsigned unit;         /* CounterDescriptor's; 0: unit_name below */
	const char *unit_name;
} counter_kinds[PL_COUNTER_KIND_COUNT] = {
	[PL_COUNTER_PROCESS_CPU_TICKS] = { "CPU %", 0, "%" },
	[PL_COUNTER_PROCESS_RSS_BYTES] = { "RSS", UNIT_SIZE_BYTES, NULL },
	[PL_COUNTER_MEM_AVAILABLE_BYTES] = { "MemAvailable", UNIT_SIZE_BYTES, NULL },
	[PL_COUNTER_MEM_DIRTY_BYTES] = { "Dirty", UNIT_SIZE_BYTES, NULL },
	[PL_COUNTER_MEM_WRITEBACK_BYTES] = { "Writeback", UNIT_SIZE_BYTES, NULL },
	[PL_COUNTER_LINK_BYTES] = { "link MB/s", 0, "MB/s" },
	[PL_COUNTER_LINK_BACKLOG_BYTES] = { "link backlog", UNIT_SIZE_BYTES, NULL },
};

static int cmp_point(const void *a, const void *b)
{
	const struct pl_recorded_point *x = *(const struct pl_recorded_point *const *)a;
	const struct pl_recorded_point *y = *(const struct pl_recorded_point *const *)b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->mono_ns < y->mono_ns ? -1 : x->mono_ns > y->mono_ns;
}

static void counter_track(struct trace *t, const struct pl_recorded_point *p, uint64_t uuid)
{
	packet_begin(t, 0, false);
	pl__pb_begin(&t->pb, PACKET_TRACK_DESCRIPTOR);
	pl__pb_varint_field(&t->pb, TRACK_UUID, uuid);
	pl__pb_string_field(&t->pb, TRACK_NAME, counter_kinds[p->kind].name);
	if (p->pid)
		pl__pb_varint_field(&t->pb, TRACK_PARENT_UUID,
				    PROCESS_TRACK_UUID_BASE + (uint64_t)p->pid);
	pl__pb_begin(&t->pb, TRACK_COUNTER);
	if (counter_kinds[p->kind].unit)
		pl__pb_varint_field(&t->pb, COUNTER_UNIT, counter_kinds[p->kind].unit);
	else
		pl__pb_string_field(&t->pb, COUNTER_UNIT_NAME, counter_kinds[p->kind].unit_name);
	pl__pb_end(&t->pb);
	pl__pb_end(&t->pb);
	packet_end(t, PK_DESCRIPTOR);
}

static void counter_value(struct trace *t, uint64_t uuid, uint64_t ts_ns, double v)
{
	packet_begin(t, ts_ns, true);
	pl__pb_begin(&t->pb, PACKET_TRACK_EVENT);
	pl__pb_varint_field(&t->pb, EVENT_TYPE, COUNTER);
	pl__pb_varint_field(&t->pb, EVENT_TRACK_UUID, uuid);
	pl__pb_double_field(&t->pb, EVENT_DOUBLE_COUNTER_VALUE, v);
	pl__pb_end(&t->pb);
	packet_end(t, PK_WHOLE);
}

/* A value at p, or false for none: CPU ticks and link bytes become rates
 * over the step from the point before (none for the first point, a step
 * back in time or a counter that went down: the device restarted). */
static bool counter_at(const struct pl_recording *r, const struct pl_recorded_point *prev,
		       const struct pl_recorded_point *p, double *v)
{
	double dt_s;

	if (p->kind != PL_COUNTER_PROCESS_CPU_TICKS && p->kind != PL_COUNTER_LINK_BYTES) {
		*v = p->value;
		return true;
	}
	if (!prev || p->mono_ns <= prev->mono_ns || p->value < prev->value)
		return false;
	dt_s = (double)(p->mono_ns - prev->mono_ns) / 1e9;
	if (p->kind == PL_COUNTER_LINK_BYTES) {
		*v = (p->value - prev->value) / dt_s / 1e6;
		return true;
	}
	if (!r->clk_tck)
		return false; /* ticks without their length: no header line */
	*v = (p->value - prev->value) / (double)r->clk_tck / dt_s * 100;
	return true;
}

static int counters(struct trace *t, const struct pl_recording *r)
{
	const struct pl_recorded_point **order;
	size_t i;

	if (!r->n_points)
		return 0;
	order = malloc(r->n_points * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (i = 0; i < r->n_points; i++)
		order[i] = &r->points[i];
	qsort(order, r->n_points, sizeof(*order), cmp_point);
	for (i = 0; i < r->n_points; i++) {
		const struct pl_recorded_point *p = order[i], *prev = NULL;
		uint64_t uuid = COUNTER_TRACK_UUID_BASE + ((uint64_t)p->kind << PID_BITS) +
				(uint64_t)p->pid;
		double v;

		if (i > 0 && order[i - 1]->kind == p->kind && order[i - 1]->pid == p->pid)
			prev = order[i - 1];
		else
			counter_track(t, p, uuid);
		if (counter_at(r, prev, p, &v))
			counter_value(t, uuid, p->mono_ns, v);
	}
	free(order);
	return 0;
}

static int write_all(struct trace *t, const struct pl_recording *r)
{
	int err;

	pl__pb_init(&t->pb);
	if (r->n_frames || r->n_link_changes)
		track(t, LINK_TRACK_UUID, "perflink link", 0, false, 0);
	frame_slices(t, r);
	link_instants(t, r);
	err = process_tracks(t, r);
	if (err == 0)
		err = stall_slices(t, r);
	if (err == 0)
		err = thread_tracks(t, r);
	if (err == 0)
		err = call_slices(t, r);
	if (err == 0)
		sample_instants(t, r);
	if (err == 0)
		err = perf_samples(t, r);
	if (err == 0)
		err = counters(t, r);
	pl__pb_free(&t->pb);
	free(t->descriptors);
	if (err < 0)
		return err;
	if (t->err < 0)
		return t->err;
	return t->out && ferror(t->out) ? -EIO : 0;
}

int pl__perfetto_trace_write(FILE *out, const void *recording)
{
	struct trace t = { .out = out, .first = true };

	return write_all(&t, recording);
}

int pl__perfetto_trace_write_parts(const struct pl_recording *r, const struct pl_trace_parts *parts,
				   unsigned *n_parts)
{
	struct trace t = { .first = true, .parts = parts };
	int err;

	*n_parts = 0;
	if ((err = parts->open(parts->ctx, 0, &t.out)) < 0)
		return err;
	err = write_all(&t, r);
	if (t.out) {
		int cerr = parts->close(parts->ctx, t.part, err == 0);

		if (err == 0)
			err = cerr;
	}
	*n_parts = t.part + 1;
	return err;
}
