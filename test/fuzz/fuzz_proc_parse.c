/* libFuzzer target: every /proc parser in common/proc/proc_parse.h and
 * common/proc/proc_parse_mem.h, and the tracer's vmstat table, on arbitrary
 * bytes. The parsers take NUL-terminated text, so the input is copied into a
 * terminated buffer (an embedded NUL just ends the text early, as it would
 * for a /proc file read through pl__procfile_read). */
#include "proc_parse.h"
#include "proc_parse_mem.h"
#include "stall_memcg.h"
#include "tracer_sys.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "MemFree", "Dirty", "compact_stall", "allocstall",
					     "Pss", "wchar" };
	char *text = malloc(size + 1);
	struct pl_pid_stat st;
	struct pl_pid_io io;
	struct pl_diskstat d;
	struct pl_psi psi;
	uint64_t vals[6];
	const char *cur;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	pl__parse_pid_stat(text, &st);
	pl__parse_pid_io(text, &io);
	pl__parse_keyed_u64(text, keys, 6, vals);
	pl__parse_pressure(text, &psi);
	{
		struct pl_vmstat vm;

		char cg[64];
		bool v2;

		pl__tsys_parse_vmstat_all(text, &vm);
		pl__memcg_parse(text, cg, sizeof(cg), &v2);
	}
	{
		struct pl_stat_cpu sc;

		pl__parse_stat_cpu(text, &sc);
	}
	cur = text;
	while (pl__parse_diskstats_next(&cur, &d) != 0)
		;
	{
		struct pl_pid_status status;
		struct pl_schedstat ss;
		struct pl_smaps_sum sum;
		struct pl_buddy_zone zone;
		const char *key;
		size_t key_len;
		uint64_t val;
		int64_t v;

		pl__parse_pid_status(text, &status);
		pl__parse_schedstat(text, &ss);
		pl__parse_smaps(text, &sum);
		pl__parse_sysctl_i64(text, &v);
		cur = text;
		while (pl__parse_buddyinfo_next(&cur, &zone) != 0)
			;
		cur = text;
		while (pl__parse_kv_next(&cur, &key, &key_len, &val) != 0)
			;
	}
	free(text);
	return 0;
}
