/* See telemetry_files.h. */
#include "telemetry_files.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static bool safe_name(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		char c = s[i];

		if (i >= PL_TELEMETRY_TYPE_MAX)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return i > 0;
}

const char *pl__telemetry_file_for(const char *type)
{
	if (!type || !safe_name(type))
		return "other";
	if (strcmp(type, "header") == 0 || strcmp(type, "sample") == 0)
		return "resources";
	return type;
}

int pl__telemetry_files_open(struct pl_telemetry_files *tf, const char *dir)
{
	memset(tf, 0, sizeof(*tf));
	do
		tf->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (tf->dir_fd < 0 && errno == EINTR);
	return tf->dir_fd < 0 ? -errno : 0;
}

static FILE *file_for(struct pl_telemetry_files *tf, const char *name)
{
	char path[PL_TELEMETRY_TYPE_MAX + 8];
	size_t i;
	int fd;
	FILE *f;

	for (i = 0; i < tf->n; i++)
		if (strcmp(tf->files[i].name, name) == 0)
			return tf->files[i].f;
	/* the last slot is kept for other.jsonl */
	if (tf->n == PL_TELEMETRY_FILES_MAX && strcmp(name, "other") != 0)
		return file_for(tf, "other");
	snprintf(path, sizeof(path), "%s.jsonl", name);
	do
		fd = openat(tf->dir_fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
			    0644);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return NULL;
	}
	snprintf(tf->files[tf->n].name, sizeof(tf->files[tf->n].name), "%s", name);
	tf->files[tf->n].f = f;
	tf->n++;
	return f;
}

int pl__telemetry_files_write(struct pl_telemetry_files *tf, const char *type, const char *line,
			      size_t len)
{
	FILE *f = file_for(tf, pl__telemetry_file_for(type));

	if (!f) {
		int err = -errno;

		tf->write_errors++;
		return err ? err : -EIO;
	}
	if (fwrite(line, 1, len, f) != len || fputc('\n', f) == EOF) {
		tf->write_errors++;
		return -EIO;
	}
	tf->lines++;
	return 0;
}

void pl__telemetry_files_flush(struct pl_telemetry_files *tf)
{
	size_t i;

	for (i = 0; i < tf->n; i++)
		if (fflush(tf->files[i].f) == EOF)
			tf->write_errors++;
}

void pl__telemetry_files_close(struct pl_telemetry_files *tf)
{
	size_t i;

	for (i = 0; i < tf->n; i++)
		if (fclose(tf->files[i].f) == EOF)
			tf->write_errors++;
	tf->n = 0;
	if (tf->dir_fd >= 0)
		close(tf->dir_fd);
	tf->dir_fd = -1;
}
