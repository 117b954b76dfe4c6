/* See live_metrics.h. */
#include "live_metrics.h"
#include "atomic_file.h"
#include "log.h"
#include "metrics_prom.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pl__live_metrics_init(struct pl_live_metrics *m, const char *dir, double interval_s,
			  uint64_t now_ns)
{
	size_t len;

	memset(m, 0, sizeof(*m));
	if (!dir || interval_s <= 0)
		return 0;
	len = strlen(dir) + sizeof("/metrics.prom");
	if (!(m->path = malloc(len)))
		return -ENOMEM;
	snprintf(m->path, len, "%s/metrics.prom", dir);
	m->interval_ns = (uint64_t)(interval_s * 1e9);
	m->next_ns = now_ns + m->interval_ns;
	return 0;
}

/* The telemetry files the metrics read, by the lines' type. */
static bool file_of_type(const char *type, enum pl_recording_file *f)
{
	static const struct {
		const char *type;
		enum pl_recording_file f;
	} used[] = {
		{ "link_diag", PL_REC_LINK_DIAG },
		{ "perflink-profile", PL_REC_PROFILE },
		{ "stall", PL_REC_STALL },
		{ "resources", PL_REC_RESOURCES },
	};

	for (size_t i = 0; type && i < sizeof(used) / sizeof(used[0]); i++)
		if (strcmp(type, used[i].type) == 0) {
			*f = used[i].f;
			return true;
		}
	return false;
}

void pl__live_metrics_line(struct pl_live_metrics *m, const char *type, const char *line,
			   size_t len)
{
	enum pl_recording_file f;

	if (!m->interval_ns || m->out_of_memory || !file_of_type(type, &f))
		return;
	if (pl__recording_take_telemetry_line(&m->rec, f, line, len) == -ENOMEM) {
		m->out_of_memory = true;
		pl__log_warnx("%s: out of memory for the run's telemetry; it is written again "
			      "only at exit", m->path);
	}
}

/* The recording's frames as frames.csv would have them now. */
static int copy_frames(struct pl_recording *r, const struct pl_latency_table *t,
		       bool have_offset, int64_t offset_ns)
{
	int err;

	/* each call doubles the room while the table holds more */
	while (t->n >= r->cap_frames)
		if ((err = pl__recording_grow((void **)&r->frames, &r->cap_frames, r->cap_frames,
					      sizeof(*r->frames))) < 0)
			return err;
	for (size_t i = 0; i < t->n; i++) {
		const struct pl_frame_rec *x = &t->rec[i];
		struct pl_recorded_frame *f = &r->frames[i];
		int64_t one_way;

		*f = (struct pl_recorded_frame){
			.frame_id = x->frame_id,
			.sequence = x->sequence,
			.bytes = x->bytes,
			.device_send_ns = x->device_send_ns,
			.round_trip_ns = x->round_trip_ns,
			.have_round_trip = (x->flags & PL_FRAME_HAVE_RTT) != 0,
		};
		if (pl__frame_one_way_ns(x, have_offset, offset_ns, &one_way)) {
			f->host_recv_device_ns = x->device_send_ns + (uint64_t)one_way;
			f->have_recv = true;
		}
	}
	r->n_frames = t->n;
	r->present[PL_REC_FRAMES] = t->n > 0;
	return 0;
}

void pl__live_metrics_tick(struct pl_live_metrics *m, uint64_t now_ns,
			   const struct pl_latency_table *t, bool have_offset, int64_t offset_ns)
{
	int err;

	if (!m->interval_ns || now_ns < m->next_ns || m->out_of_memory)
		return;
	m->next_ns = now_ns + m->interval_ns;
	if ((err = copy_frames(&m->rec, t, have_offset, offset_ns)) < 0 ||
	    (err = pl__atomic_file_write(m->path, pl__metrics_prom_write, &m->rec)) < 0) {
		/* said the first time; the next interval tries again */
		if (!m->failures++)
			pl__log_warnc(err, "%s", m->path);
		return;
	}
	m->writes++;
}

void pl__live_metrics_free(struct pl_live_metrics *m)
{
	pl__recording_free(&m->rec);
	free(m->path);
	memset(m, 0, sizeof(*m));
}
