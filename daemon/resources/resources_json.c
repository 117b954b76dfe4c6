/* The resource sampler's lines: one process, the processes that left, the
 * selection. The schema is described in docs/resources.md; a field that
 * was not measured is left out, never written as 0. */
#include "resources_priv.h"

#include <string.h>

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	}
	/* overlong 3-byte forms, surrogates, and code points past U+10FFFF */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return len;
}

void pl__res_json_text(struct pl_json *j, const char *key, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t n = strlen(text), i = 0, o = 0;
	char out[256];

	/* comm is any 15 bytes a program chose (prctl PR_SET_NAME): JSON
	 * wants UTF-8, so a byte that is not part of a valid sequence becomes
	 * '?' rather than making the whole line unreadable. */
	while (i < n && o + 4 < sizeof(out)) {
		size_t len = utf8_len(s + i, n - i);

		if (len == 0) {
			out[o++] = '?';
			i++;
			continue;
		}
		memcpy(out + o, s + i, len);
		o += len;
		i += len;
	}
	out[o] = '\0';
	pl__json_str(j, key, out);
}

static void emit_vm(struct pl_json *j, const struct pl_pid_status *s)
{
	int f;

	pl__json_begin_object(j, "vm_kb");
	for (f = 0; f < PL_ST_KB_COUNT; f++) {
		if (pl__status_has(s, (enum pl_status_field)f))
			pl__json_u64(j, pl__status_keys[f], s->v[f]);
	}
	pl__json_end_object(j);
}

static void emit_thread(struct pl_json *j, const struct pl_res_thread *t)
{
	char state[2] = { t->st.state, '\0' };

	pl__json_begin_object(j, NULL);
	pl__json_i64(j, "tid", t->tid);
	pl__res_json_text(j, "comm", t->st.comm);
	pl__res_json_text(j, "state", state);
	pl__json_u64(j, "utime_ticks", t->st.utime_ticks);
	pl__json_u64(j, "stime_ticks", t->st.stime_ticks);
	if (t->st.processor >= 0)
		pl__json_i64(j, "processor", t->st.processor);
	if (t->has_sched) {
		pl__json_u64(j, "run_ns", t->sched.run_ns);
		pl__json_u64(j, "wait_ns", t->sched.wait_ns);
		pl__json_u64(j, "timeslices", t->sched.timeslices);
	}
	if (t->has_status && pl__status_has(&t->status_v, PL_ST_VCSW))
		pl__json_u64(j, "vcsw", t->status_v.v[PL_ST_VCSW]);
	if (t->has_status && pl__status_has(&t->status_v, PL_ST_NVCSW))
		pl__json_u64(j, "nvcsw", t->status_v.v[PL_ST_NVCSW]);
	pl__json_end_object(j);
}

static void emit_pss(struct pl_json *j, const struct pl_resources *r, const struct pl_res_proc *p)
{
	int f;

	if (p->pss_err < 0) {
		pl__json_str(j, "pss_error", strerror(-p->pss_err));
		return;
	}
	if (!(p->pss.have & (1ull << PL_SM_PSS))) {
		/* A kernel thread or a zombie: no memory of its own. */
		pl__json_null(j, "pss_kb");
	} else {
		pl__json_begin_object(j, "pss_kb");
		for (f = 0; f < PL_SM_COUNT; f++) {
			if (p->pss.have & (1ull << f))
				pl__json_u64(j, pl__smaps_keys[f], p->pss.kb[f]);
		}
		pl__json_end_object(j);
	}
	if (!r->smaps_rollup)
		pl__json_u64(j, "pss_mappings", p->pss.mappings);
	pl__json_double(j, "pss_ms", p->pss_ms, 3);
}

