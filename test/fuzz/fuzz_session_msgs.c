/* libFuzzer target: the device's parsers of a host's HELLO and COMMAND
 * payloads (daemon/link/link_session_msgs.h) on arbitrary bytes, as a host
 * may send them. What they keep must be NUL-terminated, within its field,
 * and free of control bytes; a command is one of the known values. */
#include "link_session_msgs.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void clean(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	if (n >= cap)
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pl_host_hello h;
	char name[64];
	enum pl_host_command c;

	if (pl__host_hello_parse(data, size, &h) < 0 && (h.program[0] || h.version[0]))
		abort(); /* refused: nothing kept */
	clean(h.program, sizeof(h.program));
	clean(h.version, sizeof(h.version));
	c = pl__host_command_parse(data, size, name, sizeof(name));
	if (c < PL_CMD_MALFORMED || c > PL_CMD_END)
		abort();
	clean(name, sizeof(name));
	if (c == PL_CMD_MALFORMED && name[0])
		abort();
	return 0;
}
