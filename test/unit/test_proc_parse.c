/* The /proc parsers on captured files: a live 6.x system (fixtures/proc/
 * live-6.18, captured from a running process whose comm holds spaces and
 * parentheses) and older layouts (fixtures/proc/old-3.10, written after the
 * 3.10-era formats: stat ending at field 41, a single allocstall counter,
 * 11-field diskstats). */
#include "proc_parse.h"
#include "procfile.h"
#include "tap.h"
#include "proc_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>


static void test_stat(void)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	struct pl_pid_stat st;

	TAP_OK(pl__parse_pid_stat(read_fixture(&pf, "live-6.18/weird/stat"), &st) == 0,
	       "live stat parses");
	TAP_EQ_STR(st.comm, "we ird) (x", "comm with spaces and parentheses");
	TAP_EQ_U64(st.pid, 2562, "pid");
	TAP_OK(st.state == 'S', "state");
	TAP_EQ_U64(st.ppid, 1, "ppid");
	TAP_EQ_U64(st.minflt, 129, "minflt (field 10)");
	TAP_EQ_U64(st.num_threads, 1, "num_threads (field 20)");
	TAP_EQ_U64(st.starttime_ticks, 18140, "starttime (field 22)");
	TAP_EQ_U64(st.rss_pages, 414, "rss (field 24)");
	TAP_OK(st.has_blkio, "field 42 present on 6.x");
	TAP_EQ_U64(st.blkio_ticks, 0, "blkio ticks");
	TAP_OK(st.exit_signal == 17, "exit_signal (field 38): SIGCHLD for a process (%d)",
	       st.exit_signal);
	{
		char thr[512];
		const char *in = read_fixture(&pf, "live-6.18/weird/stat");
		const char *f38 = strrchr(in, ')');
		int field = 2;

		/* the same line as a thread's: exit_signal -1 */
		for (; *f38 && field < 38; f38++)
			field += *f38 == ' ';
		snprintf(thr, sizeof(thr), "%.*s-1%s", (int)(f38 - in), in, strchr(f38, ' '));
		TAP_OK(pl__parse_pid_stat(thr, &st) == 0 && st.exit_signal == -1 &&
		       st.processor >= 0 && st.has_blkio,
		       "a thread's stat: exit_signal -1, the fields after it still read");
	}

	TAP_OK(pl__parse_pid_stat(read_fixture(&pf, "old-3.10/stat_41fields"), &st) == 0,
	       "stat without field 42 parses");
	TAP_OK(!st.has_blkio, "field 42 reported absent, not zero");
	TAP_OK(st.state == 'D', "D state");
	TAP_EQ_U64(st.utime_ticks, 731, "utime");
	TAP_EQ_U64(st.stime_ticks, 405, "stime");
	TAP_EQ_U64(st.majflt, 12, "majflt");

	TAP_OK(pl__parse_pid_stat(read_fixture(&pf, "old-3.10/stat_kthread"), &st) == 0,
	       "kernel thread with '/' in comm");
	TAP_EQ_STR(st.comm, "kworker/0:1", "kthread comm");
	TAP_OK(st.has_blkio && st.blkio_ticks == 3, "kthread blkio");

	TAP_OK(pl__parse_pid_stat("123 (trunc) S 1 2 3", &st) == -EINVAL,
	       "truncated stat is rejected");
	TAP_OK(pl__parse_pid_stat("123 (x S 1 2 3", &st) == -EINVAL, "no ')' is rejected");
	TAP_OK(pl__parse_pid_stat("", &st) == -EINVAL, "empty stat is rejected");
	TAP_OK(pl__parse_pid_stat("99 (a) S 1 1 1 0 -1 0 0 0 0 0 99999999999999999999999 0 0 0 "
				  "20 0 1 0 5 0 0 0\n", &st) == -EINVAL,
	       "overflowing number is rejected");
	pl__procfile_free(&pf);
}

static void test_io(void)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	struct pl_pid_io io;

	TAP_OK(pl__parse_pid_io(read_fixture(&pf, "live-6.18/weird/io"), &io) == 0, "io parses");
	TAP_OK((io.have & (PL_IO_HAVE_WCHAR | PL_IO_HAVE_WRITE_BYTES)) ==
		       (PL_IO_HAVE_WCHAR | PL_IO_HAVE_WRITE_BYTES),
	       "io has wchar and write_bytes");
	TAP_OK(pl__parse_pid_io("rchar: 10\nwchar: 20\n", &io) == 0 && io.wchar == 20 &&
		       !(io.have & PL_IO_HAVE_WRITE_BYTES),
	       "io without block accounting (no CONFIG_TASK_IO_ACCOUNTING fields)");
	TAP_OK(pl__parse_pid_io("garbage\n", &io) == -EINVAL, "garbage io rejected");
	pl__procfile_free(&pf);
}

