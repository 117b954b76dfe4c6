/* DIR/frames.csv back into frames (the format of
 * pl__latency_table_write_csv: frame_id,sequence,bytes,device_send_ns,
 * host_recv_device_ns,one_way_ms,round_trip_ms; the last three empty where
 * unknown). A line that is not seven such cells is skipped. */
#include "proc_parse.h"
#include "recording.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CELLS 7

static const char header[] =
	"frame_id,sequence,bytes,device_send_ns,host_recv_device_ns,one_way_ms,round_trip_ms";

static bool parse_ms_as_ns(const char *s, uint64_t *ns)
{
	char *end;
	double ms;

	if ((*s < '0' || *s > '9') && *s != '-')
		return false;
	errno = 0;
	ms = strtod(s, &end);
	if (errno || *end != '\0' || !isfinite(ms) || ms < 0 || ms > 1e12)
		return false;
	*ns = (uint64_t)llround(ms * 1e6);
	return true;
}

static int frame_line(void *ctx, const char *text, size_t len)
{
	struct pl_recording *r = ctx;
	struct pl_recorded_frame fr;
	char copy[256], *cell[CELLS], *p;
	unsigned n = 0;
	int err;

	if (len == sizeof(header) - 1 && memcmp(text, header, len) == 0)
		return 0;
	if (len >= sizeof(copy) || memchr(text, '\0', len))
		return 1;
	memcpy(copy, text, len + 1);
	for (p = copy; n < CELLS; n++) {
		cell[n] = p;
		p = strchr(p, ',');
		if (!p)
			break;
		*p++ = '\0';
	}
	if (n != CELLS - 1 || p)
		return 1;
	memset(&fr, 0, sizeof(fr));
	if (!pl__parse_u64_all(cell[0], &fr.frame_id) ||
	    !pl__parse_u64_all(cell[1], &fr.sequence) ||
	    !pl__parse_u64_all(cell[2], &fr.bytes) ||
	    !pl__parse_u64_all(cell[3], &fr.device_send_ns))
		return 1;
	if (cell[4][0]) {
		if (!pl__parse_u64_all(cell[4], &fr.host_recv_device_ns))
			return 1;
		fr.have_recv = true;
	}
	/* one_way_ms only restates host_recv_device_ns - device_send_ns */
	if (cell[6][0]) {
		if (!parse_ms_as_ns(cell[6], &fr.round_trip_ns))
			return 1;
		fr.have_round_trip = true;
	}
	if ((err = pl__recording_grow((void **)&r->frames, &r->cap_frames, r->n_frames,
				      sizeof(*r->frames))) < 0)
		return err;
	r->frames[r->n_frames++] = fr;
	return 0;
}

int pl__recording_read_frames_csv(struct pl_recording *r, int dir_fd)
{
	return pl__recording_each_line(r, dir_fd, PL_REC_FRAMES, frame_line, r);
}
