/* A small JSON writer into a caller-owned, growable buffer: one object per
 * line (JSONL) is what perflink writes everywhere. It escapes strings, keeps
 * track of commas, and never fails halfway: on allocation failure the writer
 * is marked failed and pl__json_finish reports it.
 *
 *   struct pl_json j;
 *   pl__json_init(&j);
 *   pl__json_begin_object(&j, NULL);
 *   pl__json_u64(&j, "pid", 42);
 *   pl__json_str(&j, "comm", "loggerd");
 *   pl__json_end_object(&j);
 *   const char *line = pl__json_finish(&j);  // "{...}\n", NUL-terminated
 */
#ifndef PL_COMMON_JSON_WRITER_H
#define PL_COMMON_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PL_JSON_MAX_DEPTH 16

struct pl_json {
	char *buf;
	size_t len, cap;
	bool failed;
	int depth;
	bool need_comma[PL_JSON_MAX_DEPTH];
};

void pl__json_init(struct pl_json *j);
/* Forget the contents, keep the buffer. */
void pl__json_reset(struct pl_json *j);
void pl__json_free(struct pl_json *j);

/* key is NULL inside arrays and for the top-level value. */
void pl__json_begin_object(struct pl_json *j, const char *key);
void pl__json_end_object(struct pl_json *j);
void pl__json_begin_array(struct pl_json *j, const char *key);
void pl__json_end_array(struct pl_json *j);
void pl__json_str(struct pl_json *j, const char *key, const char *value);
/* A string of at most len bytes (it may end earlier, at a NUL). */
void pl__json_str_n(struct pl_json *j, const char *key, const char *value, size_t len);
void pl__json_u64(struct pl_json *j, const char *key, uint64_t value);
void pl__json_i64(struct pl_json *j, const char *key, int64_t value);
/* decimals: digits after the point; NaN and infinities are written as null. */
void pl__json_double(struct pl_json *j, const char *key, double value, int decimals);
void pl__json_bool(struct pl_json *j, const char *key, bool value);
void pl__json_null(struct pl_json *j, const char *key);

/* Append a newline and return the NUL-terminated text, or NULL if any step
 * failed (allocation, unbalanced nesting). */
const char *pl__json_finish(struct pl_json *j);

#endif