static void test_diskstats(void)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	struct pl_diskstat d;
	const char *cur = read_fixture(&pf, "live-6.18/diskstats");
	int found = 0, r;

	while ((r = pl__parse_diskstats_next(&cur, &d)) != 0) {
		if (r == 1 && strcmp(d.name, "vda") == 0) {
			found = 1;
			TAP_EQ_U64(d.sectors_written, 445048, "vda sectors written (field 10)");
			TAP_EQ_U64(d.io_ms, 14964, "vda busy ms (field 13)");
		}
	}
	TAP_OK(found, "vda found in 20-field diskstats");

	cur = read_fixture(&pf, "old-3.10/diskstats");
	r = pl__parse_diskstats_next(&cur, &d);
	TAP_OK(r == -EINVAL, "11-field line (truncated) is rejected");
	r = pl__parse_diskstats_next(&cur, &d);
	TAP_OK(r == 1 && d.in_flight == 3 && d.io_ms == 201233, "14-field line parses");
	r = pl__parse_diskstats_next(&cur, &d);
	TAP_OK(r == 1 && strcmp(d.name, "mmcblk0p1") == 0, "partition line parses");
	TAP_OK(pl__parse_diskstats_next(&cur, &d) == 0, "end of file");
	pl__procfile_free(&pf);
}

static void test_keyed(void)
{
	static const char *const mem_keys[] = { "MemFree", "MemAvailable", "Dirty", "Nope" };
	static const char *const vm_keys[] = { "compact_stall", "allocstall", "pgmajfault" };
	struct pl_procfile pf = PL_PROCFILE_INIT;
	uint64_t v[4] = { 0, 0, 0, 77 };
	uint64_t mask;

	mask = pl__parse_keyed_u64(read_fixture(&pf, "live-6.18/meminfo"), mem_keys, 4, v);
	TAP_EQ_U64(mask, 7, "meminfo: three keys found, the unknown one not");
	TAP_OK(v[0] > 0 && v[1] >= v[0], "MemAvailable >= MemFree > 0");
	TAP_EQ_U64(v[3], 77, "absent key leaves its value alone");

	mask = pl__parse_keyed_u64(read_fixture(&pf, "old-3.10/vmstat"), vm_keys, 3, v);
	TAP_EQ_U64(mask, 7, "3.10 vmstat keys");
	TAP_EQ_U64(v[1], 7, "single allocstall counter");
	mask = pl__parse_keyed_u64("allocstall_normal 5\nallocstall 9x\n", vm_keys, 3, v);
	TAP_EQ_U64(mask, 0, "prefix and non-number lines do not match");
	pl__procfile_free(&pf);
}

static void test_pressure(void)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	struct pl_psi psi;

	TAP_OK(pl__parse_pressure(read_fixture(&pf, "live-6.18/pressure/io"), &psi) == 0,
	       "pressure/io parses");
	TAP_OK(psi.has_some && psi.has_full, "some and full");
	TAP_EQ_U64(psi.some.total_us, 11797532, "some total");
	TAP_OK(psi.full.avg60 > 2.68 && psi.full.avg60 < 2.70, "full avg60");
	TAP_OK(pl__parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n", &psi) == 0 &&
		       !psi.has_full,
	       "cpu pressure without full line (before 5.13)");
	TAP_OK(pl__parse_pressure("some avg10=x\n", &psi) == -EINVAL, "garbage pressure");
	{ /* every average the kernel can print ("%lu.%02lu", 0.00-100.00),
	   * and other spellings, read as the very double strtod gives */
		static const char *const odd[] = { "7", "7.5", "7.", "07.250", "5e1",
						   "99.999999", "0.000001" };
		char line[160], *end;
		unsigned bad = 0, i;

		for (i = 0; i <= 10000; i++) {
			snprintf(line, sizeof(line),
				 "some avg10=%u.%02u avg60=0.00 avg300=0.00 total=1\n", i / 100,
				 i % 100);
			if (pl__parse_pressure(line, &psi) != 0 ||
			    psi.some.avg10 != strtod(line + 11, &end))
				bad++;
		}
		for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
			snprintf(line, sizeof(line),
				 "some avg10=0.00 avg60=%s avg300=0.00 total=1\n", odd[i]);
			if (pl__parse_pressure(line, &psi) != 0 ||
			    psi.some.avg60 != strtod(odd[i], &end))
				bad++;
		}
		TAP_OK(bad == 0, "averages read as strtod reads them (%u differ)", bad);
	}
	TAP_OK(pl__parse_pressure("some avg10=nan avg60=0.00 avg300=0.00 total=1\n", &psi) ==
		       -EINVAL,
	       "an average that is no number (nan) is refused");
	TAP_OK(pl__parse_pressure("some avg10=100.01 avg60=0.00 avg300=0.00 total=1\n", &psi) ==
		       -EINVAL,
	       "an average over 100 is refused");
	pl__procfile_free(&pf);
}

