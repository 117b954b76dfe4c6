/* The resource sampler's parsers (proc_parse_mem.h, proc_smaps.h) on real
 * files captured from this machine's live 6.18 /proc (fixtures/proc/
 * live-6.18 and live-6.18-tree: a process with three named threads), and on
 * the hand-made 4.9 (agnos-4.9) and 3.10 (old-3.10/tree) layouts described
 * in their READMEs. */
#include "proc_parse_mem.h"
#include "proc_smaps.h"
#include "procfile.h"
#include "tap.h"
#include "proc_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>



static void test_status(void)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	struct pl_pid_status s;

	TAP_OK(pl__parse_pid_status(read_fixture(&pf, "live-6.18/weird/status"), &s) == 0,
	       "live status parses");
	TAP_EQ_U64(s.v[PL_ST_VMRSS], 1764, "VmRSS");
	TAP_EQ_U64(s.v[PL_ST_VMHWM], 1764, "VmHWM");
	TAP_EQ_U64(s.v[PL_ST_RSSFILE], 1656, "RssFile");
	TAP_EQ_U64(s.v[PL_ST_VMSWAP], 0, "VmSwap");
	TAP_OK(pl__status_has(&s, PL_ST_VMSWAP), "VmSwap present (a measured 0)");
	TAP_EQ_U64(s.v[PL_ST_TGID], 2562, "Tgid");
	TAP_EQ_U64(s.v[PL_ST_PPID], 1, "PPid");
	TAP_EQ_U64(s.v[PL_ST_UID], 0, "real uid, the first of four");
	TAP_EQ_U64(s.v[PL_ST_VCSW], 1, "voluntary_ctxt_switches");
	TAP_OK(pl__status_has(&s, PL_ST_NVCSW) && s.v[PL_ST_NVCSW] == 0, "nonvoluntary");

	TAP_OK(pl__parse_pid_status(read_fixture(&pf, "live-6.18-tree/11915/task/11919/status"),
				    &s) == 0,
	       "live thread status parses");
	TAP_EQ_U64(s.v[PL_ST_PID], 11919, "thread Pid is the tid");
	TAP_EQ_U64(s.v[PL_ST_TGID], 11915, "thread Tgid");
	TAP_EQ_U64(s.v[PL_ST_NVCSW], 9, "thread nonvoluntary switches");
	TAP_EQ_U64(s.v[PL_ST_THREADS], 4, "Threads");

	TAP_OK(pl__parse_pid_status(read_fixture(&pf, "agnos-4.9/1234/status"), &s) == 0,
	       "4.9 status parses (VmPMD line, no Kthread)");
	TAP_EQ_U64(s.v[PL_ST_RSSANON], 150200, "4.9 RssAnon");
	TAP_EQ_U64(s.v[PL_ST_UID], 1000, "4.9 uid");

	TAP_OK(pl__parse_pid_status(read_fixture(&pf, "old-3.10/tree/1234/status"), &s) == 0,
	       "3.10 status parses");
	TAP_OK(!pl__status_has(&s, PL_ST_RSSANON) && !pl__status_has(&s, PL_ST_RSSFILE) &&
		       !pl__status_has(&s, PL_ST_RSSSHMEM) && !pl__status_has(&s, PL_ST_HUGETLB),
	       "3.10: RssAnon/RssFile/RssShmem/HugetlbPages absent, not zero");
	TAP_EQ_U64(s.v[PL_ST_RSSANON], 0, "absent field's value untouched");
	TAP_EQ_U64(s.v[PL_ST_VMRSS], 8060, "3.10 VmRSS");

	/* A zombie's status has no Vm lines at all. */
	TAP_OK(pl__parse_pid_status("Name:\tz\nState:\tZ (zombie)\nTgid:\t5\nPid:\t5\nPPid:\t1\n"
				    "Threads:\t1\n", &s) == 0 &&
		       !pl__status_has(&s, PL_ST_VMRSS),
	       "zombie status: no VmRSS");
	TAP_OK(pl__parse_pid_status("VmRSS:\t100 kB\n", &s) == -EINVAL && s.have == 0,
	       "text without Tgid/Pid is not a status file");
	TAP_OK(pl__parse_pid_status("", &s) == -EINVAL, "empty status rejected");
	TAP_OK(pl__parse_pid_status("Tgid:\t5\nPid:\t5\nVmRSS:\t-4 kB\n", &s) == 0 &&
		       !pl__status_has(&s, PL_ST_VMRSS),
	       "a negative VmRSS is skipped, not read as a number");
	pl__procfile_free(&pf);
}

