/* Replays of recorded /proc sequences (test/fixtures/replay, see its
 * README): the tracer must name the victim, the bully and the mechanism of
 * a real stall recorded on a real kernel. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "test_tracer_tree.h"
#include "log.h"
#include "tracer.h"

struct expect {
	const char *dir;
	int ticks;
	const char *mechanism;
	const char *bully; /* in the event's line */
	const char *bully_why;
};

static const struct expect cases[] = {
	/* recorded: dd writing 2 GB beside a victim doing write+fdatasync */
	{ "writeback-fsync", 56, "dirty_writeback", "\"bully\":[{\"pid\":19675,\"comm\":\"dd\"",
	  "dd is the bully, not the shell that reaped it" },
	/* derived from it: compact_stall or allocstall raised in the stall.
	 * A memory mechanism's bully is a process whose memory grew, and none
	 * of those kept did (dd writes through a 1 MB buffer). */
	{ "compaction-derived", 18, "compaction", "\"bully_rank\":\"rss_growth\",\"bully\":[]",
	  "no process grew: no bully, not the writer dd" },
	{ "reclaim-derived", 18, "direct_reclaim", "\"bully_rank\":\"rss_growth\",\"bully\":[]",
	  "no process grew: no bully, not the writer dd" },
};

/* Open the fixture dir as a replay at hz, watching "victim" on vda, its
 * events file at ev. */
static int open_replay(struct pl_tracer **t, const char *dir, double hz, const char *tmp,
		       char *ev, size_t ev_cap)
{
	struct pl_tracer_config cfg;
	char root[512], out[512];
	int rc;

	snprintf(root, sizeof(root), "%s/replay/%s", PL_FIXTURES, dir);
	snprintf(out, sizeof(out), "%s/%s.csv", tmp, dir);
	snprintf(ev, ev_cap, "%s/%s.events.jsonl", tmp, dir);
	pl__tracer_config_init(&cfg);
	cfg.hz = hz;
	free(cfg.proc_root);
	cfg.proc_root = strdup(root);
	free(cfg.out_path);
	cfg.out_path = strdup(out);
	free(cfg.disks);
	cfg.disks = strdup("vda");
	free(cfg.names);
	cfg.names = strdup("victim");
	rc = pl__tracer_open(t, &cfg);
	pl__tracer_config_free(&cfg);
	return rc;
}

static void replay(const struct expect *e, const char *tmp)
{
	struct pl_tracer *t = NULL;
	struct pl_tracer_stats st;
	char ev[512], what[128];
	const char *events, *stall;
	int rc, ticks = 0;

	rc = open_replay(&t, e->dir, 10, tmp, ev, sizeof(ev));
	snprintf(what, sizeof(what), "%s: opens as a replay", e->dir);
	TAP_OK(rc == 0 && pl__tracer_replaying(t), "%s", what);
	if (rc < 0)
		return;
	while ((rc = pl__tracer_tick(t)) == 0)
		ticks++;
	snprintf(what, sizeof(what), "%s: -ENODATA after the last snapshot", e->dir);
	TAP_OK(rc == -ENODATA, "%s", what);
	snprintf(what, sizeof(what), "%s: one tick per snapshot", e->dir);
	TAP_EQ_U64(ticks, e->ticks, what);
	pl__tracer_get_stats(t, &st);
	pl__tracer_close(t);

	events = tree_slurp(ev);
	TAP_OK(strstr(events, "\"replay\":true") != NULL, "%s: config line says replay", e->dir);
	stall = strstr(events, "\"type\":\"stall\"");
	TAP_OK(stall != NULL && st.stall_events == 1, "%s: one stall event (%llu)", e->dir,
	       (unsigned long long)st.stall_events);
	if (!stall)
		return;
	TAP_OK(strstr(stall, "\"victim\":{\"pid\":19633,\"comm\":\"victim\",\"label\":\"victim\"") !=
		       NULL,
	       "%s: the victim", e->dir);
	TAP_OK(strstr(stall, e->bully) != NULL, "%s: %s", e->dir, e->bully_why);
	snprintf(what, sizeof(what), "\"mechanism\":\"%s\"", e->mechanism);
	TAP_OK(strstr(stall, what) != NULL, "%s: mechanism %s", e->dir, e->mechanism);
	TAP_OK(strstr(stall, "\"psi\":{\"io\":{\"some_avg10\":") != NULL,
	       "%s: PSI io in the event", e->dir);
	/* The recording's victim was blocked in block I/O for well over the
	 * threshold: the kernel's own delay accounting says so. */
	TAP_OK(strstr(stall, "\"blkio_ms\":1550,\"dstate_ms\":800") != NULL,
	       "%s: blocked 1550 ms, 800 ms of D samples", e->dir);
	/* In those 800 ms the victim ran between every second pair of D
	 * samples (its schedstat moved, its delay total grew): four waits of
	 * about 100 ms each, not one of 800. */
	TAP_OK(strstr(stall, "\"dstate_ms\":800,\"dstate_longest_ms\":101,"
			     "\"dstate_sum_ms\":800,") != NULL,
	       "%s: the longest single wait 101 ms, 800 ms of D in all", e->dir);
}

