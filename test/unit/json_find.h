/* One value out of a JSON document by its dotted path (the paths of
 * common/json_reader.h: "last_send.bytes", "runs.0.mbps"), for the tests
 * that check a summary or a telemetry line. */
#ifndef PL_TEST_JSON_FIND_H
#define PL_TEST_JSON_FIND_H

#include "json_reader.h"

#include <stdio.h>
#include <string.h>

struct json_found {
	const char *want;
	char value[128]; /* as text, the last occurrence */
	int hits;        /* how often the path occurs: 1 in a well-formed summary */
};

static void json_found_cb(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct json_found *f = ctx;

	(void)kind;
	if (strcmp(path, f->want) == 0) {
		snprintf(f->value, sizeof(f->value), "%s", value);
		f->hits++;
	}
}

/* hits 0 when doc is NULL or does not parse. */
static inline struct json_found json_find(const char *doc, const char *path)
{
	struct json_found f = { .want = path };

	if (!doc || pl__json_walk(doc, strlen(doc), json_found_cb, &f) < 0)
		f.hits = 0;
	return f;
}

#endif
