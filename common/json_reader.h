/* A small JSON reader for the JSON lines perflink writes and reads back:
 * it walks one document and calls back once per scalar with its dotted
 * path ("b.d.0" for {"b":{"d":[...]}}), its kind and its text: strings
 * decoded to UTF-8, numbers exactly as written, "true"/"false", "null".
 * Empty containers produce no call; a scalar at the top has the path "".
 *
 * Input is hostile: RFC 8259 syntax only (no comments, no trailing commas,
 * no leading zeros, no NaN), strings may not contain NUL (\u0000 is
 * refused) or raw control characters, and the nesting depth and path
 * length are bounded so that no input overflows a stack or a buffer.
 * Callbacks for the part before an error may already have run: use the
 * results only when the walk returned 0. */
#ifndef PL_COMMON_JSON_READER_H
#define PL_COMMON_JSON_READER_H

#include <stddef.h>

#define PL_JSON_READ_DEPTH 64  /* containers inside containers */
#define PL_JSON_READ_PATH 256  /* bytes of a dotted path, NUL included */

enum pl_json_kind { PL_JSON_STRING, PL_JSON_NUMBER, PL_JSON_BOOL, PL_JSON_NULL };

typedef void (*pl_json_walk_cb)(void *ctx, const char *path, enum pl_json_kind kind,
				const char *value);

/* Walk text[0..len). 0, -EINVAL for malformed text, -E2BIG when nested
 * deeper than PL_JSON_READ_DEPTH or a path would not fit
 * PL_JSON_READ_PATH, -ENOMEM. */
int pl__json_walk(const char *text, size_t len, pl_json_walk_cb cb, void *ctx);

#endif