/* The recordings of issue 14: several stall events each, the answers the
 * rules of stall_detect.c give on them (README.md says what was recorded
 * and why each answer is the right one). Every needle must be in the
 * event's line. */
#define NEEDLES 7
struct event_expect {
	const char *why;
	const char *needle[NEEDLES];
};

struct recording {
	const char *dir;
	double hz;
	int ticks;
	size_t nevents;
	const struct event_expect *ev;
};

static const struct event_expect storm_events[] = {
	{ "dd dirtying under the background threshold, the flusher writing 276 MB in the "
	  "window, the disk busy 42% of it: writeback, not unknown",
	  { "\"victim\":{\"pid\":10253,", "\"mechanism\":\"dirty_writeback\"",
	    "\"bully\":[{\"pid\":10296,\"comm\":\"dd\",", "\"exited\":false",
	    "\"dirty_thresh_source\":\"vmstat\",\"nr_dirty_kB_max\":2273308,",
	    "\"over_bg_thresh_ticks\":0,\"over_freerun_ticks\":0,\"written_kB\":276240,",
	    "\"blkio_ms\":140,\"dstate_ms\":200,\"dstate_longest_ms\":0,\"dstate_sum_ms\":200," } },
	{ "just after dd exited, its pages still going out: dd is the bully, exited",
	  { "\"mechanism\":\"dirty_writeback\"",
	    "\"bully\":[{\"pid\":10296,\"comm\":\"dd\",\"d_wbytes_kB\":2801744.0,"
	    "\"d_wchar_kB\":2800640.0,\"exited\":true}]",
	    "\"wait\":{\"wchan\":\"folio_wait_bit\",\"wchan_kinds\":[\"writeback\",\"block\"],\"memcg_limit_hits\":null}",
	    "\"written_kB\":203104,", "\"dstate_longest_ms\":0,\"dstate_sum_ms\":201,", NULL } },
	{ "writeback had stopped (2 MB written): no rule claims it",
	  { "\"mechanism\":\"unknown\"", "\"written_kB\":1952,", NULL } },
};

