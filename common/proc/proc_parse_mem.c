/* See proc_parse_mem.h. */
#include "proc_parse_mem.h"
#include "proc_parse.h"

#include <errno.h>
#include <string.h>

#define STATUS_KEYS(X)                               \
	X(PL_ST_VMPEAK, "VmPeak")                    \
	X(PL_ST_VMSIZE, "VmSize")                    \
	X(PL_ST_VMLCK, "VmLck")                      \
	X(PL_ST_VMPIN, "VmPin")                      \
	X(PL_ST_VMHWM, "VmHWM")                      \
	X(PL_ST_VMRSS, "VmRSS")                      \
	X(PL_ST_RSSANON, "RssAnon")                  \
	X(PL_ST_RSSFILE, "RssFile")                  \
	X(PL_ST_RSSSHMEM, "RssShmem")                \
	X(PL_ST_VMDATA, "VmData")                    \
	X(PL_ST_VMSTK, "VmStk")                      \
	X(PL_ST_VMEXE, "VmExe")                      \
	X(PL_ST_VMLIB, "VmLib")                      \
	X(PL_ST_VMPTE, "VmPTE")                      \
	X(PL_ST_VMSWAP, "VmSwap")                    \
	X(PL_ST_HUGETLB, "HugetlbPages")             \
	X(PL_ST_TGID, "Tgid")                        \
	X(PL_ST_PID, "Pid")                          \
	X(PL_ST_PPID, "PPid")                        \
	X(PL_ST_UID, "Uid")                          \
	X(PL_ST_THREADS, "Threads")                  \
	X(PL_ST_VCSW, "voluntary_ctxt_switches")     \
	X(PL_ST_NVCSW, "nonvoluntary_ctxt_switches")

#define STATUS_NAME(e, s) [e] = s,
#define STATUS_LEN(e, s) [e] = sizeof(s) - 1,
const char *const pl__status_keys[PL_ST_COUNT] = { STATUS_KEYS(STATUS_NAME) };
static const unsigned char status_lens[PL_ST_COUNT] = { STATUS_KEYS(STATUS_LEN) };

_Static_assert(PL_ST_COUNT <= 64, "status fields fit the have mask");
_Static_assert(PL_SM_COUNT <= 64, "smaps fields fit the have mask");

/* The status file is read for every thread every tick: lengths are
 * compared before bytes, and lines of keys not wanted (most of them) cost
 * one scan to the ':' and one to the newline. */
static int status_key(const char *key, size_t len)
{
	int i;

	for (i = 0; i < PL_ST_COUNT; i++) {
		if (status_lens[i] == len && memcmp(pl__status_keys[i], key, len) == 0)
			return i;
	}
	return -1;
}

