/* See proc_parse.h. */
#include "proc_parse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int pl__parse_u64(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	*p = s;
	return 0;
}

bool pl__parse_u64_all(const char *s, uint64_t *out)
{
	return s && pl__parse_u64(&s, out) == 0 && *s == '\0';
}

int pl__parse_i64(const char **p, int64_t *out)
{
	const char *s = *p;
	bool neg = false;
	uint64_t v;

	if (*s == '-') {
		neg = true;
		s++;
	}
	if (pl__parse_u64(&s, &v) < 0 || v > (uint64_t)INT64_MAX + (neg ? 1 : 0))
		return -EINVAL;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	*p = s;
	return 0;
}

static const char *skip_spaces(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Fields after the comm, numbered as in proc(5): field 3 is the state. */
int pl__parse_pid_stat(const char *buf, struct pl_pid_stat *out)
{
	const char *open = strchr(buf, '(');
	const char *close = strrchr(buf, ')');
	const char *s = buf;
	int64_t pid;
	size_t comm_len;
	int field;

	memset(out, 0, sizeof(*out));
	out->processor = -1;
	if (!open || !close || close < open)
		return -EINVAL;
	if (pl__parse_i64(&s, &pid) < 0 || pid <= 0 || pid > INT32_MAX)
		return -EINVAL;
	out->pid = (int)pid;
	/* The comm may hold spaces and parentheses of its own: it runs from the
	 * first '(' to the last ')'. */
	comm_len = (size_t)(close - open - 1);
	if (comm_len >= sizeof(out->comm))
		comm_len = sizeof(out->comm) - 1;
	memcpy(out->comm, open + 1, comm_len);
	out->comm[comm_len] = '\0';

	s = close + 1;
	if (*s != ' ')
		return -EINVAL;
	s = skip_spaces(s);
	if (*s == '\0' || *s == ' ' || *s == '\n')
		return -EINVAL;
	out->state = *s++;

	for (field = 4; field <= 52; field++) {
		int64_t v;
		uint64_t u;
		int err;

		if (*s != ' ')
			break;
		s = skip_spaces(s);
		if (*s == '\n' || *s == '\0')
			break;
		/* Unsigned fields may hold values past INT64_MAX (rsslim is
		 * RLIM_INFINITY); signed ones may be negative. */
		if (*s == '-') {
			err = pl__parse_i64(&s, &v);
			u = (uint64_t)v;
		} else {
			err = pl__parse_u64(&s, &u);
			v = (int64_t)u;
		}
		if (err < 0) {
			/* Fields this parser uses must be numbers; past 42 a
			 * future kernel may add anything. */
			if (field <= 42)
				return -EINVAL;
			break;
		}
		switch (field) {
		case 4: out->ppid = (int)v; break;
		case 10: out->minflt = u; break;
		case 12: out->majflt = u; break;
		case 14: out->utime_ticks = u; break;
		case 15: out->stime_ticks = u; break;
		case 18: out->priority = v; break;
		case 19: out->nice = v; break;
		case 20: out->num_threads = v; break;
		case 22: out->starttime_ticks = u; break;
		case 23: out->vsize_bytes = u; break;
		case 24: out->rss_pages = v; break;
		case 38: out->exit_signal = (int)v; break;
		case 39: out->processor = (int)v; break;
		case 42:
			out->blkio_ticks = u;
			out->has_blkio = true;
			break;
		default: break;
		}
	}
	/* Every kernel perflink supports (3.10+) has at least up to field 39;
	 * fewer fields means a truncated read. */
	if (field <= 24)
		return -EINVAL;
	return 0;
}

int pl__parse_stat_cpu(const char *buf, struct pl_stat_cpu *out)
{
	/* user nice system idle iowait irq softirq [steal] */
	uint64_t v[8] = { 0 }, busy = 0, all = 0;
	const char *p = buf;
	int i;

	memset(out, 0, sizeof(*out));
	if (strncmp(p, "cpu ", 4) != 0)
		return -EINVAL;
	p += 4;
	for (i = 0; i < 8; i++) {
		while (*p == ' ')
			p++;
		if (*p == '\n' || *p == '\0') {
			if (i < 7) /* steal alone may be missing */
				return -EINVAL;
			break;
		}
		if (pl__parse_u64(&p, &v[i]) < 0 || (*p != ' ' && *p != '\n' && *p != '\0'))
			return -EINVAL;
	}
	for (i = 0; i < 8; i++) {
		if (all > UINT64_MAX - v[i])
			return -EINVAL;
		all += v[i];
		if (i != 3 && i != 4)
			busy += v[i];
	}
	out->busy = busy;
	out->all = all;
	return 0;
}

int pl__parse_pid_io(const char *buf, struct pl_pid_io *out)
{
	static const char *const keys[] = { "rchar", "wchar", "syscr", "syscw", "read_bytes",
					     "write_bytes", "cancelled_write_bytes" };
	uint64_t vals[7] = { 0 };
	uint64_t mask;

	memset(out, 0, sizeof(*out));
	mask = pl__parse_keyed_u64(buf, keys, 7, vals);
	if (mask == 0)
		return -EINVAL;
	out->rchar = vals[0];
	out->wchar = vals[1];
	out->syscr = vals[2];
	out->syscw = vals[3];
	out->read_bytes = vals[4];
	out->write_bytes = vals[5];
	out->cancelled_write_bytes = vals[6];
	if (mask & 1u)
		out->have |= PL_IO_HAVE_RCHAR;
	if (mask & 2u)
		out->have |= PL_IO_HAVE_WCHAR;
	if (mask & 16u)
		out->have |= PL_IO_HAVE_READ_BYTES;
	if (mask & 32u)
		out->have |= PL_IO_HAVE_WRITE_BYTES;
	return 0;
}

static const char *next_line(const char *s)
{
	const char *nl = strchr(s, '\n');

	return nl ? nl + 1 : s + strlen(s);
}

/* The 11 counters a block device has (diskstats from its fourth field on,
 * sysfs stat from its first): f[0] reads ... f[10] weighted io ms. */
static void set_counters(struct pl_diskstat *out, const uint64_t *f)
{
	out->reads = f[0];
	out->sectors_read = f[2];
	out->writes = f[4];
	out->sectors_written = f[6];
	out->in_flight = f[8];
	out->io_ms = f[9];
	out->weighted_io_ms = f[10];
}

int pl__parse_diskstats_next(const char **cursor, struct pl_diskstat *out)
{
	const char *s = *cursor;
	const char *line_end;
	uint64_t f[14];
	size_t name_len;
	int i;

	if (*s == '\0')
		return 0;
	line_end = next_line(s);
	*cursor = line_end;
	memset(out, 0, sizeof(*out));

	s = skip_spaces(s);
	if (pl__parse_u64(&s, &f[0]) < 0) /* major */
		return -EINVAL;
	s = skip_spaces(s);
	if (pl__parse_u64(&s, &f[1]) < 0) /* minor */
		return -EINVAL;
	s = skip_spaces(s);
	name_len = strcspn(s, " \t\n");
	if (name_len == 0 || name_len >= sizeof(out->name))
		return -EINVAL;
	memcpy(out->name, s, name_len);
	out->name[name_len] = '\0';
	s += name_len;
	for (i = 3; i < 14; i++) {
		s = skip_spaces(s);
		if (s >= line_end || pl__parse_u64(&s, &f[i]) < 0)
			return -EINVAL;
	}
	set_counters(out, f + 3);
	return 1;
}

uint64_t pl__parse_keyed_u64(const char *buf, const char *const *keys, unsigned n,
			     uint64_t *vals)
{
	uint64_t found = 0, all;
	size_t klen[64];
	const char *s = buf;
	unsigned i;

	if (n > 64)
		n = 64;
	all = n == 64 ? UINT64_MAX : (1ull << n) - 1;
	for (i = 0; i < n; i++)
		klen[i] = strlen(keys[i]);
	/* /proc/meminfo has 50-60 lines for the tracer's four keys: a line is
	 * passed over on its first letter, and the read stops at the last key */
	while (*s && found != all) {
		const char *line_end = next_line(s);
		size_t key_len = 0;

		for (i = 0; i < n; i++) {
			if (found & (1ull << i) || keys[i][0] != s[0])
				continue;
			if (!key_len)
				key_len = strcspn(s, ": \t\n");
			if (klen[i] == key_len && memcmp(keys[i], s, key_len) == 0)
				break;
		}
		if (i < n) {
			const char *v = s + key_len;
			uint64_t val;

			if (*v == ':')
				v++;
			v = skip_spaces(v);
			if (pl__parse_u64(&v, &val) == 0 &&
			    (*v == '\n' || *v == ' ' || *v == '\0' || *v == '\t')) {
				vals[i] = val;
				found |= 1ull << i;
			}
		}
		s = line_end;
	}
	return found;
}

/* A PSI average as the kernel prints it, "%lu.%02lu": the digits as one
 * integer over a power of ten. Both are exact doubles and IEEE division
 * rounds correctly, so the result is the double strtod would give, without
 * strtod's locale and general-case work (twelve calls a tick, two PSI files).
 * Anything longer or otherwise shaped goes to strtod. */
static bool parse_fixed_decimal(const char **p, double *out)
{
	static const double pow10[] = { 1, 10, 100, 1000, 10000, 100000, 1000000 };
	const char *s = *p;
	uint64_t digits = 0;
	int ndig = 0, frac = -1;

	for (;; s++) {
		if (*s >= '0' && *s <= '9') {
			if (++ndig > 15) /* well inside 2^53 */
				return false;
			digits = digits * 10 + (uint64_t)(*s - '0');
			if (frac >= 0)
				frac++;
		} else if (*s == '.' && frac < 0 && ndig > 0) {
			frac = 0;
		} else {
			break;
		}
	}
	if (ndig == 0 || frac == 0 || frac >= (int)(sizeof(pow10) / sizeof(pow10[0])) ||
	    *s == 'e' || *s == 'E')
		return false;
	*out = (double)digits / pow10[frac < 0 ? 0 : frac];
	*p = s;
	return true;
}

static int parse_psi_line(const char *s, struct pl_psi_line *out)
{
	static const char *const names[] = { "avg10=", "avg60=", "avg300=", "total=" };
	double *avgs[] = { &out->avg10, &out->avg60, &out->avg300 };
	int i;

	for (i = 0; i < 4; i++) {
		size_t len = strlen(names[i]);

		s = skip_spaces(s);
		if (strncmp(s, names[i], len) != 0)
			return -EINVAL;
		s += len;
		if (i < 3) {
			char *end;
			double v;

			if (!parse_fixed_decimal(&s, &v)) {
				v = strtod(s, &end);
				if (end == s)
					return -EINVAL;
				s = end;
			}
			if (!(v >= 0 && v <= 100)) /* NaN too */
				return -EINVAL;
			*avgs[i] = v;
		} else if (pl__parse_u64(&s, &out->total_us) < 0) {
			return -EINVAL;
		}
	}
	return 0;
}

int pl__parse_pressure(const char *buf, struct pl_psi *out)
{
	const char *s = buf;

	memset(out, 0, sizeof(*out));
	while (*s) {
		const char *line_end = next_line(s);

		if (strncmp(s, "some ", 5) == 0) {
			if (parse_psi_line(s + 5, &out->some) < 0)
				return -EINVAL;
			out->has_some = true;
		} else if (strncmp(s, "full ", 5) == 0) {
			if (parse_psi_line(s + 5, &out->full) < 0)
				return -EINVAL;
			out->has_full = true;
		}
		s = line_end;
	}
	return out->has_some ? 0 : -EINVAL;
}