static const struct event_expect expire_events[] = {
	{ "dd dirtying, nothing written back yet: no rule claims it",
	  { "\"mechanism\":\"unknown\"", "\"written_kB\":700,", NULL } },
	{ "dd dirtying, the flusher at the background threshold (57 MB written)",
	  { "\"mechanism\":\"dirty_writeback\"", "\"bully\":[{\"pid\":18848,\"comm\":\"dd\",",
	    "\"over_bg_thresh_ticks\":0,", "\"written_kB\":57932,", NULL } },
	{ "730 MB written back in 3 s, the disk busy 16% of it, dirty under the threshold",
	  { "\"mechanism\":\"dirty_writeback\"", "\"disk_busy_ms\":472,",
	    "\"nr_dirty_kB_max\":2355228,", "\"over_bg_thresh_ticks\":0,",
	    "\"written_kB\":730280,", "\"blkio_ms\":350,", NULL } },
	{ "36 s after dd exited its pages expire and go out: dd, exited, is the bully, "
	  "not smallw, which wrote 5 MB in the last seconds",
	  { "\"mechanism\":\"dirty_writeback\"", "\"bully_window_ms\":45500,\"bully_by_dirty_pages\":true,",
	    "\"bully\":[{\"pid\":18848,\"comm\":\"dd\",\"d_wbytes_kB\":2516008.0,",
	    "\"exited\":true},{\"pid\":27038,\"comm\":\"smallw\",",
	    "\"blkio_ms\":1160,\"dstate_ms\":500,\"dstate_longest_ms\":0,\"dstate_sum_ms\":500,",
	    "\"wchan\":\"submit_bio_wait\"", NULL } },
};

#define VFORK_WAIT                                                                          \
	{ "a parent in D for its vfork child's 500 ms sleep: seen, and not an I/O stall",  \
	  { "\"victim\":{\"pid\":1516,",                                                     \
	    "\"blkio_ms\":0,\"dstate_ms\":400,\"dstate_longest_ms\":400,\"dstate_sum_ms\":400,", \
	    "\"bully\":[]", "\"mechanism\":\"not_io\",\"mechanisms\":[\"not_io\"]",             \
	    "\"wait\":{\"wchan\":\"kernel_clone\",\"wchan_kinds\":[\"other\"],\"memcg_limit_hits\":null}", NULL } }
static const struct event_expect vfork_events[] = { VFORK_WAIT, VFORK_WAIT };

static const struct event_expect compaction_events[] = {
	{ "a thread populating THP memory compacts under the mmap lock; the main thread waits "
	  "for it in D: compaction, no bully",
	  { "\"victim\":{\"pid\":369,",
	    "\"blkio_ms\":0,\"dstate_ms\":1602,\"dstate_longest_ms\":1602,\"dstate_sum_ms\":1602,",
	    "\"bully\":[]", "\"mechanism\":\"compaction\",\"mechanisms\":[\"compaction\",\"direct_reclaim\"]",
	    "\"wait\":{\"wchan\":\"vm_mmap_pgoff\",\"wchan_kinds\":[\"lock\"],\"memcg_limit_hits\":null}",
	    "\"counters\":{\"compact_stall\":20,\"allocstall\":4,", NULL } },
};

#define NOT_IO_BYSTANDER                                                                    \
	{ "a vfork parent's wait while smallw and the recorder write: no bully at all",       \
	  { "\"victim\":{\"pid\":16914,", "\"raised_by\":[\"dstate\"]",                       \
	    "\"dstate_longest_ms\":400,", "\"bully_rank\":null,\"bully\":[]",                  \
	    "\"mechanism\":\"not_io\",\"mechanisms\":[\"not_io\"]", NULL } }
static const struct event_expect vfork_bystander_events[] = { NOT_IO_BYSTANDER, NOT_IO_BYSTANDER };

static const struct event_expect disk_read_events[] = {
	{ "before the readers: the recorder's and the tracer's own output are no bully",
	  { "\"victim\":{\"pid\":21698,", "\"mechanism\":\"unknown\"", "\"bully\":[]", NULL } },
	{ "two dd reading with O_DIRECT keep the disk busy: the readers are the bully",
	  { "\"raised_by\":[\"blkio\"]", "\"mechanism\":\"disk_saturation\"",
	    "\"bully_rank\":\"disk_bytes\",\"bully\":[{\"pid\":2174",
	    "\"comm\":\"dd\",\"d_wbytes_kB\":0.0,\"d_wchar_kB\":192512.0,\"exited\":false,"
	    "\"d_read_kB\":192512.0,\"d_rss_kB\":0}]",
	    NULL } },
	{ "the same, 600 MB each in the window",
	  { "\"mechanism\":\"disk_saturation\"", "\"disk_busy_ms\":496,",
	    "\"d_read_kB\":614400.0,\"d_rss_kB\":0}]", NULL } },
};

