/* The CSV rows, byte for byte as io_stall_tracer.py writes them, so that
 * analysis written for its files keeps working.
 *
 * Python formats with f"{x:.0f}" and f"{x:.3f}": the exact binary value
 * correctly rounded, ties to even, and "-0" for a small negative; glibc's
 * printf does the same in the default rounding mode. A row is written every
 * tick, after 100 ms in which the host has evicted printf's code: snprintf
 * of the SYS row took 13.5 us a tick on the test VM. So put_fixed does the
 * exact rounding itself in integer arithmetic where that is simple (the
 * numbers a row holds: 2^-10 <= |x| < 2^40, or 0) and leaves the rest (NaN,
 * infinities, the very small and the very large) to snprintf; a test checks
 * it against snprintf on millions of values and on every kind of tie. */
#include "tracer_csv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* v in decimal, the digits only; returns the end. */
static char *put_u64(char *dst, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		*dst++ = tmp[--n];
	return dst;
}

static char *put_i64(char *dst, int64_t v)
{
	if (v < 0) {
		*dst++ = '-';
		return put_u64(dst, (uint64_t)0 - (uint64_t)v);
	}
	return put_u64(dst, (uint64_t)v);
}

/* "%.0f" (decimals 0) or "%.3f" (3) of v into dst, which has room for
 * FIXED_MAX bytes; returns the end. v = m * 2^e exactly, m < 2^53: with e in
 * [-62, -13] (the range above), m * 10^decimals stays under 2^63, and its
 * shift right by -e is the rounded-down result, the bits shifted out the
 * remainder to round it by. */
#define FIXED_MAX 320 /* -DBL_MAX with three decimals: 313 bytes */

static char *put_fixed(char *dst, double v, int decimals)
{
	const uint64_t scale = decimals == 3 ? 1000 : 1;
	uint64_t bits, m, q, r, half;
	int e;

	memcpy(&bits, &v, sizeof(bits));
	e = (int)((bits >> 52) & 0x7ff) - 1075;
	if (v != 0 && (e < -62 || e > -13)) {
		int n = snprintf(dst, FIXED_MAX, decimals == 3 ? "%.3f" : "%.0f", v);

		return n < 0 ? dst : dst + (n < FIXED_MAX ? n : FIXED_MAX - 1);
	}
	if (signbit(v))
		*dst++ = '-';
	q = 0;
	if (v != 0) {
		unsigned shift = (unsigned)-e;

		m = (bits & ((1ull << 52) - 1)) | (1ull << 52);
		q = (m * scale) >> shift;
		r = (m * scale) & ((1ull << shift) - 1);
		half = 1ull << (shift - 1);
		q += r > half || (r == half && (q & 1));
	}
	dst = put_u64(dst, q / scale);
	if (decimals == 3) {
		unsigned f = (unsigned)(q % 1000);

		*dst++ = '.';
		*dst++ = (char)('0' + f / 100);
		*dst++ = (char)('0' + f / 10 % 10);
		*dst++ = (char)('0' + f % 10);
	}
	return dst;
}

const char pl__tracer_csv_header[] =
	"wall,mono,proc,pid,state,d_wchar_kB,d_wbytes_kB,d_blkio_ms,disk_d_write_kB,"
	"disk_d_busy_ms,compact_stall,allocstall,pgmajfault,dirty_kB,writeback_kB,memfree_kB,"
	"memavail_kB\n";

/* A process name is attacker-chosen (prctl PR_SET_NAME): keep it from adding
 * columns or rows. */
static void put_label(char *dst, size_t cap, const char *label)
{
	size_t i;

	for (i = 0; i + 1 < cap && label[i]; i++) {
		char c = label[i];

		dst[i] = (c == ',' || c == '\n' || c == '\r') ? '_' : c;
	}
	dst[i] = '\0';
}

/* Each field's longest: a label of PL_COMM_MAX, seven of put_fixed's and
 * a few of put_i64's 20, with the commas: the line is made in here, then
 * copied if it fits. */
#define LINE_MAX_BYTES (PL_COMM_MAX + 7 * FIXED_MAX + 6 * 24 + 32)

static int finish(char *buf, size_t cap, const char *line, const char *end)
{
	size_t n = (size_t)(end - line);

	if (n + 1 > cap)
		return -ENOSPC;
	memcpy(buf, line, n);
	buf[n] = '\0';
	return (int)n;
}

int pl__csv_fmt(char *buf, size_t cap, double v, int decimals)
{
	char tmp[FIXED_MAX];

	return finish(buf, cap, tmp, put_fixed(tmp, v, decimals == 3 ? 3 : 0));
}

int pl__csv_format_row(char *buf, size_t cap, const struct pl_csv_row *r)
{
	char label[PL_COMM_MAX], line[LINE_MAX_BYTES], *o = line;
	size_t len;

	put_label(label, sizeof(label), r->label);
	o = put_fixed(o, r->wall, 3);
	*o++ = ',';
	o = put_fixed(o, r->mono, 3);
	*o++ = ',';
	len = strlen(label);
	memcpy(o, label, len);
	o += len;
	*o++ = ',';
	o = put_i64(o, r->pid);
	*o++ = ',';
	*o++ = r->state ? r->state : '?';
	*o++ = ',';
	o = put_fixed(o, r->d_wchar_kb, 0);
	*o++ = ',';
	o = put_fixed(o, r->d_wbytes_kb, 0);
	*o++ = ',';
	o = put_fixed(o, r->d_blkio_ms, 0);
	*o++ = ',';
	o = put_fixed(o, r->disk_d_write_kb, 0);
	*o++ = ',';
	o = put_fixed(o, r->disk_d_busy_ms, 0);
	memcpy(o, ",,,,,,,\n", 8);
	o += 8;
	return finish(buf, cap, line, o);
}

int pl__csv_format_sys(char *buf, size_t cap, const struct pl_csv_sys *r)
{
	char line[LINE_MAX_BYTES], *o = line;

	o = put_fixed(o, r->wall, 3);
	*o++ = ',';
	o = put_fixed(o, r->mono, 3);
	memcpy(o, ",SYS,0,-,,,,,,", 14);
	o += 14;
	o = put_i64(o, r->d_compact);
	*o++ = ',';
	o = put_i64(o, r->d_alloc);
	*o++ = ',';
	o = put_i64(o, r->d_majflt);
	*o++ = ',';
	o = put_u64(o, r->dirty_kb);
	*o++ = ',';
	o = put_u64(o, r->writeback_kb);
	*o++ = ',';
	o = put_u64(o, r->memfree_kb);
	*o++ = ',';
	o = put_u64(o, r->memavail_kb);
	*o++ = '\n';
	return finish(buf, cap, line, o);
}
