/* See recording.h: the directory, its files' lines, the arrays. */
#include "recording.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const file_names[PL_REC_FILE_COUNT] = {
	[PL_REC_FRAMES] = "frames.csv",
	[PL_REC_LINK_DIAG] = "telemetry/link_diag.jsonl",
	[PL_REC_PROFILE] = "telemetry/perflink-profile.jsonl",
	[PL_REC_STALL] = "telemetry/stall.jsonl",
	[PL_REC_RESOURCES] = "telemetry/resources.jsonl",
	[PL_REC_STAGE_CALLS] = "telemetry/perflink-stage-calls.jsonl",
	[PL_REC_RENDER_WINDOW] = "telemetry/render_window.jsonl",
};

const char *pl__recording_file_name(enum pl_recording_file f)
{
	return file_names[f];
}

int pl__recording_grow(void **v, size_t *cap, size_t n, size_t elem)
{
	size_t want;
	void *p;

	if (n < *cap)
		return 0;
	want = *cap ? *cap * 2 : 64;
	if (want > SIZE_MAX / elem)
		return -ENOMEM;
	p = realloc(*v, want * elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = want;
	return 0;
}

int pl__recording_each_line(struct pl_recording *r, int dir_fd, enum pl_recording_file f,
			    int (*line)(void *ctx, const char *text, size_t len), void *ctx)
{
	char *buf = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *in;
	int fd, err = 0;

	fd = openat(dir_fd, file_names[f], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	in = fdopen(fd, "r");
	if (!in) {
		err = -errno;
		close(fd);
		return err;
	}
	r->present[f] = true;
	errno = 0;
	while ((len = getline(&buf, &cap, in)) >= 0) {
		int took;

		if (len > 0 && buf[len - 1] == '\n')
			buf[--len] = '\0';
		r->lines[f]++;
		took = line(ctx, buf, (size_t)len);
		if (took < 0) {
			err = took;
			break;
		}
		if (took > 0)
			r->bad_lines[f]++;
		errno = 0;
	}
	if (!err && (ferror(in) || errno == ENOMEM))
		err = errno ? -errno : -EIO;
	free(buf);
	fclose(in);
	return err;
}

int pl__recording_read(struct pl_recording *r, const char *dir)
{
	int dir_fd, err, f, found = 0;

	memset(r, 0, sizeof(*r));
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0)
		return -errno;
	err = pl__recording_read_frames_csv(r, dir_fd);
	if (err == 0)
		found++;
	else if (err != -ENOENT)
		goto fail;
	for (f = PL_REC_LINK_DIAG; f < PL_REC_FILE_COUNT; f++) {
		if (f == PL_REC_STAGE_CALLS)
			err = pl__recording_read_stage_calls(r, dir_fd);
		else if (f == PL_REC_RENDER_WINDOW)
			err = pl__recording_read_render_windows(r, dir_fd);
		else
			err = pl__recording_read_telemetry(r, dir_fd, (enum pl_recording_file)f);
		if (err == 0)
			found++;
		else if (err != -ENOENT)
			goto fail;
	}
	close(dir_fd);
	return found ? 0 : -ENOENT;
fail:
	close(dir_fd);
	pl__recording_free(r);
	return err;
}

struct pl_recorded_loss *pl__recording_loss(struct pl_recording *r, int64_t pid,
					    const char *comm)
{
	struct pl_recorded_loss *l;
	size_t i;

	for (i = 0; i < r->n_losses; i++)
		if (r->losses[i].pid == pid)
			return &r->losses[i];
	if (pl__recording_grow((void **)&r->losses, &r->cap_losses, r->n_losses,
			       sizeof(*r->losses)) < 0)
		return NULL;
	l = &r->losses[r->n_losses++];
	memset(l, 0, sizeof(*l));
	l->pid = pid;
	pl__recording_copy_name(l->comm, comm);
	return l;
}

void pl__recording_free(struct pl_recording *r)
{
	size_t i;

	for (i = 0; i < r->n_stacks; i++)
		free(r->stacks[i].frames);
	for (i = 0; i < r->n_functions; i++) {
		free(r->functions[i].name);
		free(r->functions[i].shown);
		free(r->functions[i].module);
		free(r->functions[i].file);
	}
	for (i = 0; i < r->n_modules; i++) {
		free(r->modules[i].name);
		free(r->modules[i].path);
	}
	free(r->modules);
	free(r->windows);
	free(r->stacks);
	free(r->functions);
	free(r->frames);
	free(r->stages);
	free(r->stalls);
	free(r->procs);
	free(r->link_changes);
	free(r->calls);
	free(r->losses);
	free(r->names);
	free(r->points);
	free(r->samples);
	memset(r, 0, sizeof(*r));
}
