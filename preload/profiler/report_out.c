/* Formatting and writing a report: syslog lines and a JSON line. Runs only
 * on the reporter thread, so it may allocate, take locks and block. */
#include "clock.h"
#include "diag.h"
#include "json_writer.h"
#include "report_daemon.h"
#include "reporter.h"
#include "stages.h"
#include "stats.h"
#include "whole_write.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define TOP_SITES 8 /* per cache stage; the rest are summed as "(other)" */
#define SYMBOL_MAX 160

static struct pl_settings settings;
static uint32_t interval;
static unsigned report_number;
static uint64_t start_mono_ns;
static int pid;
static bool warned_out, warned_syslog;
static struct pl_snapshot snap; /* large: kept off the reporter's stack */

void pl__report_out_init(const struct pl_settings *s, uint32_t interval_frames)
{
	settings = *s;
	interval = interval_frames;
	pl__report_daemon_init(s);
	start_mono_ns = pl__mono_ns();
	pid = (int)getpid();
	/* a relative path would follow the target's later chdir() calls */
	if (settings.out_path[0] && settings.out_path[0] != '/') {
		char cwd[PL_PATH_MAX];
		char full[PL_PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)) ||
		    (size_t)snprintf(full, sizeof(full), "%s/%s", cwd, settings.out_path) >=
			    sizeof(full)) {
			pl__diag("cannot make PERFLINK_PROFILE_OUT absolute; no JSON reports");
			settings.out_path[0] = '\0';
		} else {
			memcpy(settings.out_path, full, sizeof(full));
		}
	}
}

void pl__report_out_fork_child(void)
{
	pl__report_daemon_fork_child();
	report_number = 0;
	start_mono_ns = pl__mono_ns();
	pid = (int)getpid();
}

static uint64_t avg(uint64_t total, uint64_t n)
{
	return n ? total / n : 0;
}

/* "symbol+0xoff", or "" when the loader knows no symbol there; module and
 * module offset always, when the address is in a loaded object. */
struct site_name {
	char symbol[SYMBOL_MAX];
	char module[SYMBOL_MAX]; /* copied: the target may dlclose it meanwhile */
	uintptr_t module_offset;
};

static void resolve_site(uintptr_t addr, struct site_name *out)
{
	Dl_info info;

	out->symbol[0] = '\0';
	out->module[0] = '\0';
	out->module_offset = 0;
	/* addr is a return address: look up the call instruction before it,
	 * which belongs to the caller even when the call ends the function */
	if (!dladdr((void *)(addr - 1), &info))
		return;
	/* dladdr's strings belong to the loaded object: copy them at once */
	if (info.dli_fname)
		snprintf(out->module, sizeof(out->module), "%s", info.dli_fname);
	out->module_offset = addr - (uintptr_t)info.dli_fbase;
	if (info.dli_sname && info.dli_saddr)
		snprintf(out->symbol, sizeof(out->symbol), "%s+0x%lx", info.dli_sname,
			 (unsigned long)(addr - (uintptr_t)info.dli_saddr));
}

/* Indices of stage's sites, most CPU first, at most max. */
static unsigned top_sites(unsigned stage, unsigned *idx, unsigned max)
{
	unsigned i, j, n = 0;

	for (i = 0; i < snap.n_sites; i++) {
		if (snap.site[i].stage != stage)
			continue;
		/* insert into the sorted list; when it is full the last one falls off */
		j = n < max ? n++ : max;
		while (j > 0 && snap.site[idx[j - 1]].cpu_total_ns < snap.site[i].cpu_total_ns) {
			if (j < max)
				idx[j] = idx[j - 1];
			j--;
		}
		if (j < max)
			idx[j] = i;
	}
	return n;
}

/* --- syslog ----------------------------------------------------------- */

struct syslog_conn {
	int fd;
	int type;
	struct sockaddr_un addr;
};

