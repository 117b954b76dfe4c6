/* Loading one stage-profiler report from a JSON-lines file. */
#include "profile_report.h"
#include "json_reader.h"
#include "proc_parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The scalars of one line, as (path, value) pairs. */
struct flat {
	struct {
		char *path, *value;
		enum pl_json_kind kind;
	} *kv;
	size_t n, cap;
	bool nomem;
};

static void flat_add(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct flat *f = ctx;

	if (f->nomem)
		return;
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 256;
		void *kv = realloc(f->kv, cap * sizeof(*f->kv));

		if (!kv) {
			f->nomem = true;
			return;
		}
		f->kv = kv;
		f->cap = cap;
	}
	f->kv[f->n].path = strdup(path);
	f->kv[f->n].value = strdup(value);
	f->kv[f->n].kind = kind;
	if (!f->kv[f->n].path || !f->kv[f->n].value) {
		free(f->kv[f->n].path);
		free(f->kv[f->n].value);
		f->nomem = true;
		return;
	}
	f->n++;
}

static void flat_clear(struct flat *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		free(f->kv[i].path);
		free(f->kv[i].value);
	}
	f->n = 0;
	f->nomem = false;
}

static const char *flat_get(const struct flat *f, enum pl_json_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static const char *flat_get(const struct flat *f, enum pl_json_kind kind, const char *fmt, ...)
{
	char path[PL_JSON_READ_PATH];
	va_list ap;
	size_t i;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	for (i = 0; i < f->n; i++) {
		if (strcmp(f->kv[i].path, path) == 0)
			return f->kv[i].kind == kind ? f->kv[i].value : NULL;
	}
	return NULL;
}

#define FIELD(f, out, ...) pl__parse_u64_all(flat_get(f, PL_JSON_NUMBER, __VA_ARGS__), out)

static int fill(const struct flat *f, struct pl_profile_report *r, char *err, size_t errlen)
{
	const char *s;
	unsigned i;

	if (!FIELD(f, &r->pid, "pid") || !FIELD(f, &r->report, "report") ||
	    !FIELD(f, &r->interval_frames, "interval_frames") || !FIELD(f, &r->frames, "frames") ||
	    !FIELD(f, &r->elapsed_ns, "elapsed_ns") ||
	    !FIELD(f, &r->dropped_calls, "dropped_calls")) {
		snprintf(err, errlen, "line %zu: a report field is missing or not a count",
			 r->line);
		return -EINVAL;
	}
	s = flat_get(f, PL_JSON_STRING, "comm");
	snprintf(r->comm, sizeof(r->comm), "%s", s ? s : "?");
	for (i = 0;; i++) {
		struct pl_profile_stage *st;

		s = flat_get(f, PL_JSON_STRING, "stages.%u.name", i);
		if (!s)
			break;
		if (i == PL_PROFILE_MAX_STAGES) {
			snprintf(err, errlen, "line %zu: more than %d stages", r->line,
				 PL_PROFILE_MAX_STAGES);
			return -EINVAL;
		}
		st = &r->stage[i];
		snprintf(st->name, sizeof(st->name), "%s", s);
		s = flat_get(f, PL_JSON_STRING, "stages.%u.kind", i);
		snprintf(st->kind, sizeof(st->kind), "%s", s ? s : "other");
		if (!FIELD(f, &st->calls, "stages.%u.calls", i) ||
		    !FIELD(f, &st->errors, "stages.%u.errors", i) ||
		    !FIELD(f, &st->eagain, "stages.%u.retries_eagain", i) ||
		    !FIELD(f, &st->enodata, "stages.%u.retries_enodata", i) ||
		    !FIELD(f, &st->eintr, "stages.%u.retries_eintr", i) ||
		    !FIELD(f, &st->wall_total_ns, "stages.%u.wall_total_ns", i) ||
		    !FIELD(f, &st->wall_max_ns, "stages.%u.wall_max_ns", i) ||
		    !FIELD(f, &st->cpu_total_ns, "stages.%u.cpu_total_ns", i) ||
		    !FIELD(f, &st->cpu_max_ns, "stages.%u.cpu_max_ns", i) ||
		    !FIELD(f, &st->cache_bytes, "stages.%u.cache_bytes", i) ||
		    !FIELD(f, &st->stream_bytes, "stages.%u.stream_bytes", i)) {
			snprintf(err, errlen,
				 "line %zu: stage '%s' has a field missing or not a count", r->line,
				 st->name);
			return -EINVAL;
		}
	}
	r->n_stages = i;
	return 0;
}

int pl__profile_report_load(const char *path, const struct pl_profile_pick *pick,
			    struct pl_profile_report *out, char *err, size_t errlen)
{
	struct flat f = { NULL, 0, 0, false };
	char *line = NULL, *best = NULL;
	size_t cap = 0, lineno = 0, best_line = 0;
	unsigned skipped = 0;
	ssize_t n;
	FILE *in;
	int r = 0;

	in = fopen(path, "re");
	if (!in) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return r;
	}
	while ((n = getline(&line, &cap, in)) > 0) {
		const char *type;
		uint64_t v;

		lineno++;
		flat_clear(&f);
		if (pl__json_walk(line, (size_t)n, flat_add, &f) != 0 || f.nomem) {
			skipped++;
			continue;
		}
		type = flat_get(&f, PL_JSON_STRING, "type");
		if (!type || strcmp(type, "perflink-profile") != 0) {
			skipped++;
			continue;
		}
		if (pick->pid && (!FIELD(&f, &v, "pid") || v != pick->pid))
			continue;
		if (pick->report && (!FIELD(&f, &v, "report") || v != pick->report))
			continue;
		/* keep the text: the last match wins, and is parsed once more */
		free(best);
		best = strdup(line);
		if (!best) {
			r = -ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		best_line = lineno;
	}
	if (ferror(in)) {
		r = -EIO;
		snprintf(err, errlen, "%s: read error", path);
		goto out;
	}
	if (!best) {
		r = -ENOENT;
		snprintf(err, errlen, "%s: no %s%s", path,
			 pick->report ? "such report" : "perflink-profile report",
			 pick->pid ? " of that pid" : "");
		goto out;
	}
	memset(out, 0, sizeof(*out));
	out->line = best_line;
	out->skipped_lines = skipped;
	flat_clear(&f);
	if (pl__json_walk(best, strlen(best), flat_add, &f) != 0 || f.nomem) {
		r = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	r = fill(&f, out, err, errlen);
	if (r < 0) {
		char msg[256];

		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, errlen, "%s: %s", path, msg);
	}
out:
	flat_clear(&f);
	free(f.kv);
	free(best);
	free(line);
	fclose(in);
	return r;
}

const struct pl_profile_stage *pl__profile_stage(const struct pl_profile_report *r,
						 const char *name)
{
	unsigned i;

	for (i = 0; i < r->n_stages; i++) {
		if (strcmp(r->stage[i].name, name) == 0)
			return &r->stage[i];
	}
	return NULL;
}
