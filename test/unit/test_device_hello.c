/* The device's HELLO as perflink-host keeps it for summary.json
 * (host/output/device_hello.c): the known keys of a well-formed one, what a
 * hostile one can and cannot change, and the "device" object written. */
#include "device_hello.h"
#include "json_writer.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

static int take(struct pl_device_hello *h, const char *text)
{
	return pl__device_hello_take(h, (const uint8_t *)text, strlen(text));
}

/* The object as text, without pl__json_finish's newline (for TAP lines). */
static const char *json_of(const struct pl_device_hello *h, struct pl_json *j)
{
	static char text[1024];
	const char *out;

	pl__json_init(j);
	pl__json_begin_object(j, NULL);
	pl__device_hello_json(h, j);
	pl__json_end_object(j);
	if (!(out = pl__json_finish(j)))
		return NULL;
	snprintf(text, sizeof(text), "%.*s", (int)strcspn(out, "\n"), out);
	return text;
}

int main(void)
{
	struct pl_device_hello h;
	struct pl_json j;
	char big[300];
	const char *out;

	pl__device_hello_init(&h);
	out = json_of(&h, &j);
	TAP_OK(out && strstr(out, "\"device\":null"), "no HELLO: device is null (%s)", out);
	pl__json_free(&j);

	TAP_OK(take(&h, "{\"type\":\"hello\",\"wire_version\":1,\"program\":\"perflinkd\","
			"\"version\":\"0.1.0\",\"transport\":\"usb\",\"packet_size\":512,"
			"\"max_host_payload\":4194304,\"deadline_ms\":2000,"
			"\"host_may_send\":[\"HELLO\"],\"commands\":[\"ping\"],\"future\":{\"x\":1}}") == 0,
	       "the HELLO of docs/wire.md, with keys it does not know, is taken");
	TAP_OK(h.have && !strcmp(h.program, "perflinkd") && !strcmp(h.version, "0.1.0") &&
		       !strcmp(h.transport, "usb") && h.wire_version == 1 && h.packet_size == 512 &&
		       h.deadline_ms == 2000 && h.max_host_payload == 4194304,
	       "every known key kept");
	out = json_of(&h, &j);
	TAP_OK(out && strstr(out, "\"device\":{\"program\":\"perflinkd\",\"version\":\"0.1.0\","
				  "\"transport\":\"usb\",\"wire_version\":1,\"packet_size\":512,"
				  "\"deadline_ms\":2000,\"max_host_payload\":4194304,\"hellos\":1,"
				  "\"hellos_malformed\":0}"),
	       "written as summary.json's device (%s)", out);
	pl__json_free(&j);

	TAP_OK(take(&h, "not json") < 0 && take(&h, "[\"hello\"]") < 0 &&
		       take(&h, "{\"type\":\"telemetry\",\"program\":\"x\"}") < 0 &&
		       take(&h, "{\"type\":\"hello\"}") < 0 &&
		       take(&h, "{\"type\":\"hello\",\"program\":\"evil\"") < 0 &&
		       take(&h, "\"hello\"") < 0,
	       "not an object, not a hello, no program, truncated: malformed");
	TAP_OK(h.hellos == 7 && h.malformed == 6 && !strcmp(h.program, "perflinkd"),
	       "each counted, the last good one kept (hellos %llu, malformed %llu)",
	       (unsigned long long)h.hellos, (unsigned long long)h.malformed);

	memset(big, 'A', sizeof(big));
	memcpy(big, "{\"type\":\"hello\",\"program\":\"", 27);
	strcpy(big + 200, "\",\"version\":\"1\\u001b[31m\\n\"}");
	TAP_OK(take(&h, big) == 0 && strlen(h.program) == sizeof(h.program) - 1 &&
		       !strcmp(h.version, "1?[31m?"),
	       "a long program is cut to its field, control characters become '?' (%s)",
	       h.version);
	TAP_OK(take(&h, "{\"type\":\"hello\",\"program\":\"p\",\"wire_version\":-1,"
			"\"packet_size\":1.5,\"deadline_ms\":\"2000\","
			"\"max_host_payload\":99999999999999999999}") == 0 &&
		       h.wire_version == -1 && h.packet_size == -1 && h.deadline_ms == -1 &&
		       h.max_host_payload == -1 && !h.transport[0],
	       "negative, fractional, quoted and too large numbers are not kept");
	out = json_of(&h, &j);
	TAP_OK(out && strstr(out, "\"transport\":null,\"wire_version\":null,\"packet_size\":null"),
	       "and are written as null (%s)", out);
	pl__json_free(&j);
	return tap_done();
}