static int syslog_open(struct syslog_conn *c, int type)
{
	c->type = type;
	c->fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	if (connect(c->fd, (struct sockaddr *)&c->addr, sizeof(c->addr)) < 0) {
		int e = errno;

		close(c->fd);
		c->fd = -1;
		return -e;
	}
	return 0;
}

static int syslog_begin(struct syslog_conn *c)
{
	int r;

	memset(&c->addr, 0, sizeof(c->addr));
	c->addr.sun_family = AF_UNIX;
	memcpy(c->addr.sun_path, settings.syslog_path, strlen(settings.syslog_path) + 1);
	r = syslog_open(c, SOCK_DGRAM);
	if (r == -EPROTOTYPE) /* a syslog daemon listening on a stream socket */
		r = syslog_open(c, SOCK_STREAM);
	if (r < 0 && !warned_syslog) {
		warned_syslog = true;
		pl__diag("syslog socket %s: error %d; reports go only to PERFLINK_PROFILE_OUT",
			 settings.syslog_path, -r);
	}
	return r;
}

/* One record: "<14>Mmm dd hh:mm:ss perflink-profile[pid]: text" (RFC 3164,
 * as syslog(3) writes it, in the C locale whatever the target's is). */
static void syslog_send(struct syslog_conn *c, const char *text)
{
	static const char months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	char msg[1024];
	struct tm tm;
	time_t now = time(NULL);
	int n;

	if (c->fd < 0)
		return;
	if (!localtime_r(&now, &tm))
		memset(&tm, 0, sizeof(tm));
	n = snprintf(msg, sizeof(msg), "<%d>%s %2d %02d:%02d:%02d perflink-profile[%d]: %s",
		     LOG_USER | LOG_INFO, months[tm.tm_mon % 12], tm.tm_mday, tm.tm_hour, tm.tm_min,
		     tm.tm_sec, pid, text);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(msg))
		n = sizeof(msg) - 1;
	/* a stream socket separates records with the NUL, as syslog(3) does */
	if (send(c->fd, msg, (size_t)n + (c->type == SOCK_STREAM), MSG_DONTWAIT | MSG_NOSIGNAL) <
		    0 &&
	    !warned_syslog) {
		warned_syslog = true;
		pl__diag("syslog socket %s: send failed (error %d); records were lost",
			 settings.syslog_path, errno);
	}
}

/* --- the report ------------------------------------------------------- */

/* The target's name for the records: no spaces or '=' in a key=value line. */
static void comm_name(char *out, size_t cap)
{
	const char *src = program_invocation_short_name;
	size_t i;

	for (i = 0; i + 1 < cap && src && src[i]; i++)
		out[i] = (src[i] == ' ' || src[i] == '=' || (unsigned char)src[i] < 0x20) ? '_'
											  : src[i];
	out[i] = '\0';
}

struct totals {
	uint64_t calls, wall_total_ns, cpu_total_ns;
	uint64_t cache_calls, cache_bytes, stream_bytes, retries, errors;
};

static void json_stage(struct pl_json *j, const struct pl_stage *st,
		       const struct pl_stage_stats *s)
{
	pl__json_str(j, "name", st->name);
	pl__json_str(j, "kind", pl__kind_name((enum pl_stage_kind)st->kind));
	pl__json_bool(j, "boundary", st->boundary);
	pl__json_u64(j, "calls", s->calls);
	pl__json_u64(j, "errors", s->errors);
	pl__json_u64(j, "retries_eagain", s->eagain);
	pl__json_u64(j, "retries_enodata", s->enodata);
	pl__json_u64(j, "retries_eintr", s->eintr);
	pl__json_u64(j, "wall_total_ns", s->wall_total_ns);
	pl__json_u64(j, "wall_avg_ns", avg(s->wall_total_ns, s->calls));
	pl__json_u64(j, "wall_max_ns", s->wall_max_ns);
	pl__json_u64(j, "cpu_total_ns", s->cpu_total_ns);
	pl__json_u64(j, "cpu_avg_ns", avg(s->cpu_total_ns, s->calls));
	pl__json_u64(j, "cpu_max_ns", s->cpu_max_ns);
	pl__json_u64(j, "cache_bytes", s->cache_bytes);
	pl__json_u64(j, "stream_bytes", s->stream_bytes);
}

