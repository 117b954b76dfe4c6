/* What the resource sampler records about the system: once, in the header
 * (kernel, clock tick, page size, CPUs, whether smaps_rollup exists, the
 * sysctls that decide reclaim and writeback), and on every line (meminfo,
 * the vmstat counters of reclaim, compaction and faults, buddyinfo's free
 * blocks per order). Everything is read relative to the root, so a recorded
 * tree describes its own kernel. */
#include "resources_priv.h"
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* Absent ones are written as null and listed in sysctl_absent:
 * vm.extra_free_kbytes exists only in Android-derived kernels (AGNOS),
 * kernel.task_delayacct only since 5.14. */
static const char *const sysctls[] = {
	"vm.min_free_kbytes",
	"vm.extra_free_kbytes",
	"vm.watermark_scale_factor",
	"vm.swappiness",
	"vm.dirty_ratio",
	"vm.dirty_background_ratio",
	"vm.dirty_bytes",
	"vm.dirty_background_bytes",
	"vm.dirty_expire_centisecs",
	"vm.dirty_writeback_centisecs",
	"kernel.task_delayacct",
};

static const char *const meminfo_keys[] = {
	"MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "SwapCached",
	"Active", "Inactive", "Active(anon)", "Inactive(anon)", "Active(file)",
	"Inactive(file)", "Unevictable", "Mlocked", "SwapTotal", "SwapFree", "Dirty",
	"Writeback", "AnonPages", "Mapped", "Shmem", "KReclaimable", "Slab", "SReclaimable",
	"SUnreclaim", "KernelStack", "PageTables", "CommitLimit", "Committed_AS",
	"VmallocUsed", "CmaTotal", "CmaFree",
};

/* vmstat counters; a trailing '*' matches a prefix (the per-zone and
 * per-kind variants differ between kernels: 3.10 has one allocstall and
 * per-zone pgsteal_kswapd_normal, 4.8+ allocstall_<zone> and node-wide
 * pgsteal_kswapd, 5.x adds pgsteal_anon/file). */
static const char *const vmstat_keys[] = {
	"pgfault", "pgmajfault", "pswpin", "pswpout", "pgpgin", "pgpgout",
	"allocstall*", "pgsteal_*", "pgscan_*", "compact_*", "oom_kill",
	"kswapd_low_wmark_hit_quickly", "kswapd_high_wmark_hit_quickly", "workingset_refault*",
};

static bool exists_at(int dirfd, const char *rel)
{
	return faccessat(dirfd, rel, F_OK, 0) == 0;
}

/* The root's "self" when it has one (the live /proc); in a recorded tree the
 * first process directory stands for the kernel it was recorded on. */
static bool probe_smaps_rollup(int root_fd)
{
	struct dirent *de;
	bool found = false, rollup = false;
	DIR *d;
	int fd;

	if (exists_at(root_fd, "self/smaps"))
		return exists_at(root_fd, "self/smaps_rollup");
	fd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	while (!found && (de = readdir(d))) {
		char rel[300];

		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    strspn(de->d_name, "0123456789") != strlen(de->d_name))
			continue;
		snprintf(rel, sizeof(rel), "%s/smaps_rollup", de->d_name);
		if (exists_at(root_fd, rel)) {
			found = rollup = true;
			continue;
		}
		snprintf(rel, sizeof(rel), "%s/smaps", de->d_name);
		found = exists_at(root_fd, rel);
	}
	closedir(d);
	return rollup;
}

void pl__res_probe(struct pl_resources *r)
{
	struct utsname u;
	ssize_t n = pl__res_read_root(r, NULL, "sys/kernel/osrelease");

	r->kernel_release[0] = '\0';
	if (n > 0) {
		size_t len = strcspn(r->buf.buf, "\n");

		if (len >= sizeof(r->kernel_release))
			len = sizeof(r->kernel_release) - 1;
		memcpy(r->kernel_release, r->buf.buf, len);
		r->kernel_release[len] = '\0';
	} else if (uname(&u) == 0) {
		snprintf(r->kernel_release, sizeof(r->kernel_release), "%s", u.release);
	}
	r->smaps_rollup = !pl__probe_forced(PL_PROBE_SMAPS_ROLLUP) &&
			  probe_smaps_rollup(r->root_fd);
	if (r->smaps_rollup)
		pl__probe_present(PL_PROBE_SMAPS_ROLLUP);
	else
		pl__probe_absent(PL_PROBE_SMAPS_ROLLUP, false,
				 "no /proc/PID/smaps_rollup (kernel %s; it came in 4.14): PSS is "
				 "summed from smaps, which costs more per read",
				 r->kernel_release[0] ? r->kernel_release : "unknown");
}