int pl__parse_pid_status(const char *buf, struct pl_pid_status *out)
{
	const char *s = buf;

	memset(out, 0, sizeof(*out));
	while (*s) {
		const char *key = s, *nl;
		int f;

		while (*s && *s != ':' && *s != '\n')
			s++;
		f = *s == ':' ? status_key(key, (size_t)(s - key)) : -1;
		if (f >= 0) {
			const char *v = s + 1;
			uint64_t val;

			while (*v == ' ' || *v == '\t')
				v++;
			/* "VmRSS:\t 1764 kB", "Uid:\t0\t0\t0\t0", "Threads:\t4" */
			if (pl__parse_u64(&v, &val) == 0 &&
			    (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\0')) {
				out->v[f] = val;
				out->have |= 1ull << f;
			}
		}
		nl = strchr(s, '\n');
		if (!nl)
			break;
		s = nl + 1;
	}
	if (!pl__status_has(out, PL_ST_TGID) || !pl__status_has(out, PL_ST_PID)) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return 0;
}

int pl__parse_schedstat(const char *buf, struct pl_schedstat *out)
{
	const char *s = buf;
	uint64_t v[3];
	int i;

	for (i = 0; i < 3; i++) {
		if (i > 0 && *s++ != ' ')
			return -EINVAL;
		if (pl__parse_u64(&s, &v[i]) < 0)
			return -EINVAL;
	}
	if (*s != '\n' && *s != '\0')
		return -EINVAL;
	out->run_ns = v[0];
	out->wait_ns = v[1];
	out->timeslices = v[2];
	return 0;
}

const char *const pl__smaps_keys[PL_SM_COUNT] = {
	[PL_SM_RSS] = "Rss",
	[PL_SM_PSS] = "Pss",
	[PL_SM_PSS_DIRTY] = "Pss_Dirty",
	[PL_SM_PSS_ANON] = "Pss_Anon",
	[PL_SM_PSS_FILE] = "Pss_File",
	[PL_SM_PSS_SHMEM] = "Pss_Shmem",
	[PL_SM_SHARED_CLEAN] = "Shared_Clean",
	[PL_SM_SHARED_DIRTY] = "Shared_Dirty",
	[PL_SM_PRIVATE_CLEAN] = "Private_Clean",
	[PL_SM_PRIVATE_DIRTY] = "Private_Dirty",
	[PL_SM_REFERENCED] = "Referenced",
	[PL_SM_ANONYMOUS] = "Anonymous",
	[PL_SM_SWAP] = "Swap",
	[PL_SM_SWAP_PSS] = "SwapPss",
	[PL_SM_LOCKED] = "Locked",
};

void pl__smaps_sum_init(struct pl_smaps_sum *s)
{
	memset(s, 0, sizeof(*s));
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* "00400000-0040b000 r-xp ..." and smaps_rollup's "...-... ---p ... [rollup]". */
static bool is_mapping_header(const char *line, size_t len)
{
	size_t i = 0;

	while (i < len && is_hex(line[i]))
		i++;
	if (i == 0 || i >= len || line[i] != '-')
		return false;
	i++;
	if (i >= len || !is_hex(line[i]))
		return false;
	while (i < len && is_hex(line[i]))
		i++;
	return i < len && line[i] == ' ';
}

int pl__smaps_add_line(struct pl_smaps_sum *s, const char *line, size_t len)
{
	size_t key_len = 0;
	const char *p, *end = line + len;
	uint64_t v;
	char num[24];
	size_t n;
	unsigned i;

	while (key_len < len && line[key_len] != ':' && line[key_len] != ' ' &&
	       line[key_len] != '\t')
		key_len++;
	if (key_len == len || line[key_len] != ':') {
		if (!is_mapping_header(line, len))
			return -EINVAL;
		s->mappings++;
		return 0;
	}
	if (key_len == 0)
		return -EINVAL;
	for (i = 0; i < PL_SM_COUNT; i++) {
		if (strlen(pl__smaps_keys[i]) == key_len &&
		    memcmp(pl__smaps_keys[i], line, key_len) == 0)
			break;
	}
	if (i == PL_SM_COUNT)
		return 0;
	p = line + key_len + 1;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	/* The line is not NUL-terminated: copy the digits out. */
	for (n = 0; p + n < end && n < sizeof(num) - 1 && p[n] >= '0' && p[n] <= '9'; n++)
		num[n] = p[n];
	num[n] = '\0';
	p += n;
	{
		const char *q = num;

		if (pl__parse_u64(&q, &v) < 0 || *q != '\0')
			return -EINVAL;
	}
	if (end - p != 3 || memcmp(p, " kB", 3) != 0)
		return -EINVAL;
	if (s->kb[i] > UINT64_MAX - v)
		return -EINVAL;
	s->kb[i] += v;
	s->have |= 1ull << i;
	return 0;
}

int pl__parse_smaps(const char *buf, struct pl_smaps_sum *out)
{
	const char *s = buf;

	pl__smaps_sum_init(out);
	while (*s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);

		if (pl__smaps_add_line(out, s, len) < 0) {
			pl__smaps_sum_init(out);
			return -EINVAL;
		}
		s += len + (nl ? 1 : 0);
	}
	return 0;
}

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static const char *line_after(const char *s)
{
	const char *nl = strchr(s, '\n');

	return nl ? nl + 1 : s + strlen(s);
}

int pl__parse_buddyinfo_next(const char **cursor, struct pl_buddy_zone *out)
{
	const char *s = *cursor;
	const char *end;
	uint64_t node;
	size_t zlen;

	if (*s == '\0')
		return 0;
	end = line_after(s);
	*cursor = end;
	memset(out, 0, sizeof(*out));
	if (strncmp(s, "Node ", 5) != 0)
		return -EINVAL;
	s += 5;
	if (pl__parse_u64(&s, &node) < 0 || node > 65535 || strncmp(s, ", zone", 6) != 0)
		return -EINVAL;
	out->node = (int)node;
	s = skip_blanks(s + 6);
	zlen = strcspn(s, " \t\n");
	if (zlen == 0 || zlen >= sizeof(out->zone))
		return -EINVAL;
	memcpy(out->zone, s, zlen);
	s += zlen;
	for (;;) {
		s = skip_blanks(s);
		if (*s == '\n' || *s == '\0')
			break;
		if (out->n_orders == PL_BUDDY_MAX_ORDERS ||
		    pl__parse_u64(&s, &out->free_blocks[out->n_orders]) < 0)
			return -EINVAL;
		out->n_orders++;
	}
	return out->n_orders > 0 ? 1 : -EINVAL;
}

int pl__parse_kv_next(const char **cursor, const char **key, size_t *key_len,
		      uint64_t *value)
{
	const char *s = *cursor;
	const char *end;
	size_t klen;

	if (*s == '\0')
		return 0;
	end = line_after(s);
	*cursor = end;
	klen = strcspn(s, ": \t\n");
	if (klen == 0)
		return -EINVAL;
	*key = s;
	*key_len = klen;
	s += klen;
	if (*s == ':')
		s++;
	s = skip_blanks(s);
	if (pl__parse_u64(&s, value) < 0)
		return -EINVAL;
	if (strncmp(s, " kB", 3) == 0)
		s += 3;
	if (*s != '\n' && *s != '\0')
		return -EINVAL;
	return 1;
}

int pl__parse_sysctl_i64(const char *buf, int64_t *out)
{
	const char *s = buf;

	if (pl__parse_i64(&s, out) < 0)
		return -EINVAL;
	return (*s == '\n' || *s == '\0') ? 0 : -EINVAL;
}