static void stage_line(char *line, size_t cap, const char *prefix, const struct pl_stage *st,
		       const struct pl_stage_stats *s)
{
	snprintf(line, cap,
		 "%s record=stage stage=%s kind=%s calls=%llu errors=%llu retries_eagain=%llu "
		 "retries_enodata=%llu retries_eintr=%llu wall_total_ns=%llu wall_avg_ns=%llu "
		 "wall_max_ns=%llu cpu_total_ns=%llu cpu_avg_ns=%llu cpu_max_ns=%llu "
		 "cache_bytes=%llu stream_bytes=%llu",
		 prefix, st->name, pl__kind_name((enum pl_stage_kind)st->kind),
		 (unsigned long long)s->calls, (unsigned long long)s->errors,
		 (unsigned long long)s->eagain, (unsigned long long)s->enodata,
		 (unsigned long long)s->eintr, (unsigned long long)s->wall_total_ns,
		 (unsigned long long)avg(s->wall_total_ns, s->calls),
		 (unsigned long long)s->wall_max_ns, (unsigned long long)s->cpu_total_ns,
		 (unsigned long long)avg(s->cpu_total_ns, s->calls),
		 (unsigned long long)s->cpu_max_ns, (unsigned long long)s->cache_bytes,
		 (unsigned long long)s->stream_bytes);
}

/* The call sites of a cache stage: the top ones by CPU, then the rest. */
static void write_sites(unsigned stage, const char *prefix, struct syslog_conn *sc,
			struct pl_json *j)
{
	unsigned idx[TOP_SITES], n, i, k;
	struct pl_site_stats rest;
	struct site_name name;
	char line[768];

	n = top_sites(stage, idx, TOP_SITES);
	memset(&rest, 0, sizeof(rest));
	for (i = 0; i < snap.n_sites; i++) {
		if (snap.site[i].stage != stage)
			continue;
		for (k = 0; k < n && idx[k] != i; k++)
			;
		if (k < n)
			continue;
		rest.calls += snap.site[i].calls;
		rest.wall_total_ns += snap.site[i].wall_total_ns;
		rest.cpu_total_ns += snap.site[i].cpu_total_ns;
		rest.bytes += snap.site[i].bytes;
	}
	if (j)
		pl__json_begin_array(j, "sites");
	for (i = 0; i <= n; i++) {
		const struct pl_site_stats *e = i < n ? &snap.site[idx[i]] : &rest;

		if (i == n && rest.calls == 0)
			break;
		if (i < n) {
			resolve_site(e->addr, &name);
		} else {
			strcpy(name.symbol, "(other)");
			name.module[0] = '\0';
			name.module_offset = 0;
		}
		snprintf(line, sizeof(line),
			 "%s record=site stage=%s site=%s module=%s module_offset=0x%lx calls=%llu "
			 "wall_total_ns=%llu cpu_total_ns=%llu bytes=%llu",
			 prefix, pl__stages.stage[stage].name, name.symbol[0] ? name.symbol : "?",
			 name.module[0] ? name.module : "?", (unsigned long)name.module_offset,
			 (unsigned long long)e->calls, (unsigned long long)e->wall_total_ns,
			 (unsigned long long)e->cpu_total_ns, (unsigned long long)e->bytes);
		syslog_send(sc, line);
		if (j) {
			pl__json_begin_object(j, NULL);
			pl__json_str(j, "site", name.symbol);
			pl__json_str(j, "module", name.module);
			pl__json_u64(j, "module_offset", name.module_offset);
			pl__json_u64(j, "addr", i < n ? e->addr : 0);
			pl__json_u64(j, "calls", e->calls);
			pl__json_u64(j, "wall_total_ns", e->wall_total_ns);
			pl__json_u64(j, "cpu_total_ns", e->cpu_total_ns);
			pl__json_u64(j, "bytes", e->bytes);
			pl__json_end_object(j);
		}
	}
	if (j)
		pl__json_end_array(j);
}

