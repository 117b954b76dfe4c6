/* pl_frame_published (libperflink) end to end: frames annotated for a bit
 * over one 5 s period produce one "pipeline" summary in the file named by
 * PERFLINK_PIPELINE_OUT, with the counts and percentiles the stamps imply;
 * no perflinkd running is not an error. The arithmetic itself is tested in
 * test_pipeline_summary.c. */
#include "tap.h"

#include "clock.h"
#include "json_reader.h"
#include "perflink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct found {
	char type[32];
	double published, gaps, repeats, c2p;
};

static void collect(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct found *f = ctx;

	(void)kind;
	if (!strcmp(path, "type"))
		snprintf(f->type, sizeof(f->type), "%s", value);
	else if (!strcmp(path, "published_frames"))
		f->published = atof(value);
	else if (!strcmp(path, "camera_id_gaps"))
		f->gaps = atof(value);
	else if (!strcmp(path, "camera_id_repeats"))
		f->repeats = atof(value);
	else if (!strcmp(path, "capture_to_publish_p95_ms"))
		f->c2p = atof(value);
}

int main(void)
{
	char dir[] = "/tmp/pl-test-pipeline-XXXXXX", path[128], line[4096];
	uint64_t start = pl__mono_ns(), id = 100;
	unsigned frames = 0;
	struct found f = { 0 };
	FILE *in;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/pipeline.jsonl", dir);
	setenv("PERFLINK_PIPELINE_OUT", path, 1);
	setenv("PERFLINK_SOCKET", "/nonexistent/perflink", 1);
	/* 5.3 s of frames, 20 ms apart: the first period ends with one of them. */
	while (pl__mono_ns() - start < 5300000000ull) {
		uint64_t now = pl__mono_ns();

		if (frames == 50)
			id++; /* one camera frame skipped */
		pl_frame_published(now - 3000000, now - 1000000, now, 0, id++, 0);
		frames++;
		usleep(20000);
	}
	in = fopen(path, "r");
	TAP_OK(in != NULL, "the summary file was written (no perflinkd is not an error)");
	if (!in)
		return tap_done();
	TAP_OK(fgets(line, sizeof(line), in) != NULL, "one summary line");
	TAP_OK(fgets(line + 2048, 2048, in) == NULL, "only one: the second period is not over");
	fclose(in);
	TAP_OK(pl__json_walk(line, strlen(line), collect, &f) == 0 && !strcmp(f.type, "pipeline"),
	       "a JSON object of type pipeline: %s", line);
	TAP_OK(f.published > frames * 0.85 && f.published <= frames,
	       "published_frames %.0f of the %u frames annotated so far", f.published, frames);
	TAP_OK(f.gaps == 1 && f.repeats == 0, "the skipped camera frame is one gap");
	TAP_OK(f.c2p > 2.99 && f.c2p < 3.01, "capture_to_publish p95 is the 3 ms the stamps say (%.2f)",
	       f.c2p);
	unlink(path);
	rmdir(dir);
	return tap_done();
}
