/* See privilege_drop.h. */
#include "privilege_drop.h"

#include <errno.h>
#include <stdarg.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Older C library headers lack the ambient-set prctl (Linux 4.3). */
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif
#ifndef PR_SET_NO_NEW_PRIVS
#define PR_SET_NO_NEW_PRIVS 38
#endif

static const char *const cap_names[] = {
	[CAP_CHOWN] = "CAP_CHOWN",
	[CAP_DAC_OVERRIDE] = "CAP_DAC_OVERRIDE",
	[CAP_DAC_READ_SEARCH] = "CAP_DAC_READ_SEARCH",
	[CAP_FOWNER] = "CAP_FOWNER",
	[CAP_SETGID] = "CAP_SETGID",
	[CAP_SETUID] = "CAP_SETUID",
	[CAP_SETPCAP] = "CAP_SETPCAP",
	[CAP_SYS_PTRACE] = "CAP_SYS_PTRACE",
	[CAP_SYS_ADMIN] = "CAP_SYS_ADMIN",
	[CAP_SYS_NICE] = "CAP_SYS_NICE",
};

bool pl__privilege_may_read_write(const struct pl_privilege_user *u, const struct stat *st)
{
	bool in_group = st->st_gid == u->gid;

	for (size_t i = 0; i < u->n_groups && !in_group; i++)
		in_group = u->groups[i] == st->st_gid;
	if (st->st_uid == u->uid)
		return (st->st_mode & (S_IRUSR | S_IWUSR)) == (S_IRUSR | S_IWUSR);
	if (in_group)
		return (st->st_mode & (S_IRGRP | S_IWGRP)) == (S_IRGRP | S_IWGRP);
	return (st->st_mode & (S_IROTH | S_IWOTH)) == (S_IROTH | S_IWOTH);
}

const char *pl__privilege_cap_name(int cap)
{
	if (cap >= 0 && (size_t)cap < sizeof(cap_names) / sizeof(cap_names[0]) && cap_names[cap])
		return cap_names[cap];
	return "CAP_?";
}

/* A failed syscall: the message, then ": strerror(errno)"; returns -errno,
 * read before formatting can change it. */
__attribute__((format(printf, 3, 4)))
static int sys_fail(char *err, size_t errlen, const char *fmt, ...)
{
	int e = errno ? errno : EPERM;
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	n = strlen(err);
	snprintf(err + n, errlen - n, ": %s", strerror(e));
	return -e;
}

