/* See pprof_profile.h. Field numbers: github.com/google/pprof
 * proto/profile.proto. */
#include "pprof_profile.h"
#include "protobuf_writer.h"
#include "recording.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,
	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	MAPPING_ID = 1,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

/* The string table's index: an open-addressed table of the strings, and
 * per string the function and the mapping it names (ids from 1; 0: none
 * yet). */
struct name {
	char *s;      /* NULL: free slot */
	size_t index; /* in the string table */
};

/* a string of the table, by index */
struct string {
	const char *s;
	uint64_t function_id; /* the function of that name */
	uint64_t mapping_id;  /* the mapping of that module */
};

struct profile {
	struct pl_pb pb;
	const struct pl_recording *r;
	struct name *slots;
	size_t n_slots, n_strings;
	struct string *strings;
	size_t cap_strings;
	uint64_t n_functions, n_mappings;
	const char **frames;    /* one stack's frames, scratch */
	size_t cap_frames;
	int err;
};

static uint64_t hash_of(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int rehash(struct profile *p)
{
	size_t n = p->n_slots ? p->n_slots * 2 : 256, i;
	struct name *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < p->n_slots; i++) {
		size_t k;

		if (!p->slots[i].s)
			continue;
		for (k = hash_of(p->slots[i].s) & (n - 1); slots[k].s; k = (k + 1) & (n - 1))
			;
		slots[k] = p->slots[i];
	}
	free(p->slots);
	p->slots = slots;
	p->n_slots = n;
	return 0;
}

/* s's index in the string table (added if new); 0 ("") on ENOMEM, noted */
static size_t intern(struct profile *p, const char *s)
{
	size_t k;
	int err;

	if (p->err)
		return 0;
	if ((p->n_strings + 1) * 2 > p->n_slots && (err = rehash(p)) < 0)
		goto fail;
	for (k = hash_of(s) & (p->n_slots - 1); p->slots[k].s; k = (k + 1) & (p->n_slots - 1))
		if (strcmp(p->slots[k].s, s) == 0)
			return p->slots[k].index;
	if ((err = pl__recording_grow((void **)&p->strings, &p->cap_strings, p->n_strings,
				      sizeof(*p->strings))) < 0)
		goto fail;
	if (!(p->slots[k].s = strdup(s))) {
		err = -ENOMEM;
		goto fail;
	}
	p->slots[k].index = p->n_strings;
	p->strings[p->n_strings] = (struct string){ p->slots[k].s, 0, 0 };
	return p->n_strings++;
fail:
	p->err = err;
	return 0;
}

static void value_type(struct profile *p, uint32_t field, const char *type, const char *unit)
{
	size_t t = intern(p, type), u = intern(p, unit);

	pl__pb_begin(&p->pb, field);
	pl__pb_varint_field(&p->pb, VALUE_TYPE_TYPE, t);
	pl__pb_varint_field(&p->pb, VALUE_TYPE_UNIT, u);
	pl__pb_end(&p->pb);
}

/* The function (and its one location, of the same id) named frame. */
static uint64_t function_id_of(struct profile *p, const char *frame)
{
	size_t name = intern(p, frame);

	if (p->err)
		return 0;
	if (!p->strings[name].function_id)
		p->strings[name].function_id = ++p->n_functions;
	return p->strings[name].function_id;
}

