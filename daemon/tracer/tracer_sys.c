/* The tracer's system-wide counters: /proc/diskstats, vmstat, meminfo,
 * pressure/{io,memory}, loadavg and the dirty-page sysctls, read relative to
 * the proc root. A file a kernel lacks reads as absent, never as an error. */
#include "tracer_sys.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "probe.h"

int pl__tsys_init(struct pl_tsys *s, const char *disks_csv)
{
	const struct pl_procfile init = PL_PROCFILE_INIT;
	const char *p = disks_csv ? disks_csv : "";

	memset(s, 0, sizeof(*s));
	s->page_bytes = sysconf(_SC_PAGESIZE);
	if (s->page_bytes <= 0)
		s->page_bytes = 4096;
	s->diskstats = s->vmstat = s->meminfo = init;
	s->psi_io = s->psi_mem = s->loadavg = s->stat = init;
	while (*p) {
		size_t len = strcspn(p, ",");
		const char *b = p, *e = p + len;

		while (b < e && (*b == ' ' || *b == '\t'))
			b++;
		while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e > b) {
			if ((size_t)(e - b) >= sizeof(s->disks[0])) {
				pl__log_warnx("--disk: '%.*s' is too long for a device name",
					      (int)(e - b), b);
				return -EINVAL;
			}
			if (s->ndisks == PL_TRACER_MAX_DISKS) {
				pl__log_warnx("--disk: at most %d disks", PL_TRACER_MAX_DISKS);
				return -EINVAL;
			}
			memcpy(s->disks[s->ndisks], b, (size_t)(e - b));
			s->disks[s->ndisks][e - b] = '\0';
			s->ndisks++;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

void pl__tsys_free(struct pl_tsys *s)
{
	pl__procfile_free(&s->diskstats);
	pl__procfile_free(&s->vmstat);
	pl__procfile_free(&s->meminfo);
	pl__procfile_free(&s->psi_io);
	pl__procfile_free(&s->psi_mem);
	pl__procfile_free(&s->loadavg);
	pl__procfile_free(&s->stat);
}

static ssize_t rd(struct pl_procfile *pf, int rootfd, const char *rel, bool keep)
{
	ssize_t n;

	if (!keep) {
		pl__procfile_close(pf);
		return pl__procfile_read_once(pf, rootfd, rel);
	}
	if (pf->fd < 0) {
		int err = pl__procfile_open(pf, rootfd, rel);

		if (err < 0)
			return err;
	}
	n = pl__procfile_read(pf);
	if (n < 0)
		pl__procfile_close(pf); /* reopen next time */
	return n;
}


/* The vmstat keys the tracer uses. A key marked per_zone also names the
 * lines that go on from it (allocstall_normal, pgscan_direct_dma32: per
 * zone before 4.8); a field absent_max reads UINT64_MAX when the kernel
 * has no such line, the others 0; every line a field has is added up: pgscan_kswapd,
 * _khugepaged and _proactive are the other reclaimers', pgscan_anon and
 * _file every reclaim's by LRU (from 5.8), which alone count a memory
 * cgroup's. */
static const struct vm_field {
	const char *key;
	size_t off;
	bool per_zone, absent_max;
} vm_fields[] = {
	{ "compact_stall", offsetof(struct pl_vmstat, compact), false, false },
	{ "allocstall", offsetof(struct pl_vmstat, alloc), true, false },
	{ "pgmajfault", offsetof(struct pl_vmstat, majflt), false, false },
	{ "nr_dirty", offsetof(struct pl_vmstat, nr_dirty), false, false },
	{ "nr_writeback", offsetof(struct pl_vmstat, nr_writeback), false, false },
	{ "nr_dirtied", offsetof(struct pl_vmstat, nr_dirtied), false, true },
	{ "nr_written", offsetof(struct pl_vmstat, nr_written), false, true },
	{ "nr_dirty_threshold", offsetof(struct pl_vmstat, dirty_thresh), false, true },
	{ "nr_dirty_background_threshold", offsetof(struct pl_vmstat, dirty_bg_thresh), false, true },
	{ "pgscan_direct", offsetof(struct pl_vmstat, scan_direct), true, false },
	{ "pgsteal_direct", offsetof(struct pl_vmstat, steal_direct), true, false },
	{ "pgscan_kswapd", offsetof(struct pl_vmstat, scan_other), false, false },
	{ "pgscan_khugepaged", offsetof(struct pl_vmstat, scan_other), false, false },
	{ "pgscan_proactive", offsetof(struct pl_vmstat, scan_other), false, false },
	{ "pgscan_anon", offsetof(struct pl_vmstat, scan_all), false, false },
	{ "pgscan_file", offsetof(struct pl_vmstat, scan_all), false, false },
};
#define VM_FIELDS (sizeof(vm_fields) / sizeof(vm_fields[0]))

/* The field of the key that is klen bytes at s, or -1. Not
 * pgscan_direct_throttle: a count of throttlings, not of pages. */
static int vm_field_of(const char *s, size_t klen)
{
	for (size_t i = 0; i < VM_FIELDS; i++) {
		const struct vm_field *f = &vm_fields[i];
		size_t n = strlen(f->key);

		if (s[0] == f->key[0] && (klen == n || (f->per_zone && klen > n)) &&
		    memcmp(s, f->key, n) == 0)
			return klen == 22 && memcmp(s, "pgscan_direct_throttle", 22) == 0 ? -1 : (int)i;
	}
	return -1;
}

void pl__tsys_parse_vmstat_all(const char *buf, struct pl_vmstat *v)
{
	const char *s = buf, *buf_end = buf + strlen(buf);
	uint32_t seen = 0;

	memset(v, 0, sizeof(*v));
	while (s < buf_end) {
		const char *nl = memchr(s, '\n', (size_t)(buf_end - s));
		const char *end = nl ? nl : buf_end, *val_s;
		size_t klen = strcspn(s, " \t\n");
		int f = vm_field_of(s, klen);
		uint64_t val;

		for (val_s = s + klen; val_s < end && (*val_s == ' ' || *val_s == '\t'); val_s++)
			;
		s = nl ? nl + 1 : end;
		/* malformed: skipped, not guessed */
		if (f < 0 || val_s == end || pl__parse_u64(&val_s, &val) < 0 || val_s != end)
			continue;
		*(uint64_t *)(void *)((char *)v + vm_fields[f].off) += val;
		seen |= 1u << f;
	}
	for (size_t f = 0; f < VM_FIELDS; f++) {
		if (vm_fields[f].absent_max && !(seen & (1u << f)))
			*(uint64_t *)(void *)((char *)v + vm_fields[f].off) = UINT64_MAX;
		if (vm_fields[f].off == offsetof(struct pl_vmstat, scan_all) && (seen & (1u << f)))
			v->have_scan_all = true;
	}
}

static void read_disks(struct pl_tsys *s, int rootfd, bool keep, struct pl_tsys_sample *out)
{
	uint64_t sect[PL_TRACER_MAX_DISKS] = { 0 }, busy[PL_TRACER_MAX_DISKS] = { 0 };
	bool found[PL_TRACER_MAX_DISKS] = { false };
	struct pl_diskstat d;
	const char *cur;
	size_t i;
	int r;

	if (rd(&s->diskstats, rootfd, "diskstats", keep) >= 0) {
		cur = s->diskstats.buf;
		while ((r = pl__parse_diskstats_next(&cur, &d)) != 0) {
			if (r < 0)
				continue;
			for (i = 0; i < s->ndisks; i++) {
				if (strcmp(d.name, s->disks[i]) == 0) {
					sect[i] = d.sectors_written;
					busy[i] = d.io_ms;
					found[i] = true;
				}
			}
		}
	}
	out->disk_d_write_kb = 0;
	out->disk_d_busy_ms = 0;
	out->have_disk = false;
	for (i = 0; i < s->ndisks; i++) {
		/* As the Python tool: a disk counts when present now and before. */
		if (found[i] && s->have_prev && s->prev_found[i]) {
			int64_t ds = (int64_t)(sect[i] - s->prev_sect[i]);
			int64_t db = (int64_t)(busy[i] - s->prev_busy[i]);

			out->disk_d_write_kb += (double)(ds * 512) / 1024.0;
			out->disk_d_busy_ms += (double)db;
			out->have_disk = true;
		}
		s->prev_sect[i] = sect[i];
		s->prev_busy[i] = busy[i];
		s->prev_found[i] = found[i];
	}
}

/* Pages scanned by global direct reclaim since the last read (or stolen,
 * where more), and by the reclaim no per-reclaimer counter names (a memory
 * cgroup's): 0 when a counter went back or the kernel has none. */
static void scan_deltas(const struct pl_tsys *s, const struct pl_vmstat *vm,
			struct pl_tsys_sample *out)
{
	const struct pl_vmstat *p = &s->prev_vm;
	uint64_t named, named_prev;

	out->d_scan_direct = 0;
	out->d_scan_cgroup = 0;
	if (vm->scan_direct > p->scan_direct)
		out->d_scan_direct = (int64_t)(vm->scan_direct - p->scan_direct);
	if (vm->steal_direct > p->steal_direct &&
	    (int64_t)(vm->steal_direct - p->steal_direct) > out->d_scan_direct)
		out->d_scan_direct = (int64_t)(vm->steal_direct - p->steal_direct);
	if (!vm->have_scan_all || !p->have_scan_all || vm->scan_all < p->scan_all)
		return;
	named = vm->scan_direct + vm->scan_other;
	named_prev = p->scan_direct + p->scan_other;
	if (named < named_prev)
		return;
	if (vm->scan_all - p->scan_all > named - named_prev)
		out->d_scan_cgroup = (int64_t)((vm->scan_all - p->scan_all) - (named - named_prev));
}

/* A kernel without PSI is reported once per process (probe "psi", which
 * PERFLINK_PROBE_FAIL can force); a file that is there but unreadable or
 * malformed once per tracer and file. */
static bool read_psi(struct pl_procfile *pf, int rootfd, const char *rel, bool keep,
		     struct pl_psi *out, bool *reported)
{
	ssize_t n = pl__probe_forced(PL_PROBE_PSI) ? -ENOENT
						   : rd(pf, rootfd, rel, keep);

	if (n >= 0 && pl__parse_pressure(pf->buf, out) == 0) {
		pl__probe_present(PL_PROBE_PSI);
		return true;
	}
	if (n == -ENOENT)
		pl__probe_absent(PL_PROBE_PSI, false,
				 "no /proc/%s (kernel before 4.20 or without CONFIG_PSI): stall "
				 "events carry no PSI; the tracer watches procs_blocked instead",
				 rel);
	else if (n == -EOPNOTSUPP)
		pl__probe_absent(PL_PROBE_PSI, false,
				 "/proc/%s: PSI is disabled (psi=0 on the kernel command line): "
				 "stall events carry no PSI",
				 rel);
	else if (!*reported) {
		*reported = true;
		if (n < 0)
			pl__log_warnc((int)-n, "%s: cannot read", rel);
		else
			pl__log_warnx("%s: unexpected contents, ignored", rel);
	}
	memset(out, 0, sizeof(*out));
	return false;
}

static bool read_u64_file(int rootfd, const char *rel, uint64_t *out)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	const char *p;
	bool ok = false;

	if (pl__procfile_read_once(&pf, rootfd, rel) > 0) {
		p = pf.buf;
		ok = pl__parse_u64(&p, out) == 0 && (*p == '\n' || *p == '\0');
	}
	pl__procfile_free(&pf);
	return ok;
}

static void read_sysctls(struct pl_tsys *s, int rootfd)
{
	uint64_t v;

	s->sysctl_read = true;
	s->dirty_ratio = read_u64_file(rootfd, "sys/vm/dirty_ratio", &v) && v <= 100 ? (long)v : -1;
	s->dirty_bg_ratio = read_u64_file(rootfd, "sys/vm/dirty_background_ratio", &v) && v <= 100
				    ? (long)v : -1;
	s->dirty_bytes = read_u64_file(rootfd, "sys/vm/dirty_bytes", &v) ? v : 0;
	s->dirty_bg_bytes = read_u64_file(rootfd, "sys/vm/dirty_background_bytes", &v) ? v : 0;
	s->dirty_expire_cs = read_u64_file(rootfd, "sys/vm/dirty_expire_centisecs", &v) &&
				     v <= INT32_MAX ? (long)v : -1;
	s->dirty_writeback_cs = read_u64_file(rootfd, "sys/vm/dirty_writeback_centisecs", &v) &&
					v <= INT32_MAX ? (long)v : -1;
}

/* The kernel's own thresholds (vmstat, pages, from 2.6.37 on) are what it
 * compares nr_dirty with. Without them: a share of the dirtyable memory,
 * which MemAvailable is close to and a reader of the CSV can check. */
static void kernel_thresholds(const struct pl_tsys *s, const struct pl_vmstat *v,
			      struct pl_tsys_sample *out)
{
	uint64_t kb = s->page_bytes >= 1024 ? (uint64_t)s->page_bytes / 1024 : 1;

	out->nr_dirty_kb = v->nr_dirty * kb;
	out->nr_writeback_kb = v->nr_writeback * kb;
	if (v->dirty_bg_thresh != UINT64_MAX && v->dirty_thresh != UINT64_MAX &&
	    v->dirty_bg_thresh <= UINT64_MAX / kb && v->dirty_thresh <= UINT64_MAX / kb) {
		out->bg_thresh_kb = v->dirty_bg_thresh * kb;
		out->thresh_kb = v->dirty_thresh * kb;
		out->thresh_estimated = false;
	} else {
		out->bg_thresh_kb = s->dirty_bg_thresh_kb;
		out->thresh_kb = s->dirty_thresh_kb;
		out->thresh_estimated = true;
	}
}

/* The sysctls' thresholds as a share of MemAvailable, for kernels without
 * their own in vmstat. */
static void thresholds(struct pl_tsys *s, uint64_t memavail_kb)
{
	s->dirty_bg_thresh_kb = s->dirty_bg_bytes ? s->dirty_bg_bytes / 1024
			      : s->dirty_bg_ratio > 0 ? memavail_kb * (uint64_t)s->dirty_bg_ratio / 100
						      : 0;
	s->dirty_thresh_kb = s->dirty_bytes ? s->dirty_bytes / 1024
			   : s->dirty_ratio > 0 ? memavail_kb * (uint64_t)s->dirty_ratio / 100 : 0;
}

/* procs_blocked, from /proc/stat. */
static void read_stat(struct pl_tsys *s, int rootfd, bool keep, struct pl_tsys_sample *out)
{
	if (rd(&s->stat, rootfd, "stat", keep) > 0) {
		static const char *const key[] = { "procs_blocked" };
		uint64_t v = UINT64_MAX;

		pl__parse_keyed_u64(s->stat.buf, key, 1, &v);
		if (v != UINT64_MAX)
			out->procs_blocked = (int64_t)v;
	}
}

void pl__tsys_read(struct pl_tsys *s, int rootfd, bool keep, struct pl_tsys_sample *out)
{
	static const char *const mkeys[] = { "MemFree", "MemAvailable", "Dirty", "Writeback" };
	uint64_t mvals[4] = { 0 };
	struct pl_vmstat vm;

	memset(out, 0, sizeof(*out));
	if (!s->sysctl_read)
		read_sysctls(s, rootfd);
	read_disks(s, rootfd, keep, out);
	if (rd(&s->vmstat, rootfd, "vmstat", keep) >= 0)
		pl__tsys_parse_vmstat_all(s->vmstat.buf, &vm);
	else
		pl__tsys_parse_vmstat_all("", &vm);
	out->nr_dirty = vm.nr_dirty;
	out->nr_writeback = vm.nr_writeback;
	out->dirtied_bytes = -1;
	out->written_kb = -1;
	if (s->have_prev) {
		const struct pl_vmstat *p = &s->prev_vm;

		out->d_compact = (int64_t)(vm.compact - p->compact);
		out->d_alloc = (int64_t)(vm.alloc - p->alloc);
		out->d_majflt = (int64_t)(vm.majflt - p->majflt);
		/* UINT64_MAX: a kernel without the counter (before 2.6.37) */
		if (vm.nr_dirtied != UINT64_MAX && p->nr_dirtied <= vm.nr_dirtied)
			out->dirtied_bytes = (int64_t)((vm.nr_dirtied - p->nr_dirtied) *
						       (uint64_t)s->page_bytes);
		if (vm.nr_written != UINT64_MAX && p->nr_written <= vm.nr_written)
			out->written_kb = (int64_t)((vm.nr_written - p->nr_written) *
						    (uint64_t)s->page_bytes / 1024);
		scan_deltas(s, &vm, out);
	}
	s->prev_vm = vm;
	s->have_prev = true;
	if (rd(&s->meminfo, rootfd, "meminfo", keep) >= 0)
		pl__parse_keyed_u64(s->meminfo.buf, mkeys, 4, mvals);
	out->memfree_kb = mvals[0];
	out->memavail_kb = mvals[1];
	out->dirty_kb = mvals[2];
	out->writeback_kb = mvals[3];
	thresholds(s, out->memavail_kb);
	kernel_thresholds(s, &vm, out);
	out->have_psi_io = read_psi(&s->psi_io, rootfd, "pressure/io", keep, &out->psi_io,
				    &s->psi_io_reported);
	out->have_psi_mem = read_psi(&s->psi_mem, rootfd, "pressure/memory", keep,
				     &out->psi_mem, &s->psi_mem_reported);
	/* Without PSI, procs_blocked says whether a task may have blocked;
	 * with it, the count is read only when PSI grew, for the sweep to
	 * tell whether it knows every blocked task already. */
	out->procs_blocked = -1;
	if (!out->have_psi_io)
		read_stat(s, rootfd, keep, out);
	out->maybe_blocked = pl__tsys_maybe_blocked(s, out);
	if (out->have_psi_io && out->maybe_blocked)
		read_stat(s, rootfd, keep, out);
	/* The last field of loadavg is the pid most recently handed out: while
	 * it stays the same, no process appeared and the directory scan can
	 * be skipped. */
	out->last_pid = 0;
	if (rd(&s->loadavg, rootfd, "loadavg", keep) > 0) {
		const char *sp = strrchr(s->loadavg.buf, ' ');
		uint64_t v;

		if (sp) {
			sp++;
			if (pl__parse_u64(&sp, &v) == 0 && (*sp == '\n' || *sp == '\0'))
				out->last_pid = v;
		}
	}
}

int pl__tsys_check_disks(const struct pl_tsys *s, int rootfd)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	char have[512] = "";
	bool found[PL_TRACER_MAX_DISKS] = { false };
	struct pl_diskstat d;
	const char *cur;
	size_t len = 0, i;
	int r;

	if (pl__procfile_read_once(&pf, rootfd, "diskstats") < 0) {
		pl__procfile_free(&pf);
		return 0; /* no table to check against: as before */
	}
	cur = pf.buf;
	while ((r = pl__parse_diskstats_next(&cur, &d)) != 0) {
		if (r < 0)
			continue;
		for (i = 0; i < s->ndisks; i++)
			found[i] |= strcmp(d.name, s->disks[i]) == 0;
		if (len < sizeof(have))
			len += (size_t)snprintf(have + len, sizeof(have) - len, "%s%s",
						len ? ", " : "", d.name);
	}
	pl__procfile_free(&pf);
	if (!s->ndisks) {
		pl__log_warnx("--disk names no disk; diskstats has: %s", have[0] ? have : "none");
		return -EINVAL;
	}
	/* Said, not refused: the default (sda, the Python tool's) must not stop
	 * perflinkd on a device whose disk is mmcblk0, and a disk may appear
	 * later (USB storage). */
	for (i = 0; i < s->ndisks; i++) {
		if (!found[i])
			pl__log_warnx("--disk %s: not in diskstats, which has: %s; its columns "
				      "read 0 until it appears",
				      s->disks[i], have[0] ? have : "none");
	}
	return 0;
}

