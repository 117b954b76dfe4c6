/* See device_telemetry.h. */
#include "device_telemetry.h"
#include "json_reader.h"
#include "proc_parse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Bounds what one hostile line can make the host allocate for its entries. */
#define MAX_LATENCY_ENTRIES (1u << 20)

const char *pl__telemetry_problem_name(enum pl_telemetry_problem p)
{
	static const char *const names[] = {
		"bad_json", "bad_type", "bad_frame_latency", "frame_latency_unknown_frame",
		"frame_latency_reply_before_send",
	};

	return (unsigned)p < PL_TM_PROBLEM_COUNT ? names[p] : "unknown";
}

void pl__device_telemetry_init(struct pl_device_telemetry *dt, struct pl_latency_table *table,
			       struct pl_telemetry_files *files)
{
	memset(dt, 0, sizeof(*dt));
	dt->table = table;
	dt->files = files;
}

void pl__device_telemetry_free(struct pl_device_telemetry *dt)
{
	free(dt->entries);
	dt->entries = NULL;
	dt->entries_cap = 0;
}

struct line {
	struct pl_device_telemetry *dt;
	char type[PL_TELEMETRY_TYPE_MAX + 1];
	bool have_type, bad_type;
	size_t n_entries;
	unsigned pos; /* of the entry being filled */
	bool bad_latency;
	bool have_dropped;
	uint64_t dropped;
	struct pl_diag_object last_send, totals;
	bool have_held;
	uint64_t held;
};