/* leaf first, as pprof wants location_id */
static void sample(struct profile *p, const struct pl_recorded_window *w,
		   const struct pl_recorded_stack *s)
{
	const char *f = s->frames;
	size_t n = 0, i;
	char *copy, *frame, *save = NULL;

	if (p->err)
		return;
	if (!(copy = strdup(f))) {
		p->err = -ENOMEM;
		return;
	}
	for (frame = strtok_r(copy, ";", &save); frame; frame = strtok_r(NULL, ";", &save)) {
		if (n == p->cap_frames) {
			size_t cap = p->cap_frames ? p->cap_frames * 2 : 64;
			const char **v = realloc(p->frames, cap * sizeof(*v));

			if (!v) {
				p->err = -ENOMEM;
				free(copy);
				return;
			}
			p->frames = v;
			p->cap_frames = cap;
		}
		p->frames[n++] = frame;
	}
	pl__pb_begin(&p->pb, PROFILE_SAMPLE);
	for (i = n; i-- > 0;)
		pl__pb_varint_field(&p->pb, SAMPLE_LOCATION_ID, function_id_of(p, p->frames[i]));
	pl__pb_varint_field(&p->pb, SAMPLE_VALUE, s->count);
	pl__pb_varint_field(&p->pb, SAMPLE_VALUE,
			    w->period_ns && s->count <= INT64_MAX / w->period_ns
				    ? s->count * w->period_ns
				    : 0);
	pl__pb_begin(&p->pb, SAMPLE_LABEL);
	pl__pb_varint_field(&p->pb, LABEL_KEY, intern(p, "pid"));
	pl__pb_varint_field(&p->pb, LABEL_NUM, (uint64_t)w->pid);
	pl__pb_end(&p->pb);
	pl__pb_begin(&p->pb, SAMPLE_LABEL);
	pl__pb_varint_field(&p->pb, LABEL_KEY, intern(p, "comm"));
	pl__pb_varint_field(&p->pb, LABEL_STR, intern(p, w->comm[0] ? w->comm : "?"));
	pl__pb_end(&p->pb);
	pl__pb_end(&p->pb);
	free(copy);
}

static void window_samples(struct profile *p, const struct pl_recorded_window *w)
{
	size_t i;

	for (i = 0; i < w->n_stacks; i++)
		sample(p, w, &p->r->stacks[w->first_stack + i]);
}

/* The build-id the windows listed for the module named name; NULL when
 * none did, or when two builds went by that name */
static const char *build_id_of(const struct pl_recording *r, const char *name)
{
	const char *found = NULL;
	size_t i;

	for (i = 0; i < r->n_modules; i++) {
		const struct pl_recorded_module *m = &r->modules[i];

		if (!m->build_id[0] || strcmp(m->name, name) != 0)
			continue;
		if (found && strcmp(found, m->build_id) != 0)
			return NULL;
		found = m->build_id;
	}
	return found;
}

/* The functions, their locations and the modules the samples named; the
 * string table last, since these add to it. */
static void tables(struct profile *p)
{
	size_t i, n = p->n_strings;

	for (i = 0; i < n && !p->err; i++) {
		const struct pl_recorded_function *f;
		uint64_t id = p->strings[i].function_id, mapping = 0;
		size_t file = 0, name;

		if (!id)
			continue;
		f = pl__recording_function(p->r, p->strings[i].s);
		if (f && f->module) {
			size_t m = intern(p, f->module);

			if (!p->err && !p->strings[m].mapping_id) {
				const char *build_id = build_id_of(p->r, f->module);
				size_t b = build_id ? intern(p, build_id) : 0;

				p->strings[m].mapping_id = ++p->n_mappings;
				pl__pb_begin(&p->pb, PROFILE_MAPPING);
				pl__pb_varint_field(&p->pb, MAPPING_ID, p->strings[m].mapping_id);
				pl__pb_varint_field(&p->pb, MAPPING_FILENAME, m);
				if (b)
					pl__pb_varint_field(&p->pb, MAPPING_BUILD_ID, b);
				/* names come from the device: nothing to symbolize */
				pl__pb_varint_field(&p->pb, MAPPING_HAS_FUNCTIONS, 1);
				pl__pb_end(&p->pb);
			}
			mapping = p->strings[m].mapping_id;
		}
		if (f && f->file)
			file = intern(p, f->file);
		/* the name as the device's report shows it; the folded
		 * spelling, where it is the only one */
		name = f && f->shown ? intern(p, f->shown) : i;
		pl__pb_begin(&p->pb, PROFILE_FUNCTION);
		pl__pb_varint_field(&p->pb, FUNCTION_ID, id);
		pl__pb_varint_field(&p->pb, FUNCTION_NAME, name);
		pl__pb_varint_field(&p->pb, FUNCTION_SYSTEM_NAME, name);
		if (file)
			pl__pb_varint_field(&p->pb, FUNCTION_FILENAME, file);
		pl__pb_end(&p->pb);
		pl__pb_begin(&p->pb, PROFILE_LOCATION);
		pl__pb_varint_field(&p->pb, LOCATION_ID, id);
		if (mapping)
			pl__pb_varint_field(&p->pb, LOCATION_MAPPING_ID, mapping);
		pl__pb_begin(&p->pb, LOCATION_LINE);
		pl__pb_varint_field(&p->pb, LINE_FUNCTION_ID, id);
		if (f && f->file)
			pl__pb_varint_field(&p->pb, LINE_LINE, f->line);
		pl__pb_end(&p->pb);
		pl__pb_end(&p->pb);
	}
	for (i = 0; i < p->n_strings; i++)
		pl__pb_string_field(&p->pb, PROFILE_STRING_TABLE, p->strings[i].s);
}