static void emit_sysctls(struct pl_resources *r)
{
	enum { N = sizeof(sysctls) / sizeof(sysctls[0]) };
	int err[N];
	int64_t val[N];
	size_t i;

	pl__json_begin_object(&r->json, "sysctl");
	for (i = 0; i < N; i++) {
		char rel[80];
		const char *dot = strchr(sysctls[i], '.');
		ssize_t n;

		snprintf(rel, sizeof(rel), "sys/%.*s/%s", (int)(dot - sysctls[i]), sysctls[i],
			 dot + 1);
		n = pl__res_read_root(r, NULL, rel);
		err[i] = n < 0 ? (int)n : pl__parse_sysctl_i64(r->buf.buf, &val[i]);
		if (err[i] == 0)
			pl__json_i64(&r->json, sysctls[i], val[i]);
		else
			pl__json_null(&r->json, sysctls[i]);
	}
	pl__json_end_object(&r->json);
	pl__json_begin_array(&r->json, "sysctl_absent");
	for (i = 0; i < N; i++) {
		if (err[i] == -ENOENT)
			pl__json_str(&r->json, NULL, sysctls[i]);
	}
	pl__json_end_array(&r->json);
	pl__json_begin_object(&r->json, "sysctl_unreadable");
	for (i = 0; i < N; i++) {
		if (err[i] < 0 && err[i] != -ENOENT)
			pl__json_str(&r->json, sysctls[i],
				     err[i] == -EINVAL ? "malformed" : strerror(-err[i]));
	}
	pl__json_end_object(&r->json);
}

void pl__res_emit_header_facts(struct pl_resources *r)
{
	struct pl_json *j = &r->json;
	struct utsname u;
	long v;

	pl__res_json_text(j, "kernel_release", r->kernel_release);
	if (uname(&u) == 0)
		pl__res_json_text(j, "machine", u.machine);
	/* The sampler's own machine: what its ticks and pages mean. */
	v = sysconf(_SC_CLK_TCK);
	pl__json_i64(j, "clk_tck", v);
	v = sysconf(_SC_PAGESIZE);
	pl__json_i64(j, "page_size", v);
	v = sysconf(_SC_NPROCESSORS_ONLN);
	pl__json_i64(j, "ncpu_online", v);
	v = sysconf(_SC_NPROCESSORS_CONF);
	pl__json_i64(j, "ncpu_configured", v);
	pl__json_bool(j, "smaps_rollup", r->smaps_rollup);
	pl__json_str(j, "pss_source", r->smaps_rollup ? "smaps_rollup" : "smaps");
	emit_sysctls(r);
}

static void json_key_u64(struct pl_json *j, const char *key, size_t key_len, uint64_t v)
{
	char k[64];

	if (key_len >= sizeof(k))
		return;
	memcpy(k, key, key_len);
	k[key_len] = '\0';
	pl__json_u64(j, k, v);
}

static bool key_in(const char *const *list, size_t n, const char *key, size_t key_len)
{
	size_t i;

	for (i = 0; i < n; i++) {
		size_t len = strlen(list[i]);

		if (len > 0 && list[i][len - 1] == '*') {
			if (key_len >= len - 1 && memcmp(list[i], key, len - 1) == 0)
				return true;
		} else if (len == key_len && memcmp(list[i], key, len) == 0) {
			return true;
		}
	}
	return false;
}

static void emit_keyed(struct pl_resources *r, struct pl_procfile *pf, const char *file,
		       const char *obj_key, const char *const *list, size_t n)
{
	ssize_t len = pl__res_read_root(r, pf, file);
	const char *cur, *key;
	size_t key_len;
	uint64_t v;
	int ret;
	char err_key[48];

	if (len < 0) {
		snprintf(err_key, sizeof(err_key), "%s_error", obj_key);
		pl__json_str(&r->json, err_key, strerror((int)-len));
		return;
	}
	pl__json_begin_object(&r->json, obj_key);
	cur = r->buf.buf;
	while ((ret = pl__parse_kv_next(&cur, &key, &key_len, &v)) != 0) {
		if (ret == 1 && key_in(list, n, key, key_len))
			json_key_u64(&r->json, key, key_len, v);
	}
	pl__json_end_object(&r->json);
}

static void emit_buddyinfo(struct pl_resources *r)
{
	ssize_t len = pl__res_read_root(r, &r->buddyinfo, "buddyinfo");
	struct pl_buddy_zone z;
	const char *cur;
	unsigned k;
	int ret;

	if (len < 0) {
		pl__json_str(&r->json, "buddyinfo_error", strerror((int)-len));
		return;
	}
	pl__json_begin_array(&r->json, "buddyinfo");
	cur = r->buf.buf;
	while ((ret = pl__parse_buddyinfo_next(&cur, &z)) != 0) {
		if (ret != 1)
			continue;
		pl__json_begin_object(&r->json, NULL);
		pl__json_i64(&r->json, "node", z.node);
		pl__res_json_text(&r->json, "zone", z.zone);
		pl__json_begin_array(&r->json, "free_blocks");
		for (k = 0; k < z.n_orders; k++)
			pl__json_u64(&r->json, NULL, z.free_blocks[k]);
		pl__json_end_array(&r->json);
		pl__json_end_object(&r->json);
	}
	pl__json_end_array(&r->json);
}

void pl__res_emit_system(struct pl_resources *r)
{
	emit_keyed(r, &r->meminfo, "meminfo", "meminfo_kb", meminfo_keys,
		   sizeof(meminfo_keys) / sizeof(meminfo_keys[0]));
	emit_keyed(r, &r->vmstat, "vmstat", "vmstat", vmstat_keys,
		   sizeof(vmstat_keys) / sizeof(vmstat_keys[0]));
	emit_buddyinfo(r);
}