#define CGROUP_RECLAIM(rss)                                                                  \
	{ "a memory cgroup at its limit as memhog grows: cgroup reclaim, memhog the bully",    \
	  { "\"victim\":{\"pid\":27747,", "\"mechanism\":\"cgroup_reclaim\"",                   \
	    "\"bully_rank\":\"rss_growth\",\"bully\":[{\"pid\":27885,\"comm\":\"memhog\",",     \
	    "\"d_rss_kB\":" rss "}]", "\"wchan\":\"folio_wait_bit_common\"", NULL } }
static const struct event_expect memcg_events[] = {
	{ "a memory cgroup at its limit as memhog grows: cgroup reclaim, memhog the bully",
	  { "\"mechanism\":\"cgroup_reclaim\",\"mechanisms\":[\"cgroup_reclaim\",\"page_read\"]",
	    "\"wchan_kinds\":[\"read\"],\"memcg_limit_hits\":null}", "\"pgscan_cgroup\":14757,",
	    "\"bully\":[{\"pid\":27885,\"comm\":\"memhog\",", "\"d_rss_kB\":133416}]",
	    "\"memory\":{\"some_avg10\":0.00,\"full_avg10\":0.00,\"some_ms\":115.8,", NULL } },
	CGROUP_RECLAIM("153896"),
	CGROUP_RECLAIM("194856"),
	CGROUP_RECLAIM("256296"),
};

/* The same as a 4.9 kernel shows it (derive_memcg.py): no PSI, no
 * pgscan_anon or pgscan_file; the cgroup's memory.failcnt names it. */
#define CGROUP_RECLAIM_49(hits, rss)                                                         \
	{ "the same on 4.9: the memory cgroup's limit hits name its reclaim, memhog the bully", \
	  { "\"victim\":{\"pid\":27747,",                                                        \
	    "\"mechanism\":\"cgroup_reclaim\",\"mechanisms\":[\"cgroup_reclaim\",\"page_read\"]",  \
	    "\"memcg_limit_hits\":" hits "}", "\"pgscan_cgroup\":0,",                            \
	    "\"bully_rank\":\"rss_growth\",\"bully\":[{\"pid\":27885,\"comm\":\"memhog\",",        \
	    "\"d_rss_kB\":" rss "}]", NULL } }
static const struct event_expect memcg_49_events[] = {
	CGROUP_RECLAIM_49("193", "133416"),
	CGROUP_RECLAIM_49("250", "153896"),
	CGROUP_RECLAIM_49("258", "194856"),
	CGROUP_RECLAIM_49("594", "256296"),
};

#define PAGE_READ(bully)                                                                     \
	{ "random page reads of a cold file, dd dirtying 3 GB: a read's wait, not writeback",  \
	  { "\"victim\":{\"pid\":28072,", "\"mechanism\":\"page_read\",\"mechanisms\":[\"page_read\"]", \
	    "\"wchan\":\"folio_wait_bit_common\"", "\"read\"],\"memcg_limit_hits\":null}", bully, NULL } }
static const struct event_expect page_read_events[] = {
	PAGE_READ("\"bully_rank\":\"disk_bytes\",\"bully\":[]"),
	PAGE_READ("\"bully\":[{\"pid\":28151,\"comm\":\"dd\",\"d_wbytes_kB\":102400.0,"),
	PAGE_READ("\"bully\":[{\"pid\":28151,\"comm\":\"dd\",\"d_wbytes_kB\":232448.0,"),
	PAGE_READ("\"bully\":[{\"pid\":28151,\"comm\":\"dd\",\"d_wbytes_kB\":401408.0,"),
	PAGE_READ("\"bully\":[{\"pid\":28151,\"comm\":\"dd\",\"d_wbytes_kB\":504832.0,"),
	PAGE_READ("\"bully\":[{\"pid\":28151,\"comm\":\"dd\",\"d_wbytes_kB\":655360.0,"),
	PAGE_READ("\"bully\":[{\"pid\":28151,\"comm\":\"dd\",\"d_wbytes_kB\":985088.0,"),
};