/* The serialised profile, gzipped into out. */
static int gzip_to(FILE *out, const uint8_t *data, size_t len)
{
	uint8_t chunk[16384];
	z_stream z;
	int zr, err = 0;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip header and trailer around the deflate stream. The
	 * fastest level, as Go's runtime/pprof writes its profiles: on 1000
	 * windows of 300 stacks the default level took 4.9-5.8 s of CPU
	 * against 2.1-2.7 s, for a merged profile 7% smaller. */
	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)(uintptr_t)data;
	do {
		size_t step = len > UINT32_MAX ? UINT32_MAX : len;

		z.avail_in = (uInt)step;
		len -= step;
		do {
			z.next_out = chunk;
			z.avail_out = sizeof(chunk);
			zr = deflate(&z, len ? Z_NO_FLUSH : Z_FINISH);
			if (zr == Z_STREAM_ERROR) {
				err = -EIO;
				break;
			}
			if (fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out) !=
			    sizeof(chunk) - z.avail_out) {
				err = -EIO;
				break;
			}
		} while (z.avail_out == 0);
	} while (!err && len);
	if (!err && zr != Z_STREAM_END)
		err = -EIO;
	deflateEnd(&z);
	return err;
}

/* windows [first, first + n) as one profile */
static int write_profile(FILE *out, const struct pl_recording *r, size_t first, size_t n)
{
	struct profile p;
	uint64_t period = 0, duration_ns = 0;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *mem;
	int err;

	memset(&p, 0, sizeof(p));
	p.r = r;
	pl__pb_init(&p.pb);
	intern(&p, ""); /* string 0 is "", as profile.proto requires */
	value_type(&p, PROFILE_SAMPLE_TYPE, "samples", "count");
	value_type(&p, PROFILE_SAMPLE_TYPE, "cpu", "nanoseconds");
	for (i = first; i < first + n; i++) {
		const struct pl_recorded_window *w = &r->windows[i];

		if (!period)
			period = w->period_ns;
		if (w->window_s <= UINT64_MAX / 1000000000u - duration_ns / 1000000000u)
			duration_ns += w->window_s * 1000000000u;
		window_samples(&p, w);
	}
	value_type(&p, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
	if (period)
		pl__pb_varint_field(&p.pb, PROFILE_PERIOD, period);
	if (duration_ns)
		pl__pb_varint_field(&p.pb, PROFILE_DURATION_NANOS, duration_ns);
	tables(&p);
	err = p.err;
	if (!err && !(mem = open_memstream(&buf, &len)))
		err = -ENOMEM;
	else if (!err) {
		err = pl__pb_flush(&p.pb, mem);
		if (fclose(mem) != 0 && !err)
			err = -ENOMEM;
		if (!err)
			err = gzip_to(out, (const uint8_t *)buf, len);
	}
	free(buf);
	pl__pb_free(&p.pb);
	for (i = 0; i < p.n_slots; i++)
		free(p.slots[i].s);
	free(p.slots);
	free(p.strings);
	free(p.frames);
	if (err < 0)
		return err;
	return ferror(out) ? -EIO : 0;
}

int pl__pprof_write_merged(FILE *out, const void *recording)
{
	const struct pl_recording *r = recording;

	return write_profile(out, r, 0, r->n_windows);
}

int pl__pprof_write_window(FILE *out, const void *ctx)
{
	const struct pl_pprof_window *w = ctx;

	if (w->window >= w->r->n_windows)
		return -EINVAL;
	return write_profile(out, w->r, w->window, 1);
}
