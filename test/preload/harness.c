/* Running programs and reading reports for the preload tests. */
#include "harness.h"
#include "json_reader.h"

#include <ftw.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		abort();
	return p;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		abort();
	return d;
}

static char **make_env(const char *const extra[])
{
	size_t n = 0, i, k = 0;
	char **env;

	for (i = 0; environ[i]; i++)
		n++;
	for (i = 0; extra && extra[i]; i++)
		n++;
	env = xrealloc(NULL, (n + 1) * sizeof(*env));
	for (i = 0; environ[i]; i++) {
		if (strncmp(environ[i], "LD_PRELOAD=", 11) == 0 ||
		    strncmp(environ[i], "PERFLINK_", 9) == 0)
			continue;
		env[k++] = environ[i];
	}
	for (i = 0; extra && extra[i]; i++)
		env[k++] = (char *)extra[i];
	env[k] = NULL;
	return env;
}

static void drain(int fd, char *buf, size_t *len, bool *open)
{
	ssize_t n = read(fd, buf + *len, H_OUT_MAX - 1 - *len);

	if (n > 0)
		*len += (size_t)n;
	else if (n == 0 || (errno != EINTR && errno != EAGAIN))
		*open = false;
	if (*len == H_OUT_MAX - 1) /* full: stop reading, let the child fail on write */
		*open = false;
}

int h_run(struct h_run *r, char *const argv[], const char *const env[])
{
	int out[2], err[2], status;
	size_t olen = 0, elen = 0;
	bool oopen = true, eopen = true;
	char **envp;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (pipe2(out, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(err, O_CLOEXEC) < 0) {
		close(out[0]);
		close(out[1]);
		return -errno;
	}
	envp = make_env(env);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	free(envp);
	close(out[1]);
	close(err[1]);
	r->out = xrealloc(NULL, H_OUT_MAX);
	r->err = xrealloc(NULL, H_OUT_MAX);
	while (oopen || eopen) {
		struct pollfd p[2] = { { oopen ? out[0] : -1, POLLIN, 0 },
				       { eopen ? err[0] : -1, POLLIN, 0 } };

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			abort();
		}
		if (p[0].revents)
			drain(out[0], r->out, &olen, &oopen);
		if (p[1].revents)
			drain(err[0], r->err, &elen, &eopen);
	}
	close(out[0]);
	close(err[0]);
	r->out[olen] = '\0';
	r->err[elen] = '\0';
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			abort();
	}
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return 0;
}

void h_run_free(struct h_run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

void h_diag(const char *text)
{
	while (text && *text) {
		const char *end = strchr(text, '\n');
		int n = end ? (int)(end - text) : (int)strlen(text);

		printf("# %.*s\n", n, text);
		text += n + (end ? 1 : 0);
	}
}

const char *h_oneline(const char *text)
{
	static char buf[201];
	size_t o = 0;

	for (; text && *text && o + 3 < sizeof(buf); text++) {
		if (*text == '\n') {
			if (text[1] && o + 4 < sizeof(buf)) {
				memcpy(buf + o, " / ", 3);
				o += 3;
			}
		} else {
			buf[o++] = *text;
		}
	}
	buf[o] = '\0';
	return buf;
}

unsigned h_count(const char *haystack, const char *needle)
{
	unsigned n = 0;
	size_t len = strlen(needle);

	if (!haystack || len == 0)
		return 0;
	while ((haystack = strstr(haystack, needle))) {
		n++;
		haystack += len;
	}
	return n;
}

int h_tempdir(char *out, size_t cap, const char *tag)
{
	const char *base = getenv("TMPDIR");

	snprintf(out, cap, "%s/perflink-%s-XXXXXX", base && *base ? base : "/tmp", tag);
	return mkdtemp(out) ? 0 : -errno;
}

int h_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -errno;
	ok = fputs(text, f) >= 0;
	ok = (fclose(f) == 0) && ok;
	return ok ? 0 : -EIO;
}

bool h_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

void h_rmdir(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void collect(void *ctx, const char *path, enum pl_json_kind kind, const char *value)
{
	struct h_report *r = ctx;

	(void)kind;
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 128;
		r->kv = xrealloc(r->kv, r->cap * sizeof(*r->kv));
	}
	r->kv[r->n].path = xstrdup(path);
	r->kv[r->n].value = xstrdup(value);
	r->n++;
}

static void report_free(struct h_report *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		free(r->kv[i].path);
		free(r->kv[i].value);
	}
	free(r->kv);
}

void h_reports_load(struct h_reports *rs, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	memset(rs, 0, sizeof(*rs));
	rs->all_ok = true;
	if (!f)
		return;
	while ((n = getline(&line, &cap, f)) > 0) {
		struct h_report r = { NULL, 0, 0 };

		if (line[n - 1] != '\n' || pl__json_walk(line, (size_t)n, collect, &r) != 0 ||
		    line[0] != '{') {
			rs->all_ok = false;
			report_free(&r);
			continue;
		}
		rs->r = xrealloc(rs->r, (rs->n + 1) * sizeof(*rs->r));
		rs->r[rs->n++] = r;
	}
	free(line);
	fclose(f);
}

void h_reports_free(struct h_reports *rs)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		report_free(&rs->r[i]);
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}

static const char *vget(const struct h_report *r, const char *fmt, va_list ap)
{
	char path[PL_JSON_READ_PATH];
	size_t i;

	vsnprintf(path, sizeof(path), fmt, ap);
	for (i = 0; r && i < r->n; i++) {
		if (strcmp(r->kv[i].path, path) == 0)
			return r->kv[i].value;
	}
	return NULL;
}

const char *h_get(const struct h_report *r, const char *fmt, ...)
{
	va_list ap;
	const char *v;

	va_start(ap, fmt);
	v = vget(r, fmt, ap);
	va_end(ap);
	return v;
}

static uint64_t to_u64(const char *v)
{
	char *end;
	unsigned long long n;

	if (!v || !*v || *v < '0' || *v > '9')
		return UINT64_MAX;
	errno = 0;
	n = strtoull(v, &end, 10);
	return (*end || errno) ? UINT64_MAX : (uint64_t)n;
}

uint64_t h_u64(const struct h_report *r, const char *fmt, ...)
{
	va_list ap;
	const char *v;

	va_start(ap, fmt);
	v = vget(r, fmt, ap);
	va_end(ap);
	return to_u64(v);
}

int h_stage(const struct h_report *r, const char *name)
{
	int i;

	for (i = 0; i < 256; i++) {
		const char *v = h_get(r, "stages.%d.name", i);

		if (!v)
			return -1;
		if (strcmp(v, name) == 0)
			return i;
	}
	return -1;
}

uint64_t h_stage_u64(const struct h_report *r, const char *stage, const char *field)
{
	int i = h_stage(r, stage);

	return i < 0 ? UINT64_MAX : h_u64(r, "stages.%d.%s", i, field);
}

const struct h_report *h_last(const struct h_reports *rs, uint64_t pid)
{
	size_t i;

	for (i = rs->n; i > 0; i--) {
		if (pid == 0 || h_u64(&rs->r[i - 1], "pid") == pid)
			return &rs->r[i - 1];
	}
	return NULL;
}

