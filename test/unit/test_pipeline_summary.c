/* common/pipeline_summary.c against hand-computed periods: the
 * renderer's rules for out-of-order stamps, camera-id continuity, the eof clock kept
 * apart and the p95 index, each checked on the JSON the lead's caller
 * writes. Stamps are in ms (MS) to keep the arithmetic readable. */
#include "pipeline_summary.h"
#include "tap.h"

#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#define MS 1000000ull
#define NOCAM PL_PIPELINE_NO_CAMERA

static struct pl_pipeline p;
static struct pl_json j;

#define END_MONO_NS 123456789ull

static bool had_time_and_pid = true;

/* The report of the period so far, as one line without its newline, and
 * without the period's end time and the producer's pid (docs/wire.md),
 * which must come first: had_time_and_pid says whether they always did. */
static const char *report(void)
{
	static char line[1024];
	char head[96];
	const char *s;
	size_t n;

	pl__json_reset(&j);
	pl__pipeline_report(&p, PL_PIPELINE_PERIOD_NS, END_MONO_NS, &j);
	s = pl__json_finish(&j);
	if (!s)
		abort();
	n = (size_t)snprintf(head, sizeof(head), "{\"type\":\"pipeline\",\"mono_ns\":%llu,\"pid\":%d,",
			     END_MONO_NS, (int)getpid());
	if (strncmp(s, head, n) == 0)
		snprintf(line, sizeof(line), "{\"type\":\"pipeline\",%.*s", (int)strcspn(s + n, "\n"),
			 s + n);
	else {
		had_time_and_pid = false;
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(s, "\n"), s);
	}
	return line;
}

static void add(uint64_t cap, uint64_t sub, uint64_t pub, uint32_t cam, uint64_t id, uint64_t eof)
{
	pl__pipeline_add(&p, cap * MS, sub * MS, pub * MS, cam, id, eof * MS);
}

static void test_empty(void)
{
	pl__pipeline_init(&p);
	TAP_EQ_STR(report(),
		   "{\"type\":\"pipeline\",\"period_s\":5.00,\"published_frames\":0,\"camera_id_repeats\":0,"
		   "\"camera_id_gaps\":0,\"camera_id_resets\":0,\"capture_to_submit_p95_ms\":null,"
		   "\"submit_to_publish_p95_ms\":null,\"capture_to_publish_p95_ms\":null,"
		   "\"camera_eof_to_publish_p95_ms\":null}",
		   "an empty period: zero frames, no latency");
}

static void test_order(void)
{
	pl__pipeline_init(&p);
	add(10, 13, 20, NOCAM, 0, 0);  /* kept: 3, 7, 10 */
	add(20, 10, 30, NOCAM, 0, 0);  /* captured after submitted: ignored */
	add(10, 30, 20, NOCAM, 0, 0);  /* submitted after published: ignored */
	add(40, 0, 30, NOCAM, 0, 0);   /* submitted unknown, captured after published: ignored */
	add(0, 100, 104, NOCAM, 0, 0); /* captured unknown: 4 submit->publish only */
	add(0, 0, 0, NOCAM, 0, 0);     /* all unknown: counted, no latency */
	/* p95 of 2 values is the 2nd smallest: ceil(1.9) - 1 = index 1 */
	TAP_EQ_STR(report(),
		   "{\"type\":\"pipeline\",\"period_s\":5.00,\"published_frames\":3,\"camera_id_repeats\":0,"
		   "\"camera_id_gaps\":0,\"camera_id_resets\":0,\"capture_to_submit_p95_ms\":3.00,"
		   "\"submit_to_publish_p95_ms\":7.00,\"capture_to_publish_p95_ms\":10.00,"
		   "\"camera_eof_to_publish_p95_ms\":null}",
		   "out-of-order frames ignored, unknown stamps leave out only their latencies");
}

static void test_camera_ids(void)
{
	pl__pipeline_init(&p);
	add(1, 2, 3, 1, 5, 0);
	add(1, 2, 3, 1, 6, 0);
	add(1, 2, 3, 1, 6, 0);   /* repeat */
	add(1, 2, 3, 1, 9, 0);   /* 2 gaps (7, 8) */
	add(1, 2, 3, 1, 3, 0);   /* reset */
	add(1, 2, 3, 2, 100, 0); /* other stream: no comparison */
	add(1, 2, 3, 1, 4, 0);   /* previous is stream 2: no comparison */
	add(1, 2, 3, NOCAM, 0, 0);
	add(1, 2, 3, 1, 10, 0);  /* a frame without camera broke the chain */
	add(3, 2, 1, 1, 50, 0);  /* out of order: does not touch the chain */
	add(1, 2, 3, 1, 11, 0);  /* follows 10 */
	TAP_EQ_STR(report(),
		   "{\"type\":\"pipeline\",\"period_s\":5.00,\"published_frames\":10,\"camera_id_repeats\":1,"
		   "\"camera_id_gaps\":2,\"camera_id_resets\":1,\"capture_to_submit_p95_ms\":1.00,"
		   "\"submit_to_publish_p95_ms\":1.00,\"capture_to_publish_p95_ms\":2.00,"
		   "\"camera_eof_to_publish_p95_ms\":null}",
		   "camera ids: repeats, gaps, resets only between consecutive frames of one stream");
	add(1, 2, 3, 1, 14, 0);  /* the chain carries into the next period: 2 gaps */
	TAP_EQ_STR(report(),
		   "{\"type\":\"pipeline\",\"period_s\":5.00,\"published_frames\":1,\"camera_id_repeats\":0,"
		   "\"camera_id_gaps\":2,\"camera_id_resets\":0,\"capture_to_submit_p95_ms\":1.00,"
		   "\"submit_to_publish_p95_ms\":1.00,\"capture_to_publish_p95_ms\":2.00,"
		   "\"camera_eof_to_publish_p95_ms\":null}",
		   "the counters restart each period, the id chain does not");
	/* a jump to the largest id: the gap count saturates, no wrap */
	add(1, 2, 3, 1, 0, 0);
	add(1, 2, 3, 1, UINT64_MAX, 0);
	add(1, 2, 3, 1, 0, 0);
	add(1, 2, 3, 1, UINT64_MAX, 0);
	TAP_OK(strstr(report(), "\"camera_id_gaps\":18446744073709551615,\"camera_id_resets\":2") != NULL,
	       "a hostile id jump saturates the gap count");
}

