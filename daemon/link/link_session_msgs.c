/* See link_session_msgs.h. */
#include "link_session_msgs.h"
#include "json_reader.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const command_names[] = {
	[PL_CMD_PING] = "ping",
	[PL_CMD_LINK_DIAG] = "link_diag",
	[PL_CMD_END] = "end_of_stream",
};

const char *pl__host_command_name(enum pl_host_command c)
{
	return c >= PL_CMD_PING && c <= PL_CMD_END ? command_names[c] : "";
}

void pl__device_hello_json(struct pl_json *j, const struct pl_device_hello *h)
{
	pl__json_begin_object(j, NULL);
	pl__json_str(j, "type", "hello");
	pl__json_u64(j, "wire_version", 1);
	pl__json_str(j, "program", h->program);
	pl__json_str(j, "version", h->version);
	pl__json_str(j, "transport", h->transport);
	pl__json_u64(j, "packet_size", h->packet_size);
	pl__json_u64(j, "max_host_payload", h->max_host_payload);
	pl__json_u64(j, "deadline_ms", h->deadline_ms);
	pl__json_begin_array(j, "host_may_send");
	pl__json_str(j, NULL, "HELLO");
	pl__json_str(j, NULL, "REPLY");
	pl__json_str(j, NULL, "PING");
	pl__json_str(j, NULL, "PONG");
	pl__json_str(j, NULL, "COMMAND");
	pl__json_end_array(j);
	pl__json_begin_array(j, "commands");
	for (int c = PL_CMD_PING; c <= PL_CMD_END; c++)
		pl__json_str(j, NULL, command_names[c]);
	pl__json_end_array(j);
	pl__json_end_object(j);
}

/* Copy a string value, cut to fit, control bytes replaced. */
static void keep(char *out, size_t cap, const char *value)
{
	size_t i = 0;

	for (; value[i] && i + 1 < cap; i++)
		out[i] = (unsigned char)value[i] < 0x20 ? '?' : value[i];
	out[i] = '\0';
}

struct hello_walk {
	struct pl_host_hello *out;
	bool have_program;
};

static void hello_cb(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct hello_walk *w = ctx;

	if (kind == PL_JSON_STRING && strcmp(path, "program") == 0) {
		keep(w->out->program, sizeof(w->out->program), value);
		w->have_program = true;
	} else if (kind == PL_JSON_STRING && strcmp(path, "version") == 0) {
		keep(w->out->version, sizeof(w->out->version), value);
	} else if (kind == PL_JSON_NUMBER && strcmp(path, "wire_version") == 0) {
		w->out->wire_version = strtoull(value, NULL, 10);
	}
}

/* A JSON object: its text starts with '{' (the reader also takes a bare
 * scalar, which is not a message of ours). */
static bool is_object(const char *text, size_t len)
{
	size_t i = 0;

	while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
		i++;
	return i < len && text[i] == '{';
}

int pl__host_hello_parse(const void *payload, size_t len, struct pl_host_hello *out)
{
	struct hello_walk w = { out, false };

	memset(out, 0, sizeof(*out));
	if (!is_object(payload, len) || pl__json_walk(payload, len, hello_cb, &w) < 0 ||
	    !w.have_program) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return 0;
}

struct command_walk {
	char *name;
	size_t cap;
	bool have;
};

static void command_cb(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct command_walk *w = ctx;

	if (kind == PL_JSON_STRING && strcmp(path, "command") == 0) {
		keep(w->name, w->cap, value);
		w->have = true;
	}
}

enum pl_host_command pl__host_command_parse(const void *payload, size_t len, char *name,
					    size_t name_cap)
{
	struct command_walk w = { name, name_cap, false };

	if (name_cap)
		name[0] = '\0';
	if (!is_object(payload, len) || pl__json_walk(payload, len, command_cb, &w) < 0 ||
	    !w.have) {
		if (name_cap)
			name[0] = '\0';
		return PL_CMD_MALFORMED;
	}
	for (int c = PL_CMD_PING; c <= PL_CMD_END; c++)
		if (strcmp(name, command_names[c]) == 0)
			return (enum pl_host_command)c;
	return PL_CMD_UNKNOWN;
}
