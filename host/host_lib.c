/* libperflink-host (include/perflink_host.h): perflink-host's session
 * (session.h: the transport, the receiver, the telemetry parser, the pings
 * and the clock offset) behind a small public API. The only code of its own
 * is the glue: the options, the application's callbacks in place of
 * perflink-host's files, errno kept at the edge. */
#include "perflink_host.h"

#include "log.h"
#include "session.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define USB_DEPTH 8
#define USB_TRANSFER_BYTES (64u * 1024)
#define CLOSE_FLUSH_NS 1000000000ull

struct plh_host {
	struct pl_host_session session;
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

static size_t on_reply(void *ctx, const struct pl_wire_header *hdr, const uint8_t *payload,
		       uint8_t *out, size_t cap)
{
	struct plh_host *h = ctx;

	if (!h->frame_fn)
		return 0;
	return h->frame_fn(h->frame_ctx, hdr->frame_id, payload, hdr->payload_len, out, cap);
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

static int open_session(struct plh_host *h, const struct plh_options *o)
{
	const struct pl_host_session_open_config cfg = {
		.tcp = o->tcp,
		.tcp_key_file = o->tcp_key_file,
		.usb = {
			.vendor_id = o->vid,
			.product_id = o->pid,
			.serial = o->serial,
			.depth = USB_DEPTH,
			.transfer_bytes = USB_TRANSFER_BYTES,
		},
	};

	return pl__host_session_open(&h->session, &cfg);
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
	static const struct pl_host_session_hooks hooks = {
		.reply = on_reply,
		.line = on_line,
	};
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
	if ((err = pl__host_session_init(&h->session, PL_REPLY_APP, &hooks, h)) < 0 ||
	    (err = open_session(h, o)) < 0)
		goto fail;
	*out = h;
	return 0;
fail:
	pl__host_session_free(&h->session);
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
	uint64_t frames = h->session.rx.frames;
	int err;

	if (timeout_ms < 0)
		return -EINVAL;
	if (h->in_run)
		return -EBUSY; /* from a callback: the receiver is in the middle of a message */
	h->in_run = true;
	h->frame_fn = fn;
	h->frame_ctx = ctx;
	err = pl__host_session_step(&h->session, timeout_ms);
	h->frame_fn = NULL;
	h->frame_ctx = NULL;
	h->in_run = false;
	if (err < 0)
		return err;
	frames = h->session.rx.frames - frames;
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
	return h->session.connected;
}

void plh_get_stats(const struct plh_host *h, struct plh_stats *st)
{
	const struct pl_host_session *s = &h->session;
	const struct pl_receiver *r = &s->rx;
	uint64_t rtt;

	memset(st, 0, sizeof(*st));
	st->frames = r->frames;
	st->frame_bytes = r->frame_bytes;
	st->replies = r->replies_sent;
	st->reply_failures = r->reply_failures;
	st->telemetry_lines = s->dt.lines;
	st->telemetry_bad_lines = s->dt.problems[PL_TM_BAD_JSON] + h->lines_lost;
	st->malformed = pl__receiver_malformed(r) + s->bad_pongs;
	st->sequence_gaps = r->sequence_gaps;
	st->lost_messages = r->lost_messages;
	{
		struct pl_host_transport_stats ts;

		pl__host_transport_get_stats(s->link, &ts);
		st->connects = ts.connects;
		st->disconnects = ts.disconnects;
	}
	st->have_clock_offset = pl__clock_offset_best(&s->clock, &st->clock_offset_ns, &rtt);
	st->clock_offset_rtt_ns = st->have_clock_offset ? rtt : 0;
}

void plh_close(struct plh_host *h)
{
	int saved_errno = errno;

	if (!h)
		return;
	h->telemetry_fn = NULL; /* frames and lines that come now are only counted */
	pl__host_transport_flush(h->session.link, CLOSE_FLUSH_NS);
	pl__host_session_free(&h->session);
	free(h->line);
	free(h);
	errno = saved_errno;
}
