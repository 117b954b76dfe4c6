/* The stage file parser (format: docs/stages.md). Runs once, in the
 * constructor: reads the whole file into a static buffer with plain
 * syscalls and allocates nothing, so it is safe however early it runs.
 * The first bad line stops the load: a table that silently skipped a line
 * would report numbers for a stage set the user did not write. */
#include "stages.h"
#include "diag.h"
#include "real.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
/* _IOC_SIZEMASK, _IOC_DIR and _IOC_SIZE: glibc's <sys/ioctl.h> brings
 * them from the kernel's headers, musl's does not */
#ifndef _IOC_SIZEMASK
#include <linux/ioctl.h>
#endif
#include <unistd.h>

#define FILE_MAX (64 * 1024)
#define MAX_TOKENS 12

static char file_buf[FILE_MAX];

/* Only a regular file of sane size: this runs in the target's constructor,
 * where a FIFO or a device that never answers would hang the target for
 * good, so the open does not wait (O_NONBLOCK) and anything else is
 * refused before a byte is read. */
static int open_regular(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd, e;

	fd = pl__real.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		e = errno;
		pl__fmt(err, errlen, "%s: cannot open: error %d", path, e);
		return -e;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		pl__real.close(fd);
		pl__fmt(err, errlen, "%s: not a regular file", path);
		return -EINVAL;
	}
	if (st.st_size > FILE_MAX - 1) {
		pl__real.close(fd);
		pl__fmt(err, errlen, "%s: larger than %u bytes", path, FILE_MAX - 1);
		return -EFBIG;
	}
	return fd;
}

static int read_file(const char *path, size_t *len, char *err, size_t errlen)
{
	size_t n = 0;
	int fd, e;

	fd = open_regular(path, err, errlen);
	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t r = read(fd, file_buf + n, sizeof(file_buf) - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			pl__real.close(fd);
			pl__fmt(err, errlen, "%s: cannot read: error %d", path, e);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == sizeof(file_buf) - 1) {
			pl__real.close(fd);
			pl__fmt(err, errlen, "%s: larger than %u bytes", path, FILE_MAX - 1);
			return -EFBIG;
		}
	}
	pl__real.close(fd);
	file_buf[n] = '\0';
	*len = n;
	return 0;
}

/* Split a line in place. Parentheses group, so "_IOWR('q', 12, 4)" is one
 * token; '#' outside a character literal starts a comment. */
static int tokenize(char *line, char **tok, int max)
{
	int n = 0, depth = 0;
	bool in_char = false;
	char *p = line;

	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (*p == '\0' || *p == '#')
			break;
		if (n == max)
			return -1;
		tok[n++] = p;
		for (; *p; p++) {
			if (in_char) {
				if (*p == '\'')
					in_char = false;
				continue;
			}
			if (*p == '\'')
				in_char = true;
			else if (*p == '(')
				depth++;
			else if (*p == ')')
				depth--;
			else if (depth <= 0 && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '#'))
				break;
		}
		if (*p == '#') {
			*p = '\0';
			break;
		}
		if (*p)
			*p++ = '\0';
	}
	return n;
}

/* Unsigned number, decimal or 0x hex, at most max. Advances *s. */
static bool parse_num(const char **s, uint32_t max, uint32_t *out)
{
	const char *p = *s;
	uint64_t v = 0;
	unsigned base = 10;
	int digits = 0;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	for (;; p++, digits++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A' + 10);
		else
			break;
		v = v * base + d;
		if (v > max)
			return false;
	}
	if (digits == 0)
		return false;
	*s = p;
	*out = (uint32_t)v;
	return true;
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* "_IOWR('q', 12, 4)" and friends, with this ABI's direction bits. */
static bool parse_ioc(const char *s, uint32_t *code)
{
	static const struct {
		const char *name;
		unsigned dir;
		bool has_size;
	} forms[] = {
		{ "_IOWR(", _IOC_READ | _IOC_WRITE, true },
		{ "_IOW(", _IOC_WRITE, true },
		{ "_IOR(", _IOC_READ, true },
		{ "_IO(", _IOC_NONE, false },
	};
	uint32_t type, nr, size = 0;
	size_t i, n;

	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		n = strlen(forms[i].name);
		if (strncmp(s, forms[i].name, n) == 0)
			break;
	}
	if (i == sizeof(forms) / sizeof(forms[0]))
		return false;
	s = skip_space(s + n);
	if (s[0] == '\'' && s[1] && s[1] != '\'' && s[2] == '\'') {
		type = (unsigned char)s[1];
		s += 3;
	} else if (!parse_num(&s, 255, &type)) {
		return false;
	}
	s = skip_space(s);
	if (*s++ != ',')
		return false;
	s = skip_space(s);
	if (!parse_num(&s, 255, &nr))
		return false;
	s = skip_space(s);
	if (forms[i].has_size) {
		if (*s++ != ',')
			return false;
		s = skip_space(s);
		if (!parse_num(&s, _IOC_SIZEMASK, &size))
			return false;
		s = skip_space(s);
	}
	if (s[0] != ')' || s[1] != '\0')
		return false;
	*code = (uint32_t)_IOC(forms[i].dir, type, nr, size);
	return true;
}

static bool parse_request(const char *s, uint32_t *code)
{
	if (s[0] == '_')
		return parse_ioc(s, code);
	return parse_num(&s, 0xffffffffu, code) && *s == '\0';
}

/* The bytes the request code says its argument has (0: none declared). */
static uint32_t ioc_size(uint32_t code)
{
	return _IOC_DIR(code) == _IOC_NONE ? 0 : _IOC_SIZE(code);
}