static void test_schedstat(void)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	struct pl_schedstat s;

	TAP_OK(pl__parse_schedstat(read_fixture(&pf, "live-6.18-tree/11915/task/11917/schedstat"),
				   &s) == 0,
	       "live thread schedstat parses");
	TAP_EQ_U64(s.run_ns, 16356595, "run_ns");
	TAP_EQ_U64(s.wait_ns, 16102574, "wait_ns");
	TAP_EQ_U64(s.timeslices, 5, "timeslices");
	TAP_OK(pl__parse_schedstat(read_fixture(&pf, "live-6.18/weird/schedstat"), &s) == 0 &&
		       s.run_ns == 1458800 && s.timeslices == 1,
	       "live process schedstat");
	TAP_OK(pl__parse_schedstat("0 0 0\n", &s) == 0 && s.run_ns == 0,
	       "sched_info off: zeros are what the kernel says");
	TAP_OK(pl__parse_schedstat("1 2\n", &s) == -EINVAL, "two fields rejected");
	TAP_OK(pl__parse_schedstat("1 2 3 4\n", &s) == -EINVAL, "four fields rejected");
	TAP_OK(pl__parse_schedstat("1 -2 3\n", &s) == -EINVAL, "negative rejected");
	TAP_OK(pl__parse_schedstat("99999999999999999999 2 3\n", &s) == -EINVAL,
	       "overflow rejected");
	TAP_OK(pl__parse_schedstat("", &s) == -EINVAL, "empty rejected");
	pl__procfile_free(&pf);
}

static uint64_t field_sum(const char *text, const char *key)
{
	size_t klen = strlen(key);
	uint64_t sum = 0;
	const char *s = text;

	/* An independent count for the test: every line "key: N kB". */
	while (*s) {
		const char *nl = strchr(s, '\n');

		if (strncmp(s, key, klen) == 0 && s[klen] == ':')
			sum += strtoull(s + klen + 1, NULL, 10);
		if (!nl)
			break;
		s = nl + 1;
	}
	return sum;
}