static const struct recording recordings[] = {
	{ "compaction-vm", 10, 46, 1, compaction_events },
	{ "writeback-storm", 10, 96, 3, storm_events },
	{ "writeback-expire-2hz", 2, 92, 4, expire_events },
	{ "vfork-wait", 10, 27, 2, vfork_events },
	{ "vfork-bystander", 10, 40, 2, vfork_bystander_events },
	{ "disk-read", 10, 36, 3, disk_read_events },
	{ "memcg-reclaim", 10, 39, 4, memcg_events },
	{ "memcg-reclaim-4.9", 10, 39, 4, memcg_49_events },
	{ "page-read", 10, 46, 7, page_read_events },
	/* delay accounting off, a fsync loop's short waits (worst 237 ms in
	 * all, none sampled twice) behind dd: no event */
	{ "delayacct-off", 10, 26, 0, NULL },
};

/* The n-th stall line of events (0 first), copied to buf; NULL if none. */
static const char *nth_stall(const char *events, size_t n, char *buf, size_t cap)
{
	const char *p = events, *end;

	for (size_t i = 0; (p = strstr(p, "\"type\":\"stall\"")) != NULL; i++, p++) {
		if (i < n)
			continue;
		end = strchr(p, '\n');
		snprintf(buf, cap, "%.*s", end ? (int)(end - p) : (int)strlen(p), p);
		return buf;
	}
	return NULL;
}

static void replay_recording(const struct recording *r, const char *tmp)
{
	struct pl_tracer *t = NULL;
	struct pl_tracer_stats st;
	char ev[512], line[8192];
	const char *events;
	int rc, ticks = 0;

	rc = open_replay(&t, r->dir, r->hz, tmp, ev, sizeof(ev));
	TAP_OK(rc == 0, "%s: opens as a replay", r->dir);
	if (rc < 0)
		return;
	while ((rc = pl__tracer_tick(t)) == 0)
		ticks++;
	TAP_OK(rc == -ENODATA && ticks == r->ticks, "%s: one tick per snapshot (%d)", r->dir, ticks);
	pl__tracer_get_stats(t, &st);
	pl__tracer_close(t);
	TAP_EQ_U64(st.stall_events, r->nevents, r->dir);
	events = tree_slurp(ev);
	/* the recorder and the tracer are in the recordings, writing */
	for (size_t i = 0; i < r->nevents; i++) {
		const char *e = nth_stall(events, i, line, sizeof(line));

		TAP_OK(e && !strstr(e, "\"comm\":\"perflink\""), "%s event %zu: perflink is no bully",
		       r->dir, i);
	}
	for (size_t i = 0; i < r->nevents; i++) {
		const char *e = nth_stall(events, i, line, sizeof(line));

		for (size_t k = 0; k < NEEDLES && r->ev[i].needle[k]; k++)
			TAP_OK(e && strstr(e, r->ev[i].needle[k]), "%s event %zu (%s): %s", r->dir, i,
			       r->ev[i].why, r->ev[i].needle[k]);
	}
}

int main(void)
{
	char tmp[] = "/tmp/pl-test-replay.XXXXXX";

	if (!mkdtemp(tmp))
		return 99;
	pl__log_init("test_tracer_replay", true, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		replay(&cases[i], tmp);
	for (size_t i = 0; i < sizeof(recordings) / sizeof(recordings[0]); i++)
		replay_recording(&recordings[i], tmp);
	tree_rm(tmp);
	return tap_done();
}
