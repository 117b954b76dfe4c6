/* Building the stage table and the request-code index over it. */
#include "stages.h"
#include "diag.h"

#include <errno.h>
#include <string.h>

struct pl_stage_table pl__stages;

/* Boundaries named by the stage file, resolved after the built-ins exist
 * (a file may name a built-in stage). */
#define MAX_BOUNDARIES 8
static struct {
	char name[PL_STAGE_NAME_MAX];
	unsigned line;
} boundary_want[MAX_BOUNDARIES];
static unsigned n_boundary_want;
static const char *build_path;

static const char *const kind_names[PL_KIND_COUNT] = {
	[PL_KIND_SUBMIT] = "submit", [PL_KIND_WAIT] = "wait",   [PL_KIND_DEQUEUE] = "dequeue",
	[PL_KIND_QUEUE] = "queue",   [PL_KIND_CACHE] = "cache", [PL_KIND_OTHER] = "other",
};

const char *pl__kind_name(enum pl_stage_kind kind)
{
	return (unsigned)kind < PL_KIND_COUNT ? kind_names[kind] : "other";
}

int pl__kind_parse(const char *s, enum pl_stage_kind *out)
{
	unsigned k;

	for (k = 0; k < PL_KIND_COUNT; k++) {
		if (strcmp(s, kind_names[k]) == 0) {
			*out = (enum pl_stage_kind)k;
			return 0;
		}
	}
	return -EINVAL;
}

int pl__stages_find(const char *name)
{
	unsigned i;

	for (i = 0; i < pl__stages.n_stages; i++) {
		if (strcmp(pl__stages.stage[i].name, name) == 0)
			return (int)i;
	}
	return -1;
}

/* Returns the stage's index: a name seen before is the same stage, as long
 * as the kind agrees. */
int pl__stages_add_stage(const char *name, enum pl_stage_kind kind, unsigned line,
			 char *err, size_t errlen)
{
	bool from_config = line > 0;
	struct pl_stage *st;
	size_t n = strlen(name);
	int i = pl__stages_find(name);

	if (i >= 0) {
		const struct pl_stage *o = &pl__stages.stage[i];

		if (o->kind != kind && from_config) {
			pl__fmt(err, errlen, "stage '%s' was declared with kind %s on line %u",
				name, pl__kind_name((enum pl_stage_kind)o->kind), o->line);
			return -EINVAL;
		}
		if (o->kind != kind) {
			/* the file (read first) took a built-in stage's name */
			pl__fmt(err, errlen, "%s:%u: stage '%s' is built in, with kind %s",
				build_path, o->line, name, pl__kind_name(kind));
			return -EINVAL;
		}
		pl__stages.stage[i].from_config |= from_config;
		return i;
	}
	if (n == 0 || n >= PL_STAGE_NAME_MAX) {
		pl__fmt(err, errlen, "a stage name has 1 to %u characters", PL_STAGE_NAME_MAX - 1);
		return -EINVAL;
	}
	if (pl__stages.n_stages >= PL_MAX_STAGES) {
		pl__fmt(err, errlen, "more than %u stages", PL_MAX_STAGES);
		return -EINVAL;
	}
	st = &pl__stages.stage[pl__stages.n_stages];
	memcpy(st->name, name, n + 1);
	st->kind = (uint8_t)kind;
	st->boundary = false;
	st->from_config = from_config;
	st->line = line;
	return (int)pl__stages.n_stages++;
}

