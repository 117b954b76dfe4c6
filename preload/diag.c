/* Allocation-free message formatting and output for the shim. */
#include "diag.h"

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

struct out {
	char *buf;
	size_t cap, len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->cap)
		o->buf[o->len++] = c;
}

static void put_str(struct out *o, const char *s)
{
	if (!s)
		s = "(null)";
	while (*s)
		put(o, *s++);
}

static void put_u64(struct out *o, unsigned long long v, unsigned base)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (base == 16)
		put_str(o, "0x");
	while (n)
		put(o, tmp[--n]);
}

size_t pl__vfmt(char *buf, size_t cap, const char *fmt, va_list ap)
{
	struct out o = { buf, cap, 0 };
	const char *p;

	if (cap == 0)
		return 0;
	for (p = fmt; *p; p++) {
		int longs = 0;

		if (*p != '%') {
			put(&o, *p);
			continue;
		}
		p++;
		while (*p == 'l') {
			longs++;
			p++;
		}
		switch (*p) {
		case 's':
			put_str(&o, va_arg(ap, const char *));
			break;
		case 'd': {
			long long v = longs >= 2 ? va_arg(ap, long long)
				    : longs ? va_arg(ap, long) : va_arg(ap, int);
			if (v < 0) {
				put(&o, '-');
				put_u64(&o, 0ull - (unsigned long long)v, 10);
			} else {
				put_u64(&o, (unsigned long long)v, 10);
			}
			break;
		}
		case 'u':
		case 'x': {
			unsigned long long v = longs >= 2 ? va_arg(ap, unsigned long long)
					     : longs ? va_arg(ap, unsigned long)
						     : va_arg(ap, unsigned int);
			put_u64(&o, v, *p == 'x' ? 16 : 10);
			break;
		}
		case '%':
			put(&o, '%');
			break;
		case '\0':
			p--; /* a lone '%' at the end */
			break;
		default:
			put(&o, '?');
			break;
		}
	}
	o.buf[o.len] = '\0';
	return o.len;
}

size_t pl__fmt(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = pl__vfmt(buf, cap, fmt, ap);
	va_end(ap);
	return n;
}

void pl__diag(const char *fmt, ...)
{
	static const char prefix[] = "perflink-preload: ";
	char buf[512];
	int saved_errno = errno;
	size_t n = sizeof(prefix) - 1, off = 0;
	va_list ap;

	for (off = 0; off < n; off++)
		buf[off] = prefix[off];
	va_start(ap, fmt);
	n += pl__vfmt(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	buf[n++] = '\n';
	off = 0;
	while (off < n) {
		ssize_t w = write(STDERR_FILENO, buf + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	errno = saved_errno;
}
