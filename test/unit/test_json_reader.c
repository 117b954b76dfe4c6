/* The JSON reader: paths and values of well-formed documents (including what
 * our own writer produces), and refusal of everything malformed. */
#include "json_reader.h"
#include "json_writer.h"
#include "tap.h"

#include <errno.h>
#include <stdlib.h>

static char seen[4096];

static void record(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	static const char kinds[] = "snbz";
	size_t len = strlen(seen);

	(void)ctx;
	snprintf(seen + len, sizeof(seen) - len, "%s=%c:%s;", path, kinds[kind], value);
}

static int walk(const char *text)
{
	seen[0] = '\0';
	return pl__json_walk(text, strlen(text), record, NULL);
}

int main(void)
{
	static const char *const bad[] = {
		"", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "[1,]", "[1 2]", "{a:1}",
		"{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":-}", "{\"a\":1e}", "{\"a\":+1}",
		"{\"a\":tru}", "{\"a\":nul}", "{\"a\":\"x}", "{\"a\":\"\\x\"}",
		"{\"a\":\"\\u12g4\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}",
		"{\"a\":\"\\u0000\"}", "{\"a\":\"tab\there\"}", "{} {}", "{}x", "\"a\" 1",
		"{\"a\":NaN}", "{\"a\":[}", "[{]",
	};
	struct pl_json j;
	char deep[200], longkey[600];
	unsigned i;
	int ret;

	TAP_OK(walk("{\"a\":1,\"b\":{\"c\":true,\"d\":[1,\"x\",null]},\"e\":-0.5e+3}") == 0,
	       "nested document");
	TAP_EQ_STR(seen, "a=n:1;b.c=b:true;b.d.0=n:1;b.d.1=s:x;b.d.2=z:null;e=n:-0.5e+3;",
		   "paths and values");
	TAP_OK(walk(" \t\r\n{ \"a\" : [ ] , \"b\" : { } }\n") == 0 && seen[0] == '\0',
	       "whitespace and empty containers");
	TAP_OK(walk("\"top\"") == 0, "a scalar at top level");
	TAP_EQ_STR(seen, "=s:top;", "has an empty path");
	TAP_OK(walk("{\"s\":\"q\\\"b\\\\s\\/n\\nt\\tu\\u00e9\\ud83d\\ude00\"}") == 0, "escapes");
	TAP_EQ_STR(seen, "s=s:q\"b\\s/n\nt\tu\xc3\xa9\xf0\x9f\x98\x80;", "decoded to UTF-8");

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		TAP_OK(walk(bad[i]) < 0, "refused: %s", bad[i]);

	memset(deep, '[', sizeof(deep));
	deep[sizeof(deep) - 1] = '\0';
	TAP_OK(walk(deep) == -E2BIG, "nesting beyond the limit is -E2BIG, not a stack overflow");
	longkey[0] = '{';
	longkey[1] = '"';
	memset(longkey + 2, 'k', sizeof(longkey) - 2);
	memcpy(longkey + sizeof(longkey) - 6, "\":1}", 5);
	TAP_OK(walk(longkey) == -E2BIG, "a key longer than a path may be is -E2BIG");
	TAP_OK(pl__json_walk("{\"a\":1}", 5, record, NULL) < 0, "the length is respected");

	/* What our own writer produces reads back. */
	pl__json_init(&j);
	pl__json_begin_object(&j, NULL);
	pl__json_str(&j, "weird", "a\"b\\c\n\x01\x7f");
	pl__json_double(&j, "nan", 0.0 / 0.0, 2);
	pl__json_i64(&j, "neg", -42);
	pl__json_begin_array(&j, "arr");
	pl__json_bool(&j, NULL, false);
	pl__json_end_array(&j);
	pl__json_end_object(&j);
	ret = walk(pl__json_finish(&j));
	TAP_OK(ret == 0, "the writer's output reads back");
	TAP_EQ_STR(seen, "weird=s:a\"b\\c\n\x01\x7f;nan=z:null;neg=n:-42;arr.0=b:false;",
		   "with the same values");
	pl__json_free(&j);
	return tap_done();
}
