/* Every hook, with and without LD_PRELOAD: hooks_probe calls each
 * interposed function on real files, pipes, memfds and (when the kernel has
 * one) a dma-buf, and prints what it got. Its output must be the same
 * without the shim, with the shim dormant, and with the profiler active
 * over a stage file that names some of those calls; the active run must
 * also have counted them.
 *
 * Environment (set by meson): PL_PRELOAD_LIB, PL_HOOKS_PROBE. */
#include "harness.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>

static char dir[256];

static int probe(struct h_run *r, const char *probe_path, const char *sub,
		 const char *const env[])
{
	char path[400];
	char *argv[] = { (char *)probe_path, path, "frames", "30", NULL };

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	if (mkdir(path, 0700) < 0)
		return -1;
	return h_run(r, argv, env);
}

/* The next line of *p, NUL-terminated in buf. */
static bool next_line(const char **p, char *buf, size_t cap)
{
	const char *end;
	size_t n;

	if (!**p)
		return false;
	end = strchr(*p, '\n');
	n = end ? (size_t)(end - *p) : strlen(*p);
	snprintf(buf, cap, "%.*s", (int)n, *p);
	*p = end ? end + 1 : *p + n;
	return true;
}

int main(void)
{
	const char *shim = getenv("PL_PRELOAD_LIB"), *probe_path = getenv("PL_HOOKS_PROBE");
	char stages[300], out[300], env_preload[600], env_stages[400], env_out[400];
	char text[1024], la[512], lb[512], lc[512];
	const char *dormant_env[] = { env_preload, NULL };
	const char *active_env[] = { env_preload, "PERFLINK_PROFILE=1",
				     "PERFLINK_PROFILE_INTERVAL=25", "PERFLINK_PROFILE_SYSLOG=off",
				     env_stages, env_out, NULL };
	struct h_run bare, dormant, active;
	const char *pa, *pb, *pc;
	const struct h_report *rep;
	struct h_reports rs;
	unsigned lines = 0;
	bool dmabuf;

	if (!shim || !probe_path || h_tempdir(dir, sizeof(dir), "hooks") < 0) {
		printf("Bail out! PL_PRELOAD_LIB and PL_HOOKS_PROBE are needed\n");
		return 1;
	}
	snprintf(stages, sizeof(stages), "%s/probe.stages", dir);
	snprintf(out, sizeof(out), "%s/probe.jsonl", dir);
	snprintf(env_preload, sizeof(env_preload), "LD_PRELOAD=%s", shim);
	snprintf(env_stages, sizeof(env_stages), "PERFLINK_STAGES=%s", stages);
	snprintf(env_out, sizeof(env_out), "PERFLINK_PROFILE_OUT=%s", out);
	/* the same request on several devices, a pattern matched at open and
	 * one matched through /proc, and one for every fd */
	snprintf(text, sizeof(text),
		 "stage probe_pipe dequeue pipe:*  0x%lx boundary\n"
		 "stage probe_null other /dev/null 0x%lx\n"
		 "stage probe_tcgets other *       0x%lx\n",
		 (unsigned long)FIONREAD, (unsigned long)FIONREAD, (unsigned long)TCGETS);
	if (h_write_file(stages, text) < 0)
		return 1;

	TAP_OK(probe(&bare, probe_path, "bare", NULL) == 0 && bare.status == 0,
	       "the probe runs without the shim (%s)", h_oneline(bare.err));
	TAP_OK(probe(&dormant, probe_path, "dormant", dormant_env) == 0 && dormant.status == 0,
	       "the probe runs with the shim dormant (%s)", h_oneline(dormant.err));
	TAP_OK(probe(&active, probe_path, "active", active_env) == 0 && active.status == 0,
	       "the probe runs with the profiler active (%s)", h_oneline(active.err));
	TAP_EQ_STR(dormant.err, "", "dormant: nothing on stderr");
	TAP_EQ_STR(active.err, "", "active: nothing on stderr");

	/* one assertion per call: each names the hook it checks */
	pa = bare.out;
	pb = dormant.out;
	pc = active.out;
	while (next_line(&pa, la, sizeof(la))) {
		bool ok_b = next_line(&pb, lb, sizeof(lb)) && strcmp(la, lb) == 0;
		bool ok_c = next_line(&pc, lc, sizeof(lc)) && strcmp(la, lc) == 0;

		lines++;
		TAP_OK(ok_b && ok_c, "same result with and without the shim: %s", la);
		if (!ok_b || !ok_c)
			printf("#   dormant: %s\n#   active:  %s\n", lb, lc);
	}
	/* musl has no __open_2 family: the probe prints five lines fewer */
#ifdef __GLIBC__
	TAP_OK(lines > 60 && !*pb && !*pc, "all three runs printed the same %u lines", lines);
#else
	TAP_OK(lines > 55 && !*pb && !*pc, "all three runs printed the same %u lines", lines);
#endif

	dmabuf = strstr(bare.out, "dmabuf: available") != NULL;
	if (!dmabuf)
		TAP_SKIP("dma-buf: neither /dev/udmabuf nor /dev/dma_heap/system on this kernel");

	/* the active run counted what the stage file names */
	h_reports_load(&rs, out);
	rep = h_last(&rs, 0);
	TAP_OK(rep != NULL, "active: a report after 25 frames");
	TAP_OK(h_stage_u64(rep, "probe_pipe", "calls") >= 25 &&
		       h_stage_u64(rep, "probe_pipe", "calls") != UINT64_MAX,
	       "active: FIONREAD on pipes (classified through /proc)");
	TAP_EQ_U64(h_stage_u64(rep, "probe_null", "calls"), 1,
		   "active: FIONREAD on /dev/null (classified at open)");
	TAP_EQ_U64(h_stage_u64(rep, "probe_null", "errors"), 1, "active: its ENOTTY");
	TAP_EQ_U64(h_stage_u64(rep, "probe_tcgets", "calls"), 2,
		   "active: TCGETS on any fd, the pipe and /dev/null");
	/* the probe's waits with its pipe in the set, after that pipe's first
	 * FIONREAD (a dequeue stage): each timed as probe_pipe.wait */
	{
		const char *line = strstr(bare.out, "waits on the device: ");
		unsigned long waits = line ? strtoul(line + 21, NULL, 10) : 0;

		TAP_OK(waits >= 8, "the probe waited on its pipe (%lu times)", waits);
		TAP_EQ_U64(h_stage_u64(rep, "probe_pipe.wait", "calls"), waits,
			   "active: every wait on the pipe timed as probe_pipe.wait");
	}
	if (dmabuf)
		TAP_EQ_U64(h_stage_u64(rep, "dmabuf_sync", "calls"), 3,
			   "active: the built-in dma-buf sync stage");
	h_reports_free(&rs);

	h_run_free(&bare);
	h_run_free(&dormant);
	h_run_free(&active);
	h_rmdir(dir);
	return tap_done();
}
