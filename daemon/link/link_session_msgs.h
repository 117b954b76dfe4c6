/* HELLO and COMMAND, the two messages that run a session rather than carry
 * its data (docs/wire.md, "HELLO" and "COMMAND"). Both are JSON objects.
 *
 * The device's HELLO is the first message of every session (sequence 0):
 * what the device is and what a host may send it. The host's HELLO says
 * what the host is; the device shows it in `perflink status`. A COMMAND is
 * {"command":NAME}; the device answers each in the stream, behind what
 * waits, with a TELEMETRY line {"type":"command_result","command":NAME,
 * "ok":true|false,...}.
 *
 * The parsers take what a host sent: hostile input, bounded, never more
 * than the fields they know. */
#ifndef PL_DAEMON_LINK_SESSION_MSGS_H
#define PL_DAEMON_LINK_SESSION_MSGS_H

#include <stddef.h>
#include <stdint.h>

#include "json_writer.h"

/* What the device's HELLO says. */
struct pl_device_hello {
	const char *program, *version, *transport;
	unsigned packet_size;
	uint64_t max_host_payload, deadline_ms;
};
/* The HELLO's payload: one JSON object, no newline. */
void pl__device_hello_json(struct pl_json *j, const struct pl_device_hello *h);

/* What a host's HELLO said (strings cut to fit, without control bytes). */
struct pl_host_hello {
	char program[64], version[32];
	uint64_t wire_version;
};
/* 0, or -EINVAL when the payload is not a JSON object with a string
 * "program" (out is then zeroed). */
int pl__host_hello_parse(const void *payload, size_t len, struct pl_host_hello *out);

enum pl_host_command {
	PL_CMD_MALFORMED, /* not a JSON object with a string "command" */
	PL_CMD_UNKNOWN,   /* a command this device does not know */
	PL_CMD_PING,      /* answered in the stream: how long what waits takes */
	PL_CMD_LINK_DIAG, /* a link_diag line now */
	PL_CMD_END,       /* the host is leaving: the device ends the session */
};
/* name: the command's name as sent (cut to fit), "" when malformed. */
enum pl_host_command pl__host_command_parse(const void *payload, size_t len, char *name,
					    size_t name_cap);
/* The names, as docs/wire.md lists them. */
const char *pl__host_command_name(enum pl_host_command c);

#endif