/* Probe "delayacct" forced absent reads as off: delays are not counted. */
enum pl_delayacct pl__tracer_read_delayacct(int rootfd)
{
	struct pl_procfile pf = PL_PROCFILE_INIT;
	enum pl_delayacct d = PL_DELAYACCT_UNREADABLE;
	ssize_t n;

	if (pl__probe_forced(PL_PROBE_DELAYACCT))
		return PL_DELAYACCT_OFF;
	n = pl__procfile_read_once(&pf, rootfd, "sys/kernel/task_delayacct");
	if (n == -ENOENT)
		d = PL_DELAYACCT_ABSENT;
	else if (n > 0 && (pf.buf[0] == '0' || pf.buf[0] == '1') &&
		 (pf.buf[1] == '\n' || pf.buf[1] == '\0'))
		d = pf.buf[0] == '1' ? PL_DELAYACCT_ON : PL_DELAYACCT_OFF;
	pl__procfile_free(&pf);
	return d;
}

const char *pl__tracer_delayacct_name(enum pl_delayacct d)
{
	switch (d) {
	case PL_DELAYACCT_ON: return "on";
	case PL_DELAYACCT_OFF: return "off";
	case PL_DELAYACCT_ABSENT: return "absent";
	case PL_DELAYACCT_UNREADABLE: break;
	}
	return "unreadable";
}

bool pl__tsys_maybe_blocked(struct pl_tsys *s, const struct pl_tsys_sample *cur)
{
	bool grew;

	if (!cur->have_psi_io) {
		s->have_prev_psi = false;
		return cur->procs_blocked != 0;
	}
	grew = !s->have_prev_psi || cur->psi_io.some.total_us != s->prev_psi_io_us ||
	       !cur->have_psi_mem || cur->psi_mem.some.total_us != s->prev_psi_mem_us;
	s->have_prev_psi = true;
	s->prev_psi_io_us = cur->psi_io.some.total_us;
	s->prev_psi_mem_us = cur->have_psi_mem ? cur->psi_mem.some.total_us : 0;
	return grew;
}