/* "I.J" after "frames.": the J-th number of the I-th entry. */
static void on_entry(struct line *l, const char *sub, enum pl_json_kind kind, const char *value)
{
	struct pl_device_telemetry *dt = l->dt;
	char *end;
	unsigned long i, j;
	uint64_t v;

	if (sub[0] < '0' || sub[0] > '9')
		goto bad;
	i = strtoul(sub, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		goto bad;
	j = strtoul(end + 1, &end, 10);
	/* the frame id comes as a string of digits (exact past 2^53), or as a
	 * number from a device older than that; the times are numbers */
	if (*end || !(kind == PL_JSON_NUMBER || (j == 0 && kind == PL_JSON_STRING)) ||
	    !pl__parse_u64_all(value, &v))
		goto bad;
	if (j == 0) {
		if (i != l->n_entries || (l->n_entries && l->pos != 3))
			goto bad;
		if (l->n_entries == MAX_LATENCY_ENTRIES)
			goto bad;
		if (l->n_entries == dt->entries_cap) {
			size_t cap = dt->entries_cap ? dt->entries_cap * 2 : 256;
			void *p = realloc(dt->entries, cap * sizeof(*dt->entries));

			if (!p)
				goto bad;
			dt->entries = p;
			dt->entries_cap = cap;
		}
		l->n_entries++;
		l->pos = 0;
	} else if (l->n_entries == 0 || i != l->n_entries - 1 || j != l->pos || j > 2) {
		goto bad;
	}
	dt->entries[l->n_entries - 1][l->pos++] = v;
	return;
bad:
	l->bad_latency = true;
}

static void on_diag_field(struct pl_diag_object *o, const char *key, enum pl_json_kind kind,
			  const char *value)
{
	struct pl_diag_field *f;

	/* scalars directly inside, numbers and booleans only: what the
	 * summary copies must be what the device said, not a guess */
	if (strchr(key, '.') || (kind != PL_JSON_NUMBER && kind != PL_JSON_BOOL) ||
	    o->n == PL_DIAG_FIELDS || strlen(key) >= sizeof(f->key) ||
	    strlen(value) >= sizeof(f->value))
		return;
	f = &o->f[o->n++];
	strcpy(f->key, key);
	strcpy(f->value, value);
	f->is_bool = kind == PL_JSON_BOOL;
}

static void on_scalar(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct line *l = ctx;

	if (strcmp(path, "type") == 0) {
		if (kind == PL_JSON_STRING && strlen(value) <= PL_TELEMETRY_TYPE_MAX) {
			strcpy(l->type, value);
			l->have_type = true;
		} else {
			l->bad_type = true;
		}
	} else if (strncmp(path, "frames.", 7) == 0) {
		on_entry(l, path + 7, kind, value);
	} else if (strcmp(path, "frames") == 0) {
		l->bad_latency = true;
	} else if (strcmp(path, "dropped") == 0) {
		l->have_dropped = kind == PL_JSON_NUMBER && pl__parse_u64_all(value, &l->dropped);
	} else if (strncmp(path, "last_send.", 10) == 0) {
		on_diag_field(&l->last_send, path + 10, kind, value);
	} else if (strncmp(path, "totals.", 7) == 0) {
		on_diag_field(&l->totals, path + 7, kind, value);
		if (strcmp(path + 7, "frames_held") == 0)
			l->have_held = kind == PL_JSON_NUMBER && pl__parse_u64_all(value, &l->held);
	}
}

static void frame_latency(struct pl_device_telemetry *dt, struct line *l)
{
	size_t i;

	dt->latency_lines++;
	if (l->bad_latency || (l->n_entries && l->pos != 3))
		dt->problems[PL_TM_BAD_LATENCY]++;
	if (l->have_dropped)
		dt->latency_device_dropped += l->dropped;
	for (i = 0; i < l->n_entries; i++) {
		int err;

		if (i == l->n_entries - 1 && l->pos != 3)
			break;
		dt->latency_entries++;
		if (!dt->table)
			continue;
		err = pl__latency_table_set_round_trip(dt->table, dt->entries[i][0],
						       dt->entries[i][1], dt->entries[i][2]);
		if (err == -ENOENT)
			dt->problems[PL_TM_LATENCY_UNKNOWN_FRAME]++;
		else if (err == -EINVAL)
			dt->problems[PL_TM_LATENCY_REPLY_BEFORE_SEND]++;
	}
}

static void one_line(struct pl_device_telemetry *dt, const char *text, size_t len)
{
	struct line l;
	size_t i;

	for (i = 0; i < len; i++)
		if (text[i] != ' ' && text[i] != '\t' && text[i] != '\r')
			break;
	if (i == len)
		return; /* a blank line carries nothing */
	dt->lines++;
	memset(&l, 0, sizeof(l));
	l.dt = dt;
	if (pl__json_walk(text, len, on_scalar, &l) < 0) {
		dt->problems[PL_TM_BAD_JSON]++;
		return;
	}
	if (l.bad_type || (l.have_type && strcmp(pl__telemetry_file_for(l.type), "other") == 0 &&
			   strcmp(l.type, "other") != 0)) {
		dt->problems[PL_TM_BAD_TYPE]++;
		l.have_type = false;
	}
	if (dt->line_hook)
		dt->line_hook(dt->line_ctx, l.have_type ? l.type : NULL, text, len);
	if (l.have_type && strcmp(l.type, "frame_latency") == 0) {
		frame_latency(dt, &l);
		return; /* the round trips are in frames.csv */
	}
	if (l.have_type && strcmp(l.type, "link_diag") == 0) {
		dt->link_diags++;
		dt->have_diag = true;
		dt->last_send = l.last_send;
		dt->totals = l.totals;
		if (l.have_held) {
			dt->have_frames_held = true;
			dt->frames_held = l.held;
		}
	}
	if (dt->files)
		pl__telemetry_files_write(dt->files, l.have_type ? l.type : NULL, text, len);
}

void pl__device_telemetry_feed(struct pl_device_telemetry *dt, const char *payload, size_t len)
{
	while (len > 0) {
		const char *nl = memchr(payload, '\n', len);
		size_t line_len = nl ? (size_t)(nl - payload) : len;

		one_line(dt, payload, line_len);
		if (!nl)
			break;
		len -= line_len + 1;
		payload = nl + 1;
	}
}

static void diag_object(struct pl_json *j, const char *key, const struct pl_diag_object *o)
{
	unsigned i;

	pl__json_begin_object(j, key);
	for (i = 0; i < o->n; i++) {
		const struct pl_diag_field *f = &o->f[i];
		uint64_t u;

		if (f->is_bool)
			pl__json_bool(j, f->key, strcmp(f->value, "true") == 0);
		else if (pl__parse_u64_all(f->value, &u))
			pl__json_u64(j, f->key, u);
		else
			pl__json_double(j, f->key, strtod(f->value, NULL), 3);
	}
	pl__json_end_object(j);
}

void pl__device_telemetry_diag_json(const struct pl_device_telemetry *dt, struct pl_json *j,
				    const char *key)
{
	if (!dt->have_diag) {
		pl__json_null(j, key);
		return;
	}
	pl__json_begin_object(j, key);
	diag_object(j, "last_send", &dt->last_send);
	diag_object(j, "totals", &dt->totals);
	pl__json_end_object(j);
}