/* The first line of a key counts, unless its value is no number; keys are
 * told apart whole, not by their first letters. */
static void test_keyed_first(void)
{
	static const char *const keys[] = { "Dirty", "DirtyX", "Mem" };
	uint64_t v[3] = { 0, 0, 0 }, mask;

	mask = pl__parse_keyed_u64("Dirt: 1\nDirty: x kB\nDirtyX: 3\nDirty: 4 kB\n"
				   "Dirty: 5 kB\nMemFree: 6\n",
				   keys, 3, v);
	TAP_OK(mask == 3 && v[0] == 4 && v[1] == 3 && v[2] == 0,
	       "first good line of each key, whole keys only (mask %llx, %llu %llu %llu)",
	       (unsigned long long)mask, (unsigned long long)v[0], (unsigned long long)v[1],
	       (unsigned long long)v[2]);
}

static void test_numbers(void)
{
	const char *p = "18446744073709551615 ";
	uint64_t u;
	int64_t i;

	TAP_OK(pl__parse_u64(&p, &u) == 0 && u == UINT64_MAX && *p == ' ', "u64 max");
	p = "18446744073709551616";
	TAP_OK(pl__parse_u64(&p, &u) == -EINVAL, "u64 overflow");
	p = "-9223372036854775808";
	TAP_OK(pl__parse_i64(&p, &i) == 0 && i == INT64_MIN, "i64 min");
	p = "-";
	TAP_OK(pl__parse_i64(&p, &i) == -EINVAL, "lone minus");
}

static void test_stat_cpu(void)
{
	struct pl_stat_cpu c;

	TAP_OK(pl__parse_stat_cpu("cpu  100 2 30 1000 40 5 6 7 0 0\ncpu0 50 1 15 500 20 2 3 3 0 0\n",
				  &c) == 0 && c.busy == 100 + 2 + 30 + 5 + 6 + 7 &&
		       c.all == 100 + 2 + 30 + 1000 + 40 + 5 + 6 + 7,
	       "/proc/stat cpu: busy leaves out idle and iowait, guest is not counted twice");
	TAP_OK(pl__parse_stat_cpu("cpu  1 2 3 4 5 6 7\n", &c) == 0 && c.busy == 19 && c.all == 28,
	       "/proc/stat cpu: no steal field (before 2.6.11)");
	TAP_OK(pl__parse_stat_cpu("cpu  1 2 3 4 5 6\n", &c) == -EINVAL && c.all == 0,
	       "/proc/stat cpu: too few fields");
	TAP_OK(pl__parse_stat_cpu("cpu0 1 2 3 4 5 6 7 8\n", &c) == -EINVAL,
	       "/proc/stat cpu: the total line must come first");
	TAP_OK(pl__parse_stat_cpu("cpu  1 2 x 4 5 6 7 8\n", &c) == -EINVAL,
	       "/proc/stat cpu: a field that is not a number");
	TAP_OK(pl__parse_stat_cpu("cpu  18446744073709551615 1 0 0 0 0 0 0\n", &c) == -EINVAL,
	       "/proc/stat cpu: a sum past 2^64");
	TAP_OK(pl__parse_stat_cpu("", &c) == -EINVAL, "/proc/stat cpu: empty");
}

int main(void)
{
	test_stat();
	test_stat_cpu();
	test_io();
	test_diskstats();
	test_keyed();
	test_pressure();
	test_keyed_first();
	test_numbers();
	return tap_done();
}