static void append_file(const char *text)
{
	/* O_NOFOLLOW: a link planted where the file goes (/tmp) must not make
	 * a target running as root append to the file it points to */
	int fd = open(settings.out_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
		      0644);
	int err;

	if (fd < 0) {
		err = errno;
		goto fail;
	}
	/* the line whole or not at all, whatever other processes append
	 * (whole_write.h); never past RLIMIT_FSIZE (SIGXFSZ would kill the
	 * target) */
	err = -pl__append_record(fd, text, strlen(text));
	if (close(fd) < 0 && errno != EINTR && !err)
		err = errno;
	if (!err)
		return;
fail:
	if (!warned_out) {
		warned_out = true;
		pl__diag("%s: cannot append a report (error %d)", settings.out_path, err);
	}
}

void pl__report_json_begin(struct pl_json *j, const char *type)
{
	pl__json_init(j);
	pl__json_begin_object(j, NULL);
	pl__json_str(j, "type", type);
	pl__json_u64(j, "version", 1);
	pl__json_u64(j, "pid", (uint64_t)pid);
	pl__json_str(j, "comm", program_invocation_short_name);
	pl__json_u64(j, "start_mono_ns", start_mono_ns);
}

bool pl__report_json_wanted(void)
{
	return settings.out_path[0] || pl__report_daemon_enabled();
}

/* The JSON line up to its "stages" array, which the stages then fill. */
static void json_begin(struct pl_json *j, uint64_t frames, uint64_t elapsed_ns)
{
	pl__report_json_begin(j, "perflink-profile");
	pl__json_u64(j, "mono_ns", start_mono_ns + elapsed_ns); /* when it was taken */
	pl__json_u64(j, "report", report_number);
	pl__json_u64(j, "interval_frames", interval);
	pl__json_u64(j, "frames", frames);
	pl__json_u64(j, "elapsed_ns", elapsed_ns);
	pl__json_u64(j, "threads", snap.live_threads);
	pl__json_u64(j, "dropped_calls", snap.dropped_calls);
	pl__json_u64(j, "site_overflow_calls", snap.site_overflow_calls);
	pl__json_u64(j, "daemon_dropped_reports", pl__report_daemon_dropped());
	pl__json_begin_array(j, "stages");
}

static void send_header(struct syslog_conn *sc, const char *prefix, uint64_t frames,
			uint64_t elapsed_ns)
{
	char line[1024];

	snprintf(line, sizeof(line),
		 "%s record=header frames=%llu interval_frames=%u elapsed_ns=%llu threads=%u "
		 "dropped_calls=%llu site_overflow_calls=%llu",
		 prefix, (unsigned long long)frames, interval, (unsigned long long)elapsed_ns,
		 snap.live_threads, (unsigned long long)snap.dropped_calls,
		 (unsigned long long)snap.site_overflow_calls);
	syslog_send(sc, line);
}

static void add_to_totals(struct totals *t, const struct pl_stage *st,
			  const struct pl_stage_stats *s)
{
	t->calls += s->calls;
	t->wall_total_ns += s->wall_total_ns;
	t->cpu_total_ns += s->cpu_total_ns;
	t->cache_bytes += s->cache_bytes;
	t->stream_bytes += s->stream_bytes;
	t->retries += s->eagain + s->enodata + s->eintr;
	t->errors += s->errors;
	if (st->kind == PL_KIND_CACHE)
		t->cache_calls += s->calls;
}

/* A stage's syslog line and JSON object; a cache stage's call sites follow
 * its line and go inside its object. */