void pl__res_emit_proc(struct pl_resources *r, const struct pl_res_proc *p)
{
	struct pl_json *j = &r->json;
	char state[2] = { p->st.state, '\0' };
	size_t i;

	pl__json_begin_object(j, NULL);
	pl__json_i64(j, "pid", p->pid);
	pl__res_json_text(j, "comm", p->st.comm);
	pl__json_begin_array(j, "by");
	if (p->why & PL_RES_BY_PID)
		pl__json_str(j, NULL, "pid");
	if (p->why & PL_RES_BY_NAME)
		pl__json_str(j, NULL, "name");
	if (p->why & PL_RES_BY_TREE)
		pl__json_str(j, NULL, "tree");
	pl__json_end_array(j);
	pl__res_json_text(j, "state", state);
	pl__json_i64(j, "ppid", p->st.ppid);
	pl__json_u64(j, "starttime_ticks", p->starttime_ticks);
	pl__json_u64(j, "utime_ticks", p->st.utime_ticks);
	pl__json_u64(j, "stime_ticks", p->st.stime_ticks);
	pl__json_u64(j, "minflt", p->st.minflt);
	pl__json_u64(j, "majflt", p->st.majflt);
	pl__json_i64(j, "num_threads", p->st.num_threads);
	if (p->st.has_blkio)
		pl__json_u64(j, "blkio_ticks", p->st.blkio_ticks);
	if (p->has_status) {
		if (pl__status_has(&p->status_v, PL_ST_UID))
			pl__json_u64(j, "uid", p->status_v.v[PL_ST_UID]);
		emit_vm(j, &p->status_v);
	}
	if (r->cfg.threads) {
		if (p->threads_err < 0) {
			pl__json_str(j, "threads_error", strerror(-p->threads_err));
		} else {
			pl__json_begin_array(j, "threads");
			for (i = 0; i < p->n_threads; i++) {
				if (p->threads[i].ok)
					emit_thread(j, &p->threads[i]);
			}
			pl__json_end_array(j);
		}
		if (p->threads_gone)
			pl__json_u64(j, "threads_gone", p->threads_gone);
		if (p->threads_truncated)
			pl__json_bool(j, "threads_truncated", true);
	}
	if (p->pss_read)
		emit_pss(j, r, p);
	pl__json_end_object(j);
}

void pl__res_emit_gone(struct pl_resources *r)
{
	struct pl_json *j = &r->json;
	size_t i;

	pl__json_begin_array(j, "exited");
	for (i = 0; i < r->n_gone; i++) {
		const struct pl_res_gone *g = &r->gone[i];

		pl__json_begin_object(j, NULL);
		pl__json_i64(j, "pid", g->pid);
		pl__res_json_text(j, "comm", g->comm);
		pl__json_u64(j, "starttime_ticks", g->starttime_ticks);
		pl__json_str(j, "why", g->why);
		pl__json_end_object(j);
	}
	pl__json_end_array(j);
}

void pl__res_emit_selection(struct pl_resources *r)
{
	struct pl_json *j = &r->json;
	size_t i;

	pl__json_begin_object(j, "selection");
	pl__json_begin_array(j, "pids");
	for (i = 0; i < r->n_want_pids; i++)
		pl__json_i64(j, NULL, r->want_pids[i]);
	pl__json_end_array(j);
	pl__json_begin_array(j, "pids_missing");
	for (i = 0; i < r->n_missing_pids; i++)
		pl__json_i64(j, NULL, r->missing_pids[i]);
	pl__json_end_array(j);
	pl__json_begin_array(j, "names");
	for (i = 0; i < r->n_names; i++)
		pl__res_json_text(j, NULL, r->names[i]);
	pl__json_end_array(j);
	pl__json_begin_array(j, "roots");
	for (i = 0; i < r->n_roots; i++) {
		if (r->roots[i].include_self)
			pl__json_i64(j, NULL, r->roots[i].pid);
	}
	pl__json_end_array(j);
	pl__json_begin_array(j, "descendants_of");
	for (i = 0; i < r->n_roots; i++) {
		if (!r->roots[i].include_self)
			pl__json_i64(j, NULL, r->roots[i].pid);
	}
	pl__json_end_array(j);
	pl__json_end_object(j);
}