static void test_smaps(void)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	struct pl_smaps_sum roll, full, streamed;
	const char *text;
	char scratch[8192];
	int ret;

	TAP_OK(pl__parse_smaps(read_fixture(&pf, "live-6.18/weird/smaps_rollup"), &roll) == 0,
	       "live smaps_rollup parses");
	TAP_EQ_U64(roll.mappings, 1, "rollup is one block");
	TAP_EQ_U64(roll.kb[PL_SM_PSS], 675, "rollup Pss");
	TAP_EQ_U64(roll.kb[PL_SM_PSS_FILE], 567, "rollup Pss_File");
	TAP_EQ_U64(roll.kb[PL_SM_PRIVATE_DIRTY], 144, "rollup Private_Dirty");

	/* The same process's smaps and smaps_rollup, captured together from an
	 * idle process: Rss and the private and anonymous counts are equal;
	 * Pss differs only by the per-mapping rounding. */
	TAP_OK(pl__parse_smaps(read_fixture(&pf, "live-6.18-tree/11915/smaps_rollup"), &roll) == 0,
	       "captured smaps_rollup parses");
	text = read_fixture(&pf, "live-6.18-tree/11915/smaps");
	TAP_OK(pl__parse_smaps(text, &full) == 0, "captured smaps parses");
	TAP_EQ_U64(full.mappings, 30, "30 mappings");
	TAP_EQ_U64(full.kb[PL_SM_RSS], field_sum(text, "Rss"), "smaps Rss is the sum of lines");
	TAP_EQ_U64(full.kb[PL_SM_RSS], roll.kb[PL_SM_RSS], "smaps Rss == rollup Rss");
	TAP_EQ_U64(full.kb[PL_SM_PRIVATE_DIRTY], roll.kb[PL_SM_PRIVATE_DIRTY],
		   "smaps Private_Dirty == rollup");
	TAP_EQ_U64(full.kb[PL_SM_ANONYMOUS], roll.kb[PL_SM_ANONYMOUS], "smaps Anonymous == rollup");
	TAP_OK(full.kb[PL_SM_PSS] <= roll.kb[PL_SM_PSS] &&
		       roll.kb[PL_SM_PSS] - full.kb[PL_SM_PSS] < full.mappings,
	       "smaps Pss is rollup Pss less under a kB per mapping (%llu vs %llu)",
	       (unsigned long long)full.kb[PL_SM_PSS], (unsigned long long)roll.kb[PL_SM_PSS]);

	/* Streamed through a small buffer: many chunk boundaries, same sums. */
	ret = pl__smaps_read_sum(fixture_root(), "live-6.18-tree/11915/smaps", &streamed, scratch,
				 300);
	TAP_OK(ret == 0 && memcmp(streamed.kb, full.kb, sizeof(full.kb)) == 0 &&
		       streamed.mappings == full.mappings,
	       "smaps streamed in 300-byte chunks sums the same");
	ret = pl__smaps_read_sum(fixture_root(), "live-6.18-tree/11915/smaps", &streamed, scratch,
				 40);
	TAP_OK(ret == -E2BIG, "a line longer than the buffer is -E2BIG, not a guess");
	ret = pl__smaps_read_sum(fixture_root(), "live-6.18-tree/11915/nope", &streamed, scratch,
				 sizeof(scratch));
	TAP_OK(ret == -ENOENT, "missing smaps_rollup is -ENOENT (the 4.9 probe case)");

	text = read_fixture(&pf, "agnos-4.9/1234/smaps");
	TAP_OK(pl__parse_smaps(text, &full) == 0, "4.9 smaps (Android [anon:] names) parses");
	TAP_EQ_U64(full.mappings, 6, "4.9 mappings");
	TAP_EQ_U64(full.kb[PL_SM_RSS], 198400, "4.9 Rss sum equals VmRSS");
	TAP_EQ_U64(full.kb[PL_SM_PSS], 162698, "4.9 Pss sum");
	TAP_EQ_U64(full.kb[PL_SM_SWAP_PSS], 2048, "4.9 SwapPss");
	TAP_OK(!(full.have & (1ull << PL_SM_PSS_ANON)), "4.9 has no Pss_Anon: absent");

	TAP_OK(pl__parse_smaps(read_fixture(&pf, "old-3.10/tree/1234/smaps"), &full) == 0,
	       "3.10 smaps parses");
	TAP_OK(!(full.have & (1ull << PL_SM_SWAP_PSS)) && (full.have & (1ull << PL_SM_SWAP)),
	       "3.10: Swap present, SwapPss absent");
	TAP_EQ_U64(full.kb[PL_SM_PSS], 7214, "3.10 Pss sum");

	TAP_OK(pl__parse_smaps("", &full) == 0 && full.mappings == 0 && full.have == 0,
	       "empty smaps (kernel thread): no mappings, nothing present");
	TAP_OK(pl__parse_smaps("00400000-00401000 r-xp 0 0:0 0\nRss: 4\n", &full) == -EINVAL,
	       "a summed field without kB is rejected");
	TAP_OK(pl__parse_smaps("Rss: 4 kB\nGarbage line\n", &full) == -EINVAL,
	       "a line that is neither header nor field is rejected");
	TAP_OK(pl__parse_smaps("Rss: 18446744073709551615 kB\nRss: 1 kB\n", &full) == -EINVAL,
	       "overflowing sum is rejected");
	TAP_OK(pl__parse_smaps("0-1 r\nVmFlags: rd wr\nTHPeligible: 1\nProtectionKey: 0\n",
			       &full) == 0 &&
		       full.mappings == 1 && full.have == 0,
	       "unsummed fields (VmFlags, THPeligible) are skipped");
	pl__procfile_free(&pf);
}