/* "*" is the same as no pattern (bit 0); others get a bit each. */
int pl__stages_add_pattern(const char *pattern, uint32_t *bit, char *err, size_t errlen)
{
	size_t n = strlen(pattern);
	unsigned i;

	if (strcmp(pattern, "*") == 0) {
		*bit = 0;
		return 0;
	}
	for (i = 0; i < pl__stages.n_patterns; i++) {
		if (strcmp(pl__stages.pattern[i], pattern) == 0) {
			*bit = 1u << i;
			return 0;
		}
	}
	if (n == 0 || n >= PL_PATTERN_MAX) {
		pl__fmt(err, errlen, "a device pattern has 1 to %u characters", PL_PATTERN_MAX - 1);
		return -EINVAL;
	}
	if (pl__stages.n_patterns >= PL_MAX_PATTERNS) {
		pl__fmt(err, errlen, "more than %u distinct device patterns", PL_MAX_PATTERNS);
		return -EINVAL;
	}
	memcpy(pl__stages.pattern[pl__stages.n_patterns], pattern, n + 1);
	*bit = 1u << pl__stages.n_patterns++;
	return 0;
}

int pl__stages_add_rule(const struct pl_rule *r, char *err, size_t errlen)
{
	unsigned i;

	for (i = 0; i < pl__stages.n_rules; i++) {
		const struct pl_rule *o = &pl__stages.rule[i];

		if (o->code != r->code || o->pattern_bit != r->pattern_bit)
			continue;
		if (o->from_config && r->from_config) {
			pl__fmt(err, errlen, "request %x on this device is already stage '%s'",
				r->code, pl__stages.stage[o->stage].name);
			return -EINVAL;
		}
		/* the first rule for a (pattern, code) pair wins: the file's rules are
		 * added before the built-in ones; two built-in layouts that coincide on
		 * this ABI are one rule */
		return 0;
	}
	if (pl__stages.n_rules >= PL_MAX_RULES) {
		pl__fmt(err, errlen, "more than %u rules", PL_MAX_RULES);
		return -EINVAL;
	}
	pl__stages.rule[pl__stages.n_rules++] = *r;
	return 0;
}

/* Stable sort by code (config rules were added first and stay first among
 * equal codes), then index the runs of equal codes. */
static int index_rules(char *err, size_t errlen)
{
	unsigned i, j;

	for (i = 1; i < pl__stages.n_rules; i++) {
		struct pl_rule r = pl__stages.rule[i];

		for (j = i; j > 0 && pl__stages.rule[j - 1].code > r.code; j--)
			pl__stages.rule[j] = pl__stages.rule[j - 1];
		pl__stages.rule[j] = r;
	}
	for (i = 0; i < pl__stages.n_rules; i = j) {
		uint32_t code = pl__stages.rule[i].code;
		uint32_t h = (code * 2654435761u) >> 23;

		for (j = i; j < pl__stages.n_rules && pl__stages.rule[j].code == code; j++)
			;
		if (j - i > 255) {
			pl__fmt(err, errlen, "too many rules for request %x", code);
			return -EINVAL;
		}
		while (pl__stages.hash[h].used)
			h = (h + 1) & (PL_HASH_SLOTS - 1);
		pl__stages.hash[h].code = code;
		pl__stages.hash[h].first = (uint16_t)i;
		pl__stages.hash[h].count = (uint8_t)(j - i);
		pl__stages.hash[h].used = 1;
	}
	return 0;
}

int pl__stages_want_boundary(const char *name, unsigned line, char *err, size_t errlen)
{
	size_t n = strlen(name);

	if (n == 0 || n >= PL_STAGE_NAME_MAX) {
		pl__fmt(err, errlen, "a stage name has 1 to %u characters", PL_STAGE_NAME_MAX - 1);
		return -EINVAL;
	}
	if (n_boundary_want >= MAX_BOUNDARIES) {
		pl__fmt(err, errlen, "more than %u frame boundaries", MAX_BOUNDARIES);
		return -EINVAL;
	}
	memcpy(boundary_want[n_boundary_want].name, name, n + 1);
	boundary_want[n_boundary_want++].line = line;
	return 0;
}

/* Without a boundary in the file, a frame completes with each capture-queue
 * DQBUF (camera frames and encoded bitstream buffers alike). */
