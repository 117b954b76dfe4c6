/* See recorder.h. */
#include "recorder.h"
#include "json_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* An existing directory perflinkd may write in: ours (or root's, for a
 * daemon started as root), no other user may write to it, not a link. */
static int check_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(dir, &st) < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory (a symbolic link is refused too)", dir);
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(err, errlen, "%s: belongs to uid %u, not to perflinkd's (%u)", dir,
			 (unsigned)st.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	if (st.st_mode & S_IWOTH) {
		snprintf(err, errlen, "%s: other users may write to it (mode %04o)", dir,
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

static int make_dir(const char *dir, char *err, size_t errlen)
{
	if (mkdir(dir, 0750) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	return check_dir(dir, err, errlen);
}

int pl__recorder_open(struct pl_recorder *r, const char *dir, char *err, size_t errlen)
{
	char sub[4096];
	int ret;

	memset(r, 0, sizeof(*r));
	if ((size_t)snprintf(sub, sizeof(sub), "%s/telemetry", dir) >= sizeof(sub)) {
		snprintf(err, errlen, "%s: path too long", dir);
		return -ENAMETOOLONG;
	}
	if ((ret = make_dir(dir, err, errlen)) < 0 || (ret = make_dir(sub, err, errlen)) < 0)
		return ret;
	if ((ret = pl__telemetry_files_open(&r->files, sub)) < 0) {
		snprintf(err, errlen, "%s: %s", sub, strerror(-ret));
		return ret;
	}
	r->open = true;
	return 0;
}

struct type_of {
	char type[PL_TELEMETRY_TYPE_MAX + 1];
	bool have;
};

static void on_scalar(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct type_of *t = ctx;

	if (strcmp(path, "type") == 0 && kind == PL_JSON_STRING &&
	    strlen(value) <= PL_TELEMETRY_TYPE_MAX) {
		strcpy(t->type, value);
		t->have = true;
	}
}

void pl__recorder_line(struct pl_recorder *r, const char *line, size_t len)
{
	struct type_of t = { .have = false };

	if (!r->open)
		return;
	while (len > 0 && line[len - 1] == '\n')
		len--;
	if (pl__json_walk(line, len, on_scalar, &t) < 0)
		r->bad_lines++; /* kept in other.jsonl all the same: nothing lost */
	pl__telemetry_files_write(&r->files, t.have ? t.type : NULL, line, len);
	pl__telemetry_files_flush(&r->files);
	r->lines++;
}

void pl__recorder_close(struct pl_recorder *r)
{
	if (!r->open)
		return;
	pl__telemetry_files_close(&r->files);
	r->open = false;
}
