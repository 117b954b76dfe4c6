/* Replays of recorded /proc sequences (test/fixtures/replay, see its
 * README): the tracer must name the victim, the bully and the mechanism of
 * a real stall recorded on a real kernel. */
#include <errno.h>
#include <string.h>

#include "tap.h"
#include "test_tracer_tree.h"
#include "log.h"
#include "tracer.h"

struct expect {
	const char *dir;
	int ticks;
	const char *mechanism;
};

static const struct expect cases[] = {
	/* recorded: dd writing 2 GB beside a victim doing write+fdatasync */
	{ "writeback-fsync", 56, "dirty_writeback" },
	/* derived from it: compact_stall or allocstall raised in the stall */
	{ "compaction-derived", 18, "compaction" },
	{ "reclaim-derived", 18, "direct_reclaim" },
};

static void replay(const struct expect *e, const char *tmp)
{
	struct pl_tracer_config cfg;
	struct pl_tracer *t = NULL;
	struct pl_tracer_stats st;
	char root[512], out[512], ev[512], what[128];
	const char *events, *stall;
	int rc, ticks = 0;

	snprintf(root, sizeof(root), "%s/replay/%s", PL_FIXTURES, e->dir);
	snprintf(out, sizeof(out), "%s/%s.csv", tmp, e->dir);
	snprintf(ev, sizeof(ev), "%s/%s.events.jsonl", tmp, e->dir);
	pl__tracer_config_init(&cfg);
	free(cfg.proc_root);
	cfg.proc_root = strdup(root);
	free(cfg.out_path);
	cfg.out_path = strdup(out);
	free(cfg.disks);
	cfg.disks = strdup("vda");
	free(cfg.names);
	cfg.names = strdup("victim");
	rc = pl__tracer_open(&t, &cfg);
	pl__tracer_config_free(&cfg);
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
	TAP_OK(strstr(stall, "\"bully\":[{\"pid\":19675,\"comm\":\"dd\"") != NULL,
	       "%s: dd is the bully, not the shell that reaped it", e->dir);
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

int main(void)
{
	char tmp[] = "/tmp/pl-test-replay.XXXXXX";

	if (!mkdtemp(tmp))
		return 99;
	pl__log_init("test_tracer_replay", true, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		replay(&cases[i], tmp);
	tree_rm(tmp);
	return tap_done();
}