static int apply_boundaries(char *err, size_t errlen)
{
	unsigned i;
	int s;

	pl__stages.explicit_boundary = n_boundary_want > 0;
	if (!pl__stages.explicit_boundary) {
		s = pl__stages_find("v4l2_dqbuf");
		if (s >= 0)
			pl__stages.stage[s].boundary = true;
		return 0;
	}
	for (i = 0; i < n_boundary_want; i++) {
		s = pl__stages_find(boundary_want[i].name);
		if (s < 0) {
			pl__fmt(err, errlen, "%s:%u: frame-boundary names no stage: '%s'",
				build_path, boundary_want[i].line, boundary_want[i].name);
			return -EINVAL;
		}
		pl__stages.stage[s].boundary = true;
	}
	return 0;
}

/* Each dequeue and wait stage gets a companion, NAME.wait of kind wait, for
 * the time a thread spends in poll, select or epoll on that stage's device
 * before the call (waits.h): a poll-based capture client waits there, not
 * in its DQBUF. Added last, so that a file's stages and the built-in ones
 * always have room first; a stage whose companion's name would be too
 * long, is already taken, or finds the table full, goes without (its waits
 * are then not timed). */
static void add_wait_companions(void)
{
	unsigned n = pl__stages.n_stages, i;
	char name[PL_STAGE_NAME_MAX];
	char err[8];

	for (i = 0; i < n && pl__stages.n_stages < PL_MAX_STAGES; i++) {
		struct pl_stage *st = &pl__stages.stage[i];
		int w;

		if (st->kind != PL_KIND_DEQUEUE && st->kind != PL_KIND_WAIT)
			continue;
		if (strlen(st->name) + sizeof(PL_WAIT_SUFFIX) > sizeof(name))
			continue;
		pl__fmt(name, sizeof(name), "%s" PL_WAIT_SUFFIX, st->name);
		if (pl__stages_find(name) >= 0)
			continue;
		w = pl__stages_add_stage(name, PL_KIND_WAIT, 0, err, sizeof(err));
		if (w >= 0)
			st->wait_stage = (uint8_t)(w + 1);
	}
}

/* The file's rules first, so that they win over built-in ones. */
static int build(const char *path, char *text, size_t len, char *err, size_t errlen)
{
	int r = 0;

	memset(&pl__stages, 0, sizeof(pl__stages));
	pl__stages.cacheflush_stage = -1;
	n_boundary_want = 0;
	build_path = path ? path : "";
	err[0] = '\0';
	if (text)
		r = pl__stages_parse_text(build_path, text, len, err, errlen);
	else if (path && *path)
		r = pl__stages_load_file(path, err, errlen);
	if (r < 0)
		return r;
	r = pl__stages_add_builtins(err, errlen);
	if (r == 0)
		r = apply_boundaries(err, errlen);
	if (r == 0)
		r = index_rules(err, errlen);
	if (r == 0)
		add_wait_companions();
	/* a limit the file's stages reach only together with the built-in ones */
	if (r < 0 && *build_path && strncmp(err, build_path, strlen(build_path)) != 0) {
		char msg[256];

		pl__fmt(msg, sizeof(msg), "%s", err);
		pl__fmt(err, errlen, "%s: %s (with the built-in stages)", build_path, msg);
	}
	return r;
}

int pl__stages_build(const char *path, char *err, size_t errlen)
{
	return build(path, NULL, 0, err, errlen);
}

int pl__stages_build_text(const char *name, char *text, size_t len, char *err, size_t errlen)
{
	return build(name, text, len, err, errlen);
}

bool pl__glob_match(const char *p, const char *s)
{
	const char *star_p = NULL, *star_s = NULL;

	while (*s) {
		if (*p == '*') {
			star_p = ++p;
			star_s = s;
		} else if (*p == '?' || *p == *s) {
			p++;
			s++;
		} else if (star_p) {
			p = star_p;
			s = ++star_s;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}
