/* libFuzzer target: the preload shim's stage file parser
 * (preload/profiler/stages_file.c) on arbitrary bytes, as a target process meets
 * whatever PERFLINK_STAGES names. A file either builds a table whose
 * indexes all hold, or is refused with a "name:line: " message. */
#include "stages.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], *text;
	unsigned i, n;

	if (size > 65535)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (pl__stages_build_text("fuzz.stages", text, size, err, sizeof(err)) < 0) {
		if (strncmp(err, "fuzz.stages:", 12) != 0)
			abort();
	} else {
		for (i = 0; i < pl__stages.n_rules; i++) {
			const struct pl_rule *r = &pl__stages.rule[i], *first;

			if (r->stage >= pl__stages.n_stages ||
			    (r->pattern_bit && r->pattern_bit >= 1u << pl__stages.n_patterns))
				abort();
			first = pl__stages_lookup(r->code, &n);
			if (!first || first > r || r >= first + n)
				abort();
		}
		pl__glob_match("*a?b*", "xxaybzz");
	}
	free(text);
	return 0;
}