static void test_buddyinfo(void)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	struct pl_buddy_zone z;
	const char *cur = read_fixture(&pf, "live-6.18/buddyinfo");
	int n = 0, r;

	while ((r = pl__parse_buddyinfo_next(&cur, &z)) != 0) {
		TAP_OK(r == 1, "live buddyinfo line %d parses", n);
		if (r == 1 && strcmp(z.zone, "Normal") == 0) {
			TAP_EQ_U64(z.n_orders, 11, "11 orders (MAX_ORDER 10)");
			TAP_EQ_U64(z.free_blocks[0], 4800, "order 0");
			TAP_EQ_U64(z.free_blocks[7], 101, "order 7: what a 512 KiB kmalloc needs");
			TAP_EQ_U64(z.free_blocks[10], 188, "order 10");
		}
		n++;
	}
	TAP_EQ_U64(n, 3, "three zones");

	cur = "Node 0, zone   Normal   1 2 3\ngarbage\nNode 1, zone  Movable 5\n";
	TAP_OK(pl__parse_buddyinfo_next(&cur, &z) == 1 && z.n_orders == 3, "short line");
	TAP_OK(pl__parse_buddyinfo_next(&cur, &z) == -EINVAL, "garbage line rejected");
	TAP_OK(pl__parse_buddyinfo_next(&cur, &z) == 1 && z.node == 1 &&
		       strcmp(z.zone, "Movable") == 0,
	       "next line still parses");
	TAP_OK(pl__parse_buddyinfo_next(&cur, &z) == 0, "end");
	cur = "Node 0, zone Normal 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n";
	TAP_OK(pl__parse_buddyinfo_next(&cur, &z) == -EINVAL, "more orders than any kernel");
	cur = "Node 0, zone Normal\n";
	TAP_OK(pl__parse_buddyinfo_next(&cur, &z) == -EINVAL, "no counts");
	cur = "Node 0, zone Normal 1 x\n";
	TAP_OK(pl__parse_buddyinfo_next(&cur, &z) == -EINVAL, "non-number count");
	pl__procfile_free(&pf);
}

static void test_kv(void)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	const char *cur, *key;
	size_t key_len;
	uint64_t v;
	int r, found = 0;

	cur = read_fixture(&pf, "live-6.18-tree/meminfo");
	while ((r = pl__parse_kv_next(&cur, &key, &key_len, &v)) != 0) {
		if (r == 1 && key_len == 12 && memcmp(key, "Active(anon)", 12) == 0)
			found = 1;
		if (r == 1 && key_len == 8 && memcmp(key, "MemTotal", 8) == 0)
			TAP_OK(v > 0, "MemTotal > 0");
	}
	TAP_OK(found, "meminfo key with parentheses");
	cur = read_fixture(&pf, "agnos-4.9/vmstat");
	found = 0;
	while ((r = pl__parse_kv_next(&cur, &key, &key_len, &v)) != 0) {
		if (r == 1 && key_len == 17 && memcmp(key, "allocstall_normal", 17) == 0) {
			found = 1;
			TAP_EQ_U64(v, 41, "4.9 allocstall_normal");
		}
	}
	TAP_OK(found, "vmstat walked to allocstall_normal");
	cur = "a 1\nb x\nc 3 kB\nd 4 junk\n";
	TAP_OK(pl__parse_kv_next(&cur, &key, &key_len, &v) == 1 && v == 1, "a 1");
	TAP_OK(pl__parse_kv_next(&cur, &key, &key_len, &v) == -EINVAL, "b x rejected");
	TAP_OK(pl__parse_kv_next(&cur, &key, &key_len, &v) == 1 && v == 3, "c 3 kB");
	TAP_OK(pl__parse_kv_next(&cur, &key, &key_len, &v) == -EINVAL, "trailing junk rejected");
	TAP_OK(pl__parse_kv_next(&cur, &key, &key_len, &v) == 0, "end");
	pl__procfile_free(&pf);
}

static void test_sysctl(void)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	int64_t v;

	TAP_OK(pl__parse_sysctl_i64(read_fixture(&pf, "agnos-4.9/sys/vm/extra_free_kbytes"),
				    &v) == 0 && v == 32768,
	       "extra_free_kbytes");
	TAP_OK(pl__parse_sysctl_i64(read_fixture(&pf, "live-6.18-tree/sys/vm/min_free_kbytes"),
				    &v) == 0 && v > 0,
	       "live min_free_kbytes");
	TAP_OK(pl__parse_sysctl_i64("-1\n", &v) == 0 && v == -1, "negative sysctl");
	TAP_OK(pl__parse_sysctl_i64("4096\t4096\n", &v) == -EINVAL, "vector sysctl rejected");
	TAP_OK(pl__parse_sysctl_i64("", &v) == -EINVAL, "empty rejected");
	pl__procfile_free(&pf);
}

int main(void)
{
	test_status();
	test_schedstat();
	test_smaps();
	test_buddyinfo();
	test_kv();
	test_sysctl();
	return tap_done();
}