static bool parse_id(const char *s, const char *end, unsigned long *out)
{
	char *stop;

	if (s == end || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoul(s, &stop, 10);
	return errno == 0 && stop == end && *out < (unsigned long)(uid_t)-1;
}

/* The user's supplementary groups, as login would give them. */
static int user_groups(struct pl_privilege_user *u, const char *name)
{
	int n = 16;

	for (;;) {
		gid_t *g = realloc(u->groups, (size_t)n * sizeof(*g));
		int want = n;

		if (!g)
			return -ENOMEM;
		u->groups = g;
		if (getgrouplist(name, u->gid, g, &want) >= 0) {
			u->n_groups = (size_t)want;
			return 0;
		}
		/* musl and glibc both set want to the number needed */
		n = want > n ? want : n * 2;
	}
}

int pl__privilege_resolve(const char *spec, struct pl_privilege_user *out, char *err,
			  size_t errlen)
{
	const char *colon = strchr(spec, ':');
	const char *end = colon ? colon : spec + strlen(spec);
	unsigned long uid, gid;
	struct passwd *pw;
	int ret;

	memset(out, 0, sizeof(*out));
	out->spec = strdup(spec);
	if (!out->spec) {
		snprintf(err, errlen, "user: out of memory");
		return -ENOMEM;
	}
	if (parse_id(spec, end, &uid)) {
		out->uid = (uid_t)uid;
		if (colon) {
			if (!parse_id(colon + 1, colon + 1 + strlen(colon + 1), &gid)) {
				snprintf(err, errlen, "user: '%s': the group after ':' must be a number",
					 spec);
				ret = -EINVAL;
				goto fail;
			}
			out->gid = (gid_t)gid;
			return 0; /* uid:gid, as given: no supplementary group */
		}
		errno = 0;
		pw = getpwuid(out->uid);
		if (!pw) {
			snprintf(err, errlen, "user: uid %lu has no passwd entry: give its group "
				 "too (%lu:GID)", uid, uid);
			ret = errno ? -errno : -ENOENT;
			goto fail;
		}
	} else {
		if (colon) {
			snprintf(err, errlen, "user: '%s': a name takes no ':group' (its own group "
				 "is used); uid:gid is for numbers", spec);
			ret = -EINVAL;
			goto fail;
		}
		errno = 0;
		pw = getpwnam(spec);
		if (!pw) {
			snprintf(err, errlen, "user: no user named '%s'%s%s", spec,
				 errno ? ": " : "", errno ? strerror(errno) : "");
			ret = errno ? -errno : -ENOENT;
			goto fail;
		}
		out->uid = pw->pw_uid;
	}
	out->gid = pw->pw_gid;
	ret = user_groups(out, pw->pw_name);
	if (ret == 0)
		return 0;
	snprintf(err, errlen, "user: groups of '%s': %s", spec, strerror(-ret));
fail:
	pl__privilege_user_free(out);
	return ret;
}

void pl__privilege_user_free(struct pl_privilege_user *u)
{
	free(u->spec);
	free(u->groups);
	memset(u, 0, sizeof(*u));
}

/* The three 64-bit sets of this thread, through the version 3 interface. */
struct cap_sets {
	uint64_t effective, permitted, inheritable;
};

static int caps_get(struct cap_sets *s)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	s->effective = data[0].effective | (uint64_t)data[1].effective << 32;
	s->permitted = data[0].permitted | (uint64_t)data[1].permitted << 32;
	s->inheritable = data[0].inheritable | (uint64_t)data[1].inheritable << 32;
	return 0;
}

static int caps_set(const struct cap_sets *s)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {
		{ (uint32_t)s->effective, (uint32_t)s->permitted, (uint32_t)s->inheritable },
		{ (uint32_t)(s->effective >> 32), (uint32_t)(s->permitted >> 32),
		  (uint32_t)(s->inheritable >> 32) },
	};

	return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}

/* The first name in MASK, for "cannot keep ..." messages. */
static int first_cap(uint64_t mask)
{
	int cap = 0;

	while (cap < 63 && !(mask & PL_CAP_BIT(cap)))
		cap++;
	return cap;
}

/* Everything but KEEP out of the bounding set, so that not even an exec of a
 * file with capabilities gives them back. Needs CAP_SETPCAP, so while still
 * root. The loop ends where the kernel's capabilities end (EINVAL). */
static int drop_bounding(uint64_t keep, char *err, size_t errlen)
{
	int cap;

	for (cap = 0; cap < 64; cap++) {
		int in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (in < 0 && errno == EINVAL)
			return 0;
		if (in < 0 || (in == 1 && !(keep & PL_CAP_BIT(cap)) &&
			       prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0))
			return sys_fail(err, errlen, "cannot drop capability %d from the bounding "
					"set (needs CAP_SETPCAP)", cap);
	}
	return 0;
}

/* What the drop promises, read back from the kernel: a mistake here would
 * otherwise show only as a daemon that can do more than it says. */
