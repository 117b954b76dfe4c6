/* The device's telemetry on the host: one file per type, hostile type
 * names kept out of file names, resources together, several lines per
 * payload, and malformed lines counted and skipped. */
#include "device_telemetry.h"
#include "latency_table.h"
#include "tap.h"
#include "telemetry_files.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[64];

/* The lines of dir/name, or "(missing)". */
static const char *file_text(const char *name)
{
	static char text[8192];
	char path[256];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return "(missing)";
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

static int count_files(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void feed(struct pl_device_telemetry *dt, const char *s)
{
	pl__device_telemetry_feed(dt, s, strlen(s));
}

/* Frame ids past 2^53 (a producer's number in the top 16 bits) come as
 * strings and are matched exactly; an older device's numbers still work. */
static void test_string_ids(void)
{
	const uint64_t big = UINT64_C(0xffff000000000007), near = big + 2;
	struct pl_device_telemetry dt;
	struct pl_latency_table t;

	pl__latency_table_init(&t, 100);
	pl__latency_table_add(&t, big, 0, 10, 1000, 0, false, 0);
	pl__latency_table_add(&t, near, 1, 10, 1000, 0, false, 0);
	pl__latency_table_add(&t, 5, 2, 10, 1000, 0, false, 0);
	pl__device_telemetry_init(&dt, &t, NULL);
	feed(&dt, "{\"type\":\"frame_latency\",\"frames\":[[\"18446462598732840967\",1000,4000],"
		  "[5,2000,2600]],\"dropped\":0}\n");
	TAP_OK(t.n == 3 && t.rec[0].round_trip_ns == 3000 && (t.rec[0].flags & PL_FRAME_HAVE_RTT) &&
		       !(t.rec[1].flags & PL_FRAME_HAVE_RTT),
	       "a string id past 2^53 finds its own frame, not its neighbour");
	TAP_OK(t.rec[2].round_trip_ns == 600 && dt.problems[PL_TM_BAD_LATENCY] == 0,
	       "and a number id, as older devices send, still does");
	feed(&dt, "{\"type\":\"frame_latency\",\"frames\":[[\"7x\",1,2],[5,\"1\",2]]}\n");
	TAP_EQ_U64(dt.problems[PL_TM_BAD_LATENCY], 1, "a bad id string, or a time as a string: bad");
	pl__device_telemetry_free(&dt);
	pl__latency_table_free(&t);
}

int main(void)
{
	struct pl_telemetry_files tf;
	struct pl_device_telemetry dt;
	struct pl_latency_table t;
	char line[128], path[512];
	int i;

	TAP_EQ_STR(pl__telemetry_file_for("link_diag"), "link_diag", "a plain type names its file");
	TAP_EQ_STR(pl__telemetry_file_for("perflink-profile"), "perflink-profile", "dashes allowed");
	TAP_EQ_STR(pl__telemetry_file_for("header"), "resources", "header goes to resources");
	TAP_EQ_STR(pl__telemetry_file_for("sample"), "resources", "sample goes to resources");
	TAP_EQ_STR(pl__telemetry_file_for(NULL), "other", "no type: other");
	{
		static const char *const hostile[] = {
			"", ".", "..", "../../etc/passwd", "a/b", "Stall", "x y", "a.jsonl",
			"0123456789012345678901234567890123456789x", "\xc3\xa9t\xc3\xa9", "-\n",
		};

		for (i = 0; i < (int)(sizeof(hostile) / sizeof(hostile[0])); i++)
			TAP_EQ_STR(pl__telemetry_file_for(hostile[i]), "other", "hostile name -> other");
	}
	TAP_EQ_STR(pl__telemetry_file_for("0123456789012345678901234567890123456789"),
		   "0123456789012345678901234567890123456789", "40 characters are fine");

	snprintf(dir, sizeof(dir), "/tmp/test_host_telemetry.XXXXXX");
	if (!mkdtemp(dir)) {
		TAP_OK(0, "mkdtemp: %s", strerror(errno));
		return tap_done();
	}
	/* a symlink planted where a file will go is not followed */
	snprintf(path, sizeof(path), "%s/stall.jsonl", dir);
	TAP_OK(symlink("/tmp/test_host_telemetry_victim", path) == 0, "symlink planted");

	TAP_OK(pl__telemetry_files_open(&tf, dir) == 0, "files open");
	pl__latency_table_init(&t, 1000);
	pl__latency_table_add(&t, 7, 0, 10, 1000, 0, false, 0);
	pl__latency_table_add(&t, 8, 1, 10, 2000, 0, false, 0);
	pl__device_telemetry_init(&dt, &t, &tf);

	/* several lines in one payload, the last without its newline */
	feed(&dt, "{\"type\":\"link_diag\",\"totals\":{\"frames_held\":3}}\n"
		  "{\"type\":\"header\",\"pid\":1}\n{\"type\":\"sample\",\"pid\":1}");
	feed(&dt, "{\"type\":\"../../x\",\"n\":1}\n\n   \n{\"event\":\"stream_end\",\"frames\":2}\n");
	feed(&dt, "{\"type\":\"stall\",\"victim\":\"a\"}\n");
	feed(&dt, "{\"type\":\"link_diag\",\"totals\":{\"frames_held\":5}} trailing\n");
	feed(&dt, "{\"type\":7}\n{\"type\":\"frame_latency\",\"frames\":[[7,1000,4000],[8,2000,2500]],"
		  "\"dropped\":2}\n");
	feed(&dt, "{\"type\":\"frame_latency\",\"frames\":[[9,1,2],[7,-1,3],[8,5],[8,1,2,3],7]}\n");
	feed(&dt, "{\"type\":\"frame_latency\",\"frames\":[[8,9,1]]}\n{\"type\"");
	pl__telemetry_files_flush(&tf);

	TAP_EQ_STR(file_text("link_diag.jsonl"), "{\"type\":\"link_diag\",\"totals\":{\"frames_held\":3}}\n",
		   "link_diag.jsonl holds the valid line only");
	TAP_EQ_STR(file_text("resources.jsonl"),
		   "{\"type\":\"header\",\"pid\":1}\n{\"type\":\"sample\",\"pid\":1}\n",
		   "resources.jsonl: header and sample, newline added");
	TAP_EQ_STR(file_text("other.jsonl"),
		   "{\"type\":\"../../x\",\"n\":1}\n{\"event\":\"stream_end\",\"frames\":2}\n{\"type\":7}\n",
		   "other.jsonl: hostile type, no type, non-string type");
	TAP_EQ_STR(file_text("frame_latency.jsonl"), "(missing)", "frame_latency is not written");
	TAP_EQ_STR(file_text("stall.jsonl"), "(missing)", "the planted symlink was not followed");
	TAP_OK(access("/tmp/test_host_telemetry_victim", F_OK) != 0, "nothing created through it");
	TAP_OK(tf.write_errors >= 1, "and the refusal counted");

	TAP_EQ_U64(dt.problems[PL_TM_BAD_JSON], 2, "two lines that are not JSON");
	TAP_EQ_U64(dt.problems[PL_TM_BAD_TYPE], 2, "two bad type names");
	TAP_EQ_U64(dt.frames_held, 3, "frames_held from the latest valid link_diag");
	TAP_OK(t.rec[0].flags & PL_FRAME_HAVE_RTT && t.rec[0].round_trip_ns == 3000,
	       "frame 7's round trip");
	TAP_OK(t.rec[1].flags & PL_FRAME_HAVE_RTT && t.rec[1].round_trip_ns == 500,
	       "frame 8's round trip");
	TAP_EQ_U64(dt.latency_device_dropped, 2, "the device's dropped count");
	TAP_EQ_U64(dt.problems[PL_TM_BAD_LATENCY], 1, "the line with bad entries counted");
	TAP_EQ_U64(dt.problems[PL_TM_LATENCY_UNKNOWN_FRAME], 1, "a frame the host never had");
	TAP_EQ_U64(dt.problems[PL_TM_LATENCY_REPLY_BEFORE_SEND], 1, "a reply before its send");
	TAP_OK(t.rec[1].round_trip_ns == 500, "bad entries changed nothing");

	/* more types than files: the rest go to other.jsonl */
	for (i = 0; i < PL_TELEMETRY_FILES_MAX + 5; i++) {
		snprintf(line, sizeof(line), "{\"type\":\"t%d\"}\n", i);
		feed(&dt, line);
	}
	pl__telemetry_files_flush(&tf);
	TAP_OK(count_files() <= PL_TELEMETRY_FILES_MAX + 2, "files bounded (%d)", count_files());
	TAP_OK(strstr(file_text("other.jsonl"), "{\"type\":\"t36\"}") != NULL,
	       "a type beyond the limit lands in other.jsonl");

	pl__device_telemetry_free(&dt);
	pl__telemetry_files_close(&tf);
	pl__latency_table_free(&t);
	{
		DIR *d = opendir(dir);
		struct dirent *e;

		while (d && (e = readdir(d)))
			if (e->d_name[0] != '.') {
				snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
				unlink(path);
			}
		if (d)
			closedir(d);
		rmdir(dir);
	}
	test_string_ids();
	return tap_done();
}