static bool parse_extract(const char *s, uint32_t code, struct pl_extract *x)
{
	uint32_t off, width;

	if (!parse_num(&s, 0xffff, &off) || *s++ != ':' || !parse_num(&s, 8, &width) || *s)
		return false;
	if (width != 1 && width != 2 && width != 4 && width != 8)
		return false;
	x->offset = (uint16_t)off;
	x->width = (uint8_t)width;
	x->within_ioc = off + width <= ioc_size(code);
	return true;
}

static bool valid_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' || *s == '.'))
			return false;
	}
	return true;
}

static int parse_stage(char **tok, int n, unsigned line, char *err, size_t errlen)
{
	enum pl_stage_kind kind;
	struct pl_rule rule;
	char sub[200];
	int s, i, r;

	memset(&rule, 0, sizeof(rule));
	if (n < 5) {
		pl__fmt(err, errlen, "expected: stage NAME KIND DEVICE REQUEST [OPTION...]");
		return -EINVAL;
	}
	if (!valid_name(tok[1]) || strlen(tok[1]) >= PL_STAGE_NAME_MAX) {
		pl__fmt(err, errlen,
			"bad stage name '%s' (letters, digits, '_', '-', '.'; at most %u)", tok[1],
			PL_STAGE_NAME_MAX - 1);
		return -EINVAL;
	}
	if (pl__kind_parse(tok[2], &kind) < 0) {
		pl__fmt(err, errlen,
			"unknown kind '%s' (submit, wait, dequeue, queue, cache, other)", tok[2]);
		return -EINVAL;
	}
	if (!parse_request(tok[4], &rule.code)) {
		pl__fmt(err, errlen,
			"bad request '%s' (a number, or _IO/_IOR/_IOW/_IOWR(type, nr[, size]))",
			tok[4]);
		return -EINVAL;
	}
	for (i = 5; i < n; i++) {
		if (strncmp(tok[i], "cache-bytes=", 12) == 0) {
			if (kind != PL_KIND_CACHE) {
				pl__fmt(err, errlen, "cache-bytes is for stages of kind cache");
				return -EINVAL;
			}
			if (!parse_extract(tok[i] + 12, rule.code, &rule.cache_bytes))
				goto bad_extract;
		} else if (strncmp(tok[i], "stream-bytes=", 13) == 0) {
			if (!parse_extract(tok[i] + 13, rule.code, &rule.stream_bytes))
				goto bad_extract;
		} else if (strcmp(tok[i], "boundary") == 0) {
			r = pl__stages_want_boundary(tok[1], line, err, errlen);
			if (r < 0)
				return r;
		} else {
			pl__fmt(err, errlen, "unknown option '%s'", tok[i]);
			return -EINVAL;
		}
	}
	s = pl__stages_add_stage(tok[1], kind, line, sub, sizeof(sub));
	if (s < 0)
		goto sub_error;
	r = pl__stages_add_pattern(tok[3], &rule.pattern_bit, sub, sizeof(sub));
	if (r < 0)
		goto sub_error;
	rule.stage = (uint16_t)s;
	rule.from_config = true;
	r = pl__stages_add_rule(&rule, sub, sizeof(sub));
	if (r < 0)
		goto sub_error;
	return 0;

bad_extract:
	pl__fmt(err, errlen, "bad '%s': OFFSET:WIDTH with WIDTH 1, 2, 4 or 8", tok[i]);
	return -EINVAL;
sub_error:
	pl__fmt(err, errlen, "%s", sub);
	return -EINVAL;
}

static int parse_line(char *text, unsigned line, char *err, size_t errlen)
{
	char *tok[MAX_TOKENS];
	int n = tokenize(text, tok, MAX_TOKENS);

	if (n < 0) {
		pl__fmt(err, errlen, "more than %u words", MAX_TOKENS);
		return -EINVAL;
	}
	if (n == 0)
		return 0;
	if (strcmp(tok[0], "stage") == 0)
		return parse_stage(tok, n, line, err, errlen);
	if (strcmp(tok[0], "frame-boundary") == 0) {
		if (n != 2 || !valid_name(tok[1])) {
			pl__fmt(err, errlen, "expected: frame-boundary STAGE");
			return -EINVAL;
		}
		return pl__stages_want_boundary(tok[1], line, err, errlen);
	}
	pl__fmt(err, errlen, "unknown directive '%s' (stage, frame-boundary)", tok[0]);
	return -EINVAL;
}

int pl__stages_parse_text(const char *path, char *text, size_t len, char *err, size_t errlen)
{
	char msg[256];
	unsigned line = 1;
	char *start = text;
	size_t i;
	int r;

	for (i = 0; i <= len; i++) {
		if (i < len && text[i] != '\n' && text[i] != '\0')
			continue;
		if (i < len && text[i] == '\0') {
			pl__fmt(err, errlen, "%s:%u: a NUL byte in a text file", path, line);
			return -EINVAL;
		}
		if (i < len)
			text[i] = '\0';
		r = parse_line(start, line, msg, sizeof(msg));
		if (r < 0) {
			pl__fmt(err, errlen, "%s:%u: %s", path, line, msg);
			return r;
		}
		start = text + i + 1;
		line++;
	}
	return 0;
}

int pl__stages_load_file(const char *path, char *err, size_t errlen)
{
	size_t len = 0;
	int r;

	r = read_file(path, &len, err, errlen);
	if (r < 0)
		return r;
	return pl__stages_parse_text(path, file_buf, len, err, errlen);
}
