/* libperflink-host (include/perflink_host.h): the receiver, the transports
 * and the telemetry parser of perflink-host behind a small public API. The
 * only code of its own is the glue: which transport, the pings, and the
 * application's callbacks in place of perflink-host's files. */
#include "perflink_host.h"

#include "clock.h"
#include "clock_offset.h"
#include "device_telemetry.h"
#include "log.h"
#include "receiver.h"
#include "transport.h"
#include "usb_identity.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PING_INTERVAL_NS 1000000000ull
#define TCP_RETRY_MS 500
/* what perflink-host allows: a device that stops reading costs at most
 * this much memory before replies are dropped */
#define TCP_OUT_LIMIT_BYTES (32u << 20)
#define USB_DEPTH 8
#define USB_TRANSFER_BYTES (64u * 1024)
#define CLOSE_FLUSH_NS 1000000000ull

struct plh_host {
	struct pl_host_transport *link; /* USB or TCP (transport.h) */
	struct pl_receiver rx;
	struct pl_device_telemetry dt;
	struct pl_clock_offset clock;
	bool connected;
	uint64_t last_ping_ns;
	uint64_t bad_pongs;
	/* the callbacks of the plh_run in progress */
	bool in_run;
	plh_frame_fn frame_fn;
	void *frame_ctx;
	plh_telemetry_fn telemetry_fn;
	void *telemetry_ctx;
	/* a telemetry line copied to end it with a NUL */
	char *line;
	size_t line_cap;
	uint64_t lines_lost; /* no memory for the copy */
};

static int link_send(void *ctx, const void *msg, size_t len)
{
	struct plh_host *h = ctx;

	return pl__host_transport_send(h->link, msg, len);
}

static int link_poll(struct plh_host *h, int timeout_ms)
{
	return pl__host_transport_poll(h->link, timeout_ms);
}

static void on_connected(void *ctx, unsigned packet_size)
{
	struct plh_host *h = ctx;

	pl__receiver_reset(&h->rx, packet_size);
	h->connected = true;
	h->last_ping_ns = 0; /* a first offset sample at once */
}

static void on_disconnected(void *ctx)
{
	struct plh_host *h = ctx;

	h->connected = false;
}

static void on_data(void *ctx, const uint8_t *data, size_t len)
{
	struct plh_host *h = ctx;

	pl__receiver_feed(&h->rx, data, len);
}

static size_t on_reply(void *ctx, const struct pl_wire_header *hdr, const uint8_t *payload,
		       uint8_t *out, size_t cap)
{
	struct plh_host *h = ctx;

	if (!h->frame_fn)
		return 0;
	return h->frame_fn(h->frame_ctx, hdr->frame_id, payload, hdr->payload_len, out, cap);
}

static void on_pong(void *ctx, const struct pl_wire_header *hdr, const uint8_t *payload,
		    uint64_t now_ns)
{
	struct plh_host *h = ctx;

	if (pl__clock_offset_add_pong(&h->clock, hdr, payload, now_ns) < 0)
		h->bad_pongs++;
}

static void on_telemetry(void *ctx, const uint8_t *payload, size_t len)
{
	struct plh_host *h = ctx;

	pl__device_telemetry_feed(&h->dt, (const char *)payload, len);
}

static void on_line(void *ctx, const char *type, const char *line, size_t len)
{
	struct plh_host *h = ctx;

	if (!h->telemetry_fn)
		return;
	if (len + 1 > h->line_cap) {
		size_t cap = h->line_cap ? h->line_cap : 4096;
		char *p;

		while (cap < len + 1)
			cap *= 2;
		p = realloc(h->line, cap);
		if (!p) {
			h->lines_lost++;
			return;
		}
		h->line = p;
		h->line_cap = cap;
	}
	memcpy(h->line, line, len);
	h->line[len] = '\0';
	/* a NUL inside valid JSON only comes escaped, so strlen(line) == len */
	h->telemetry_fn(h->telemetry_ctx, type, h->line, len);
}

static const struct pl_receiver_hooks hooks = {
	.pong = on_pong,
	.telemetry = on_telemetry,
	.reply = on_reply,
};

static int open_transport(struct plh_host *h, const struct plh_options *o)
{
	static const struct pl_host_transport_handlers th = {
		.connected = on_connected,
		.disconnected = on_disconnected,
		.data = on_data,
	};
	struct pl_host_transport_config cfg = {
		.tcp = o->tcp,
		.usb = {
			.vendor_id = o->vid ? o->vid : PL_USB_VENDOR_ID,
			.product_id = o->pid ? o->pid : PL_USB_PRODUCT_ID,
			.serial = o->serial,
			.depth = USB_DEPTH,
			.transfer_bytes = USB_TRANSFER_BYTES,
		},
		.tcp_retry_ms = TCP_RETRY_MS,
		.tcp_out_limit_bytes = TCP_OUT_LIMIT_BYTES,
	};

	return pl__host_transport_open(&h->link, &cfg, &th, h);
}

/* The public structs keep their size from release to release (what is
 * added takes a reserved slot): the layouts as first released. */
