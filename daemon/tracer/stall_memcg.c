/* See stall_memcg.h. */
#include "stall_memcg.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "proc_parse.h"

/* Is name one of the comma-separated list [s, e)? */
static bool in_list(const char *s, const char *e, const char *name)
{
	size_t n = strlen(name);

	while (s < e) {
		const char *c = memchr(s, ',', (size_t)(e - s));
		const char *end = c ? c : e;

		if ((size_t)(end - s) == n && memcmp(s, name, n) == 0)
			return true;
		s = end + 1;
	}
	return false;
}

static int copy_path(const char *s, const char *e, char *path, size_t cap)
{
	size_t n = (size_t)(e - s);

	if (n == 0 || *s != '/' || n >= cap)
		return -EINVAL;
	memcpy(path, s, n);
	path[n] = '\0';
	return strstr(path, "/..") ? -EINVAL : 0;
}

/* Lines "ID:CONTROLLERS:PATH"; v2's is "0::PATH". */
int pl__memcg_parse(const char *text, char *path, size_t cap, bool *v2)
{
	const char *line = text, *v2_s = NULL, *v2_e = NULL;

	while (*line) {
		const char *end = line + strcspn(line, "\n");
		const char *c1 = memchr(line, ':', (size_t)(end - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;

		if (c2 && in_list(c1 + 1, c2, "memory")) {
			*v2 = false;
			return copy_path(c2 + 1, end, path, cap);
		}
		if (c2 && c1 == line + 1 && *line == '0' && c2 == c1 + 1) {
			v2_s = c2 + 1;
			v2_e = end;
		}
		line = *end ? end + 1 : end;
	}
	if (!v2_s)
		return -ENOENT;
	*v2 = true;
	return copy_path(v2_s, v2_e, path, cap);
}

int pl__memcg_open(struct pl_memcg *m, int rootfd, bool live, int pid)
{
	struct pl_procfile cg = PL_PROCFILE_INIT;
	const char *base = live ? "/sys/fs/cgroup" : "sys/fs/cgroup";
	int dirfd = live ? AT_FDCWD : rootfd, err = -ENOENT;
	char rel[32], path[PATH_MAX / 2], file[PATH_MAX];

	m->tried = true;
	snprintf(rel, sizeof(rel), "%d/cgroup", pid);
	if (pl__procfile_read_once(&cg, rootfd, rel) > 0)
		err = pl__memcg_parse(cg.buf, path, sizeof(path), &m->v2);
	pl__procfile_free(&cg);
	if (err < 0)
		return err;
	if (strcmp(path, "/") == 0)
		return -ENOENT; /* the root cgroup has no limit */
	if (!m->v2) {
		snprintf(file, sizeof(file), "%s/memory%s/memory.failcnt", base, path);
		return pl__procfile_open(&m->pf, dirfd, file);
	}
	/* the v2 hierarchy is mounted there alone, or beside v1 as unified */
	snprintf(file, sizeof(file), "%s%s/memory.events", base, path);
	if ((err = pl__procfile_open(&m->pf, dirfd, file)) == 0)
		return 0;
	snprintf(file, sizeof(file), "%s/unified%s/memory.events", base, path);
	return pl__procfile_open(&m->pf, dirfd, file);
}

int pl__memcg_read(struct pl_memcg *m, uint64_t *hits)
{
	static const char *const key[] = { "max" };
	ssize_t n = m->pf.fd >= 0 ? pl__procfile_read(&m->pf) : -EBADF;
	const char *s;

	if (n <= 0)
		return n < 0 ? (int)n : -EINVAL;
	if (m->v2)
		return pl__parse_keyed_u64(m->pf.buf, key, 1, hits) & 1 ? 0 : -EINVAL;
	s = m->pf.buf;
	return pl__parse_u64(&s, hits) == 0 && (*s == '\n' || *s == '\0') ? 0 : -EINVAL;
}

void pl__memcg_close(struct pl_memcg *m)
{
	pl__procfile_free(&m->pf);
	m->tried = false;
}
