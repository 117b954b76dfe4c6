/* pl_frame_published (libperflink) end to end: frames annotated for a bit
 * over one 5 s period produce one "pipeline" summary in the file named by
 * PERFLINK_PIPELINE_OUT, with the counts and percentiles the stamps imply,
 * and the exit a second one for the rest; no perflinkd running is not an
 * error. The arithmetic itself is tested in
 * test_pipeline_summary.c. */
#include "stderr_capture.h"
#include "tap.h"

#include "clock.h"
#include "json_reader.h"
#include "perflink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct found {
	char type[32];
	double period, published, gaps, repeats, c2p;
};

static void collect(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct found *f = ctx;

	(void)kind;
	if (!strcmp(path, "type"))
		snprintf(f->type, sizeof(f->type), "%s", value);
	else if (!strcmp(path, "period_s"))
		f->period = atof(value);
	else if (!strcmp(path, "published_frames"))
		f->published = atof(value);
	else if (!strcmp(path, "camera_id_gaps"))
		f->gaps = atof(value);
	else if (!strcmp(path, "camera_id_repeats"))
		f->repeats = atof(value);
	else if (!strcmp(path, "capture_to_publish_p95_ms"))
		f->c2p = atof(value);
}

/* The producing process: 5.3 s of frames 20 ms apart, so the first
 * period ends with one of them and the second is cut short by the exit.
 * Says how many frames it annotated, then returns from main: exit runs
 * the library's destructor. */
static int annotate(int report_fd)
{
	uint64_t start = pl__mono_ns(), id = 100;
	unsigned frames = 0;
	char line[4096];
	FILE *in;
	int lines = 0;

	while (pl__mono_ns() - start < 5300000000ull) {
		uint64_t now = pl__mono_ns();

		if (frames == 50)
			id++; /* one camera frame skipped */
		pl_frame_published(now - 3000000, now - 1000000, now, 0, id++, 0);
		frames++;
		usleep(20000);
	}
	/* before the exit: only the first period's summary */
	in = fopen(getenv("PERFLINK_PIPELINE_OUT"), "r");
	while (in && fgets(line, sizeof(line), in))
		lines++;
	if (in)
		fclose(in);
	dprintf(report_fd, "%u %d\n", frames, lines);
	return 0;
}

/* A PERFLINK_PIPELINE_OUT that cannot be opened, 5,000 bytes long: said,
 * in its first 200 bytes, once per process. */
static void test_long_bad_path(void)
{
	char bad[5100], said[8192];
	int fds[2], status;
	ssize_t n = 0, r;
	pid_t pid;

	memset(bad, 'x', sizeof(bad) - 1);
	memcpy(bad, "/nonexistent/", 13);
	bad[5000] = '\0';
	if (pipe(fds) < 0)
		abort();
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 2);
		setenv("PERFLINK_PIPELINE_OUT", bad, 1);
		pl_frame_published(1000, 2000, 3000, 0, 1, 0);
		exit(0); /* the summary at exit tries the file */
	}
	close(fds[1]);
	while ((r = read(fds[0], said + n, sizeof(said) - 1 - (size_t)n)) > 0)
		n += r;
	said[n] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	TAP_OK(strstr(said, "PERFLINK_PIPELINE_OUT /nonexistent/xxx") && strstr(said, "...:"),
	       "a bad PERFLINK_PIPELINE_OUT is said, cut short");
	TAP_OK(n < 400 && count_of(said, "\n") == 1, "in one line of %zd bytes, not 5,000", n);
}

/* PERFLINK_PIPELINE_OUT a symbolic link planted in a shared directory: not
 * followed, so the file it points to stays as it was. */
static void test_planted_link(const char *dir)
{
	char victim[160], link[160], kept[32] = "";
	FILE *f;
	int status;
	pid_t pid;

	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(link, sizeof(link), "%s/planted.jsonl", dir);
	f = fopen(victim, "w");
	if (!f || fputs("precious\n", f) < 0 || fclose(f) != 0 || symlink(victim, link) < 0)
		abort();
	pid = fork();
	if (pid == 0) {
		setenv("PERFLINK_PIPELINE_OUT", link, 1);
		freopen("/dev/null", "w", stderr);
		pl_frame_published(1000, 2000, 3000, 0, 1, 0);
		exit(0);
	}
	waitpid(pid, &status, 0);
	f = fopen(victim, "r");
	if (f && !fgets(kept, sizeof(kept), f))
		kept[0] = '\0';
	if (f)
		fclose(f);
	TAP_OK(!strcmp(kept, "precious\n"), "PERFLINK_PIPELINE_OUT a symbolic link: not followed");
	unlink(link);
	unlink(victim);
}

int main(void)
{
	char dir[] = "/tmp/pl-test-pipeline-XXXXXX", path[128], line[4096], last[4096] = "";
	unsigned frames = 0;
	int lines_before_exit = -1, fds[2], status;
	struct found f = { 0 }, g = { 0 };
	FILE *in, *rep;
	pid_t pid;

	if (!mkdtemp(dir) || pipe(fds) < 0)
		return 1;
	snprintf(path, sizeof(path), "%s/pipeline.jsonl", dir);
	setenv("PERFLINK_PIPELINE_OUT", path, 1);
	setenv("PERFLINK_SOCKET", "/nonexistent/perflink", 1);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		exit(annotate(fds[1]));
	}
	close(fds[1]);
	rep = fdopen(fds[0], "r");
	if (!rep || fscanf(rep, "%u %d", &frames, &lines_before_exit) != 2)
		frames = 0;
	if (rep)
		fclose(rep);
	TAP_OK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "the producing process exited 0");
	TAP_OK(lines_before_exit == 1, "before its exit, one summary: the second period is not over "
	       "(%d)", lines_before_exit);
	in = fopen(path, "r");
	TAP_OK(in != NULL, "the summary file was written (no perflinkd is not an error)");
	if (!in)
		return tap_done();
	TAP_OK(fgets(line, sizeof(line), in) != NULL, "the first period's summary");
	TAP_OK(fgets(last, sizeof(last), in) != NULL, "the last period's, written at exit");
	TAP_OK(fgets(line + 2048, 2048, in) == NULL, "no more");
	fclose(in);
	TAP_OK(pl__json_walk(line, strlen(line), collect, &f) == 0 && !strcmp(f.type, "pipeline"),
	       "a JSON object of type pipeline: %s", line);
	TAP_OK(f.period > 4.99 && f.period < 5.1, "a 5 s period (%.2f)", f.period);
	TAP_OK(f.published > frames * 0.85 && f.published <= frames,
	       "published_frames %.0f of the %u frames annotated", f.published, frames);
	TAP_OK(f.gaps == 1 && f.repeats == 0, "the skipped camera frame is one gap");
	TAP_OK(f.c2p > 2.99 && f.c2p < 3.01, "capture_to_publish p95 is the 3 ms the stamps say (%.2f)",
	       f.c2p);
	TAP_OK(pl__json_walk(last, strlen(last), collect, &g) == 0 && !strcmp(g.type, "pipeline"),
	       "the last summary is a pipeline object: %s", last);
	TAP_OK(g.published + f.published == frames,
	       "the two periods hold every frame: %.0f + %.0f of %u", f.published, g.published, frames);
	TAP_OK(g.period > 0.2 && g.period < 0.6, "the last period is the 0.3 s before the exit (%.2f)",
	       g.period);
	TAP_OK(g.gaps == 0 && g.repeats == 0, "no gap and no repeat in the last period");
	unlink(path);
	test_planted_link(dir);
	rmdir(dir);
	test_long_bad_path();
	return tap_done();
}