_Static_assert(sizeof(struct plh_options) ==
		       sizeof(struct {
			       const char *a;
			       uint16_t b, c;
			       const char *d;
			       uint64_t reserved[8];
		       }),
	       "plh_options changed size: take a reserved slot instead");
_Static_assert(sizeof(struct plh_stats) ==
		       sizeof(struct {
			       uint64_t a[11];
			       int b;
			       int64_t c;
			       uint64_t d;
			       uint64_t reserved[8];
		       }),
	       "plh_stats changed size: take a reserved slot instead");

static int open_host(struct plh_host **out, const struct plh_options *o)
{
	static const struct plh_options unset;
	struct plh_host *h;
	int err;

	if (!out || !o)
		return -EINVAL;
	/* the library's own copy of the logger: its lines name it */
	pl__log_init("libperflink-host", true, 0);
	if (memcmp(o->reserved, unset.reserved, sizeof(o->reserved)) != 0) {
		pl__log_warnx("plh_open: options this libperflink-host does not know (reserved "
			      "is not zero: built against a newer perflink_host.h?)");
		return -EINVAL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	if ((err = pl__receiver_init(&h->rx, PL_REPLY_APP, PL_WIRE_MAX_PAYLOAD, link_send, h)) < 0)
		goto fail;
	h->rx.hooks = &hooks;
	h->rx.hooks_ctx = h;
	pl__device_telemetry_init(&h->dt, NULL, NULL);
	h->dt.line_hook = on_line;
	h->dt.line_ctx = h;
	pl__clock_offset_init(&h->clock);
	if ((err = open_transport(h, o)) < 0)
		goto fail;
	*out = h;
	return 0;
fail:
	pl__receiver_free(&h->rx);
	free(h);
	return err;
}

/* The public functions keep errno as it was: the socket and libusb calls
 * inside set it on the way (EAGAIN from every read that finds nothing). */
int plh_open(struct plh_host **out, const struct plh_options *o)
{
	int saved_errno = errno, err = open_host(out, o);

	errno = saved_errno;
	return err;
}

void plh_set_telemetry(struct plh_host *h, plh_telemetry_fn fn, void *ctx)
{
	h->telemetry_fn = fn;
	h->telemetry_ctx = ctx;
}

static int run(struct plh_host *h, plh_frame_fn fn, void *ctx, int timeout_ms)
{
	uint64_t frames = h->rx.frames, now;
	int err;

	if (timeout_ms < 0)
		return -EINVAL;
	if (h->in_run)
		return -EBUSY; /* from a callback: the receiver is in the middle of a message */
	h->in_run = true;
	h->frame_fn = fn;
	h->frame_ctx = ctx;
	err = link_poll(h, timeout_ms);
	h->frame_fn = NULL;
	h->frame_ctx = NULL;
	h->in_run = false;
	if (err < 0)
		return pl__host_transport_is_tcp(h->link) ? err : -EIO; /* libusb's are not errnos */
	now = pl__mono_ns();
	if (h->connected && now - h->last_ping_ns >= PING_INTERVAL_NS) {
		pl__receiver_send_ping(&h->rx);
		h->last_ping_ns = now;
	}
	frames = h->rx.frames - frames;
	return frames > INT32_MAX ? INT32_MAX : (int)frames;
}

int plh_run(struct plh_host *h, plh_frame_fn fn, void *ctx, int timeout_ms)
{
	int saved_errno = errno, r = run(h, fn, ctx, timeout_ms);

	errno = saved_errno;
	return r;
}

int plh_connected(const struct plh_host *h)
{
	return h->connected;
}

void plh_get_stats(const struct plh_host *h, struct plh_stats *st)
{
	const struct pl_receiver *r = &h->rx;
	uint64_t rtt;

	memset(st, 0, sizeof(*st));
	st->frames = r->frames;
	st->frame_bytes = r->frame_bytes;
	st->replies = r->replies_sent;
	st->reply_failures = r->reply_failures;
	st->telemetry_lines = h->dt.lines;
	st->telemetry_bad_lines = h->dt.problems[PL_TM_BAD_JSON] + h->lines_lost;
	st->malformed = pl__receiver_malformed(r) + h->bad_pongs;
	st->sequence_gaps = r->sequence_gaps;
	st->lost_messages = r->lost_messages;
	{
		struct pl_host_transport_stats ts;

		pl__host_transport_get_stats(h->link, &ts);
		st->connects = ts.connects;
		st->disconnects = ts.disconnects;
	}
	st->have_clock_offset = pl__clock_offset_best(&h->clock, &st->clock_offset_ns, &rtt);
	st->clock_offset_rtt_ns = st->have_clock_offset ? rtt : 0;
}

void plh_close(struct plh_host *h)
{
	int saved_errno = errno;

	if (!h)
		return;
	h->telemetry_fn = NULL; /* frames and lines that come now are only counted */
	pl__host_transport_flush(h->link, CLOSE_FLUSH_NS);
	pl__host_transport_close(h->link);
	pl__device_telemetry_free(&h->dt);
	pl__receiver_free(&h->rx);
	free(h->line);
	free(h);
	errno = saved_errno;
}
