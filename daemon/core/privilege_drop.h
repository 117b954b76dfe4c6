/* Running as another user with only the capabilities still needed: perflinkd
 * opens what needs root (sockets, pid file, /proc handles, output files) and
 * then becomes the `user` setting, keeping the few capabilities its modules
 * use on every tick (docs/perflinkd.md, "Running as its own user").
 *
 * Raw syscalls (capset, prctl) rather than libcap-ng: the cross sysroots
 * (aarch64, mipsel, musl) carry no libcap-ng, and the part used here is a
 * dozen lines of <linux/capability.h>. */
#ifndef PL_DAEMON_PRIVILEGE_DROP_H
#define PL_DAEMON_PRIVILEGE_DROP_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* One bit per capability number (CAP_SYS_PTRACE is bit 19). */
#define PL_CAP_BIT(cap) ((uint64_t)1 << (cap))

/* Who to become, resolved before anything is opened, so that a bad name stops
 * perflinkd before it has created a file. */
struct pl_privilege_user {
	char *spec;     /* the setting as given, for messages */
	uid_t uid;
	gid_t gid;
	gid_t *groups;  /* supplementary groups: the user's, or none for uid:gid */
	size_t n_groups;
};

/* SPEC is a user name or a numeric uid[:gid]. A name (or a uid with a passwd
 * entry and no :gid) takes the entry's group and the user's supplementary
 * groups; uid:gid takes no supplementary group. 0, or -errno with err filled
 * (-ENOENT: no such user). */
int pl__privilege_resolve(const char *spec, struct pl_privilege_user *out, char *err,
			  size_t errlen);
void pl__privilege_user_free(struct pl_privilege_user *u);

/* Whether the drop below can work: started as root, or as U already. 0, or
 * -EPERM with err filled. Cheap; call it before opening anything. */
int pl__privilege_check(const struct pl_privilege_user *u, char *err, size_t errlen);

/* Become U and keep exactly the capabilities in KEEP (PL_CAP_BIT mask), in
 * the permitted and effective sets; the inheritable and ambient sets are
 * emptied, everything else leaves the bounding set, and no_new_privs is set.
 * Checked afterwards: the uids and gids are U's, the sets are KEEP, and
 * setuid(0) fails.
 *
 * Started as root: does all that. Started as U already (not root): nothing
 * to do, returns 0 (KEEP is what the caller was given, not checked). Started
 * as anyone else: -EPERM. Any other failure: -errno, with err filled; the
 * process may then be half way and must exit. Acts on the calling thread:
 * call it while the process has only one. */
int pl__privilege_drop(const struct pl_privilege_user *u, uint64_t keep, char *err,
		       size_t errlen);

/* Whether U, once dropped (no DAC capability kept), may open the file
 * described by ST for reading and writing, by its owner, group and mode. */
bool pl__privilege_may_read_write(const struct pl_privilege_user *u, const struct stat *st);

/* Whether this thread's permitted set holds every capability in CAPS (a
 * PL_CAP_BIT mask): what a service manager's bounding set left it. */
bool pl__privilege_permitted(uint64_t caps);

/* The name of a capability for messages ("CAP_SYS_PTRACE"), or "CAP_?" */
const char *pl__privilege_cap_name(int cap);

#endif