static int verify(const struct pl_privilege_user *u, uint64_t keep, char *err, size_t errlen)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	struct cap_sets s;
	int ret;

	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
		return sys_fail(err, errlen, "getresuid");
	if (ru != u->uid || eu != u->uid || su != u->uid || rg != u->gid || eg != u->gid ||
	    sg != u->gid) {
		snprintf(err, errlen, "still uids %u/%u/%u gids %u/%u/%u after the drop",
			 (unsigned)ru, (unsigned)eu, (unsigned)su, (unsigned)rg, (unsigned)eg,
			 (unsigned)sg);
		return -EPERM;
	}
	if ((ret = caps_get(&s)) < 0) {
		snprintf(err, errlen, "capget: %s", strerror(-ret));
		return ret;
	}
	if (s.effective != keep || s.permitted != keep || s.inheritable != 0) {
		snprintf(err, errlen, "capabilities after the drop: effective %#llx permitted "
			 "%#llx inheritable %#llx, not %#llx",
			 (unsigned long long)s.effective, (unsigned long long)s.permitted,
			 (unsigned long long)s.inheritable, (unsigned long long)keep);
		return -EPERM;
	}
	if (u->uid != 0 && setuid(0) == 0) {
		snprintf(err, errlen, "setuid(0) still succeeds after the drop");
		return -EPERM;
	}
	return 0;
}

bool pl__privilege_permitted(uint64_t caps)
{
	struct cap_sets s;

	return caps_get(&s) == 0 && (s.permitted & caps) == caps;
}

int pl__privilege_check(const struct pl_privilege_user *u, char *err, size_t errlen)
{
	if (geteuid() == 0 || (getuid() == u->uid && geteuid() == u->uid))
		return 0;
	snprintf(err, errlen, "perflinkd runs as uid %u, not root, and cannot become uid %u "
		 "(start it as root, or as that user)", (unsigned)geteuid(), (unsigned)u->uid);
	return -EPERM;
}

int pl__privilege_drop(const struct pl_privilege_user *u, uint64_t keep, char *err,
		       size_t errlen)
{
	struct cap_sets now, after = { .effective = keep, .permitted = keep };
	int ret;

	if ((ret = pl__privilege_check(u, err, errlen)) < 0 || geteuid() != 0)
		return ret;
	if ((ret = caps_get(&now)) < 0) {
		snprintf(err, errlen, "capget: %s", strerror(-ret));
		return ret;
	}
	/* A capability the service manager already took cannot be kept: say
	 * which, rather than run without what a module relies on. */
	if ((keep & now.permitted) != keep) {
		snprintf(err, errlen, "%s is needed after the drop, but perflinkd was started "
			 "without it (CapabilityBoundingSet=?)",
			 pl__privilege_cap_name(first_cap(keep & ~now.permitted)));
		return -EPERM;
	}
	if ((ret = drop_bounding(keep, err, errlen)) < 0)
		return ret;
	/* Ambient capabilities would survive an exec; none are wanted. EINVAL:
	 * a kernel before 4.3, which has no ambient set to clear. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return sys_fail(err, errlen, "clearing the ambient capabilities");
	/* Without KEEPCAPS the kernel empties the permitted set when the last
	 * uid leaves 0, and the capabilities to keep could not be set again. */
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return sys_fail(err, errlen, "PR_SET_KEEPCAPS");
	/* Groups first: once the uid is not 0, setgroups and setresgid fail. */
	if (setgroups(u->n_groups, u->groups) < 0)
		return sys_fail(err, errlen, "setgroups (%zu groups)", u->n_groups);
	if (setresgid(u->gid, u->gid, u->gid) < 0)
		return sys_fail(err, errlen, "setresgid(%u)", (unsigned)u->gid);
	if (setresuid(u->uid, u->uid, u->uid) < 0)
		return sys_fail(err, errlen, "setresuid(%u)", (unsigned)u->uid);
	/* The uid change cleared the effective set; permitted still holds all
	 * root had. Narrow both to KEEP, inheritable to none. */
	if ((ret = caps_set(&after)) < 0) {
		snprintf(err, errlen, "capset: %s", strerror(-ret));
		return ret;
	}
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return sys_fail(err, errlen, "PR_SET_NO_NEW_PRIVS");
	return verify(u, keep, err, errlen);
}
