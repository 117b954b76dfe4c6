/* See device_hello.h. */
#include "device_hello.h"
#include "json_reader.h"
#include "proc_parse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void pl__device_hello_init(struct pl_device_hello *h)
{
	memset(h, 0, sizeof(*h));
	h->wire_version = h->packet_size = h->deadline_ms = h->max_host_payload = -1;
}

struct take {
	struct pl_device_hello next;
	bool is_hello; /* "type":"hello" at the top */
};

static void copy_printable(char *out, size_t len, const char *value)
{
	size_t i;

	for (i = 0; i + 1 < len && value[i]; i++)
		out[i] = value[i] >= 0x20 && value[i] < 0x7f ? value[i] : '?';
	out[i] = '\0';
}

/* A whole number in [0, INT64_MAX], or -1. */
static int64_t whole(enum pl_json_kind kind, const char *value)
{
	uint64_t v;

	if (kind != PL_JSON_NUMBER || !pl__parse_u64_all(value, &v) || v > (uint64_t)INT64_MAX)
		return -1;
	return (int64_t)v;
}

static void on_scalar(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct take *t = ctx;
	struct pl_device_hello *h = &t->next;

	if (kind == PL_JSON_STRING && strcmp(path, "type") == 0)
		t->is_hello = strcmp(value, "hello") == 0;
	else if (kind == PL_JSON_STRING && strcmp(path, "program") == 0)
		copy_printable(h->program, sizeof(h->program), value);
	else if (kind == PL_JSON_STRING && strcmp(path, "version") == 0)
		copy_printable(h->version, sizeof(h->version), value);
	else if (kind == PL_JSON_STRING && strcmp(path, "transport") == 0)
		copy_printable(h->transport, sizeof(h->transport), value);
	else if (strcmp(path, "wire_version") == 0)
		h->wire_version = whole(kind, value);
	else if (strcmp(path, "packet_size") == 0)
		h->packet_size = whole(kind, value);
	else if (strcmp(path, "deadline_ms") == 0)
		h->deadline_ms = whole(kind, value);
	else if (strcmp(path, "max_host_payload") == 0)
		h->max_host_payload = whole(kind, value);
	/* other keys: a receiver ignores what it does not know */
}

int pl__device_hello_take(struct pl_device_hello *h, const uint8_t *payload, size_t len)
{
	struct take t;

	h->hellos++;
	pl__device_hello_init(&t.next);
	t.is_hello = false;
	/* one object: its first byte '{' (a bare scalar or an array is not) */
	if (len == 0 || len > PL_DEVICE_HELLO_MAX_BYTES || payload[0] != '{' ||
	    pl__json_walk((const char *)payload, len, on_scalar, &t) < 0 || !t.is_hello ||
	    !t.next.program[0]) {
		h->malformed++;
		return -EINVAL;
	}
	t.next.have = true;
	t.next.hellos = h->hellos;
	t.next.malformed = h->malformed;
	*h = t.next;
	return 0;
}

static void number_or_null(struct pl_json *j, const char *key, int64_t v)
{
	if (v >= 0)
		pl__json_i64(j, key, v);
	else
		pl__json_null(j, key);
}

void pl__device_hello_json(const struct pl_device_hello *h, struct pl_json *j)
{
	if (!h || !h->have) {
		pl__json_null(j, "device");
		return;
	}
	pl__json_begin_object(j, "device");
	pl__json_str(j, "program", h->program);
	pl__json_str(j, "version", h->version);
	if (h->transport[0])
		pl__json_str(j, "transport", h->transport);
	else
		pl__json_null(j, "transport");
	number_or_null(j, "wire_version", h->wire_version);
	number_or_null(j, "packet_size", h->packet_size);
	number_or_null(j, "deadline_ms", h->deadline_ms);
	number_or_null(j, "max_host_payload", h->max_host_payload);
	pl__json_u64(j, "hellos", h->hellos);
	pl__json_u64(j, "hellos_malformed", h->malformed);
	pl__json_end_object(j);
}
