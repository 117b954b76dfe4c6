/* perflinkd built without native AIO (no libaio and no io_setup system
 * call): the daemon runs without a link. Starting it says why and fails;
 * everything else is a no-op, so the rest of perflinkd needs no #if. The
 * build chooses this file instead of daemon_link.c. */
#include "daemon_link.h"
#include "log.h"

#include <errno.h>

int pl__daemon_link_start(struct pl_daemon_link **out, struct pl_loop *loop,
			  const struct pl_link_settings *s, pl__daemon_link_reply_fn on_reply,
			  pl__daemon_link_room_fn on_room, void *ctx)
{
	(void)out;
	(void)loop;
	(void)s;
	(void)on_reply;
	(void)on_room;
	(void)ctx;
	pl__log_warnx("link: this perflinkd was built without libaio: no link");
	return -ENOTSUP;
}

void pl__daemon_link_on_lost(struct pl_daemon_link *dl, pl__daemon_link_lost_fn on_lost)
{
	(void)dl;
	(void)on_lost;
}

void pl__daemon_link_telemetry(struct pl_daemon_link *dl, const char *json_line)
{
	(void)dl;
	(void)json_line;
}

bool pl__daemon_link_frame_fits(const struct pl_daemon_link *dl, size_t len)
{
	(void)dl;
	(void)len;
	return false;
}

int pl__daemon_link_frame(struct pl_daemon_link *dl, uint64_t frame_id, const void *data,
			  size_t len, const uint64_t *payload_xxh3)
{
	(void)dl;
	(void)frame_id;
	(void)data;
	(void)len;
	(void)payload_xxh3;
	return -ENOTSUP;
}

uint64_t pl__daemon_link_replies_discarded(const struct pl_daemon_link *dl)
{
	(void)dl;
	return 0;
}

void pl__daemon_link_status(const struct pl_daemon_link *dl, struct pl_json *j)
{
	(void)dl;
	(void)j;
}

void pl__daemon_link_stop(struct pl_daemon_link *dl)
{
	(void)dl;
}

void pl__daemon_link_remove_gadget(const struct pl_link_settings *s)
{
	(void)s; /* no link, so no gadget was made */
}