static void test_eof_clock(void)
{
	pl__pipeline_init(&p);
	add(100, 110, 130, 1, 1, 90);   /* eof age 40 */
	add(200, 210, 230, 1, 2, 0);    /* eof unknown */
	add(300, 310, 330, 1, 3, 5000); /* eof after publish (another clock): no age, frame kept */
	add(400, 410, 430, NOCAM, 0, 425); /* no camera: eof ignored */
	add(500, 510, 530, 1, 4, 518);  /* eof age 12 */
	/* eof ages {12, 40}: index 1 -> 40; capture_to_publish all 30 */
	TAP_EQ_STR(report(),
		   "{\"type\":\"pipeline\",\"period_s\":5.00,\"published_frames\":5,\"camera_id_repeats\":0,"
		   "\"camera_id_gaps\":0,\"camera_id_resets\":0,\"capture_to_submit_p95_ms\":10.00,"
		   "\"submit_to_publish_p95_ms\":20.00,\"capture_to_publish_p95_ms\":30.00,"
		   "\"camera_eof_to_publish_p95_ms\":40.00}",
		   "camera eof: its own latency, never deciding whether a frame is kept");
	/* eof before capture is fine: exposure precedes the renderer's capture */
	add(100, 110, 130, 1, 5, 60);
	TAP_OK(strstr(report(), "\"capture_to_publish_p95_ms\":30.00,\"camera_eof_to_publish_p95_ms\":70.00") != NULL,
	       "eof is compared with published only");
}

static void test_p95(void)
{
	uint64_t i, ns = 0;

	pl__pipeline_init(&p);
	/* capture_to_submit 1..20 ms, shuffled by a stride coprime with 20 */
	for (i = 0; i < 20; i++) {
		uint64_t v = (i * 7) % 20 + 1;

		add(1000, 1000 + v, 2000, NOCAM, 0, 0);
	}
	/* n = 20: ceil(95 * 20 / 100) = 19, index 18: the value 19 */
	TAP_OK(pl__pipeline_p95_ns(&p, PL_PIPELINE_CAPTURE_TO_SUBMIT, &ns) && ns == 19 * MS,
	       "p95 of 1..20 ms is 19 ms (got %llu ns)", (unsigned long long)ns);
	report();

	add(1000, 1001, 2000, NOCAM, 0, 0);
	TAP_OK(pl__pipeline_p95_ns(&p, PL_PIPELINE_CAPTURE_TO_SUBMIT, &ns) && ns == 1 * MS,
	       "p95 of one value is that value");
	report();

	/* 300 frames, 1..300 ms: the last 240 (61..300) are kept; n = 240,
	 * ceil(228) - 1 = 227: 61 + 227 = 288 ms; the frame count is all 300 */
	for (i = 1; i <= 300; i++)
		add(1000, 1000 + i, 5000, NOCAM, 0, 0);
	TAP_OK(pl__pipeline_p95_ns(&p, PL_PIPELINE_CAPTURE_TO_SUBMIT, &ns) && ns == 288 * MS,
	       "p95 over the period's last 240 frames: 288 ms (got %llu ns)", (unsigned long long)ns);
	TAP_OK(strstr(report(), "\"published_frames\":300,") != NULL,
	       "every kept frame is counted, beyond the 240 sampled");

	/* two decimals: ms rounded to 0.01, as the renderer's own summary writes */
	pl__pipeline_add(&p, 1000, 1000 + 2345678, 1000 + 2345678, NOCAM, 0, 0);
	TAP_OK(strstr(report(), "\"capture_to_submit_p95_ms\":2.35,\"submit_to_publish_p95_ms\":0.00,") != NULL,
	       "milliseconds with two decimals; a zero latency is a value, not unknown");
	TAP_OK(!pl__pipeline_p95_ns(&p, PL_PIPELINE_LATENCIES, &ns) && !pl__pipeline_p95_ns(&p, -1, &ns),
	       "an unknown latency index is refused");
}

int main(void)
{
	pl__json_init(&j);
	test_empty();
	test_order();
	test_camera_ids();
	test_eof_clock();
	test_p95();
	pl__json_free(&j);
	TAP_OK(had_time_and_pid,
	       "every line starts with the period's end (mono_ns) and the producer's pid");
	return tap_done();
}
