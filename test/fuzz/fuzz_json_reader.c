/* libFuzzer target: the JSON reader (common/json_reader.h) on arbitrary
 * bytes, as `perflink status` meets whatever answers on the socket. Every
 * reported path must fit the documented limit. */
#include "json_reader.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	(void)ctx;
	if (strlen(path) >= PL_JSON_READ_PATH || !value || kind > PL_JSON_NULL)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pl__json_walk((const char *)data, size, check, NULL);
	return 0;
}