static void write_stage(unsigned stage, const char *prefix, struct syslog_conn *sc,
			struct pl_json *j)
{
	const struct pl_stage *st = &pl__stages.stage[stage];
	const struct pl_stage_stats *s = &snap.stage[stage];
	char line[1024];

	stage_line(line, sizeof(line), prefix, st, s);
	syslog_send(sc, line);
	if (j) {
		pl__json_begin_object(j, NULL);
		json_stage(j, st, s);
	}
	if (st->kind == PL_KIND_CACHE)
		write_sites(stage, prefix, sc, j);
	if (j)
		pl__json_end_object(j);
}

static void send_totals(struct syslog_conn *sc, const char *prefix, const struct totals *t)
{
	char line[1024];

	snprintf(line, sizeof(line),
		 "%s record=totals calls=%llu wall_total_ns=%llu cpu_total_ns=%llu "
		 "cache_calls=%llu cache_bytes=%llu stream_bytes=%llu retries=%llu errors=%llu",
		 prefix, (unsigned long long)t->calls, (unsigned long long)t->wall_total_ns,
		 (unsigned long long)t->cpu_total_ns, (unsigned long long)t->cache_calls,
		 (unsigned long long)t->cache_bytes, (unsigned long long)t->stream_bytes,
		 (unsigned long long)t->retries, (unsigned long long)t->errors);
	syslog_send(sc, line);
}

/* The finished line to PERFLINK_PROFILE_OUT and to perflinkd; frees j. */
void pl__report_json_send(struct pl_json *j)
{
	const char *text = pl__json_finish(j);

	if (text && settings.out_path[0])
		append_file(text);
	if (text)
		pl__report_daemon_send(text);
	else if (!warned_out) {
		warned_out = true;
		pl__diag("out of memory formatting a report");
	}
	pl__json_free(j);
}

void pl__report_write(void)
{
	struct syslog_conn sc = { .fd = -1 };
	struct pl_json json, *j = NULL;
	struct totals t;
	char comm[64], prefix[96];
	uint64_t frames, elapsed_ns;
	unsigned i;

	pl__stats_collect(&snap);
	frames = pl__report_frames();
	elapsed_ns = pl__mono_ns() - start_mono_ns;
	report_number++;
	comm_name(comm, sizeof(comm));
	memset(&t, 0, sizeof(t));

	if (settings.syslog_path[0])
		syslog_begin(&sc);
	/* The JSON line goes to the file and to perflinkd. */
	if (pl__report_json_wanted()) {
		j = &json;
		json_begin(j, frames, elapsed_ns);
	}
	snprintf(prefix, sizeof(prefix), "report=%u pid=%d comm=%s", report_number, pid, comm);
	send_header(&sc, prefix, frames, elapsed_ns);
	for (i = 0; i < pl__stages.n_stages; i++) {
		if (snap.stage[i].calls == 0)
			continue;
		add_to_totals(&t, &pl__stages.stage[i], &snap.stage[i]);
		write_stage(i, prefix, &sc, j);
	}
	send_totals(&sc, prefix, &t);
	if (sc.fd >= 0)
		close(sc.fd);
	if (j) {
		pl__json_end_array(j);
		pl__json_begin_object(j, "totals");
		pl__json_u64(j, "calls", t.calls);
		pl__json_u64(j, "wall_total_ns", t.wall_total_ns);
		pl__json_u64(j, "cpu_total_ns", t.cpu_total_ns);
		pl__json_u64(j, "cache_calls", t.cache_calls);
		pl__json_u64(j, "cache_bytes", t.cache_bytes);
		pl__json_u64(j, "stream_bytes", t.stream_bytes);
		pl__json_u64(j, "retries", t.retries);
		pl__json_u64(j, "errors", t.errors);
		pl__json_end_object(j);
		pl__json_end_object(j);
		pl__report_json_send(j);
	}
}
