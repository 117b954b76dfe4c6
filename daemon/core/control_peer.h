/* Who may talk to perflinkd's control socket, decided from the peer's
 * credentials as the kernel reports them (SO_PEERCRED, SO_PEERGROUPS), never
 * from anything the peer says.
 *
 * Allowed: uid 0, the daemon's own uid, and members of the control group:
 * by the peer's gid, its supplementary groups (SO_PEERGROUPS, Linux 4.13 and
 * later), or, on older kernels, the group's member list as the group
 * database had it when the daemon started (resolved once, so the event loop
 * never waits on NSS). */
#ifndef PL_DAEMON_CONTROL_PEER_H
#define PL_DAEMON_CONTROL_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PL_PEER_GROUPS_MAX 256

struct pl__control_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	int ngroups; /* -1: the kernel could not tell */
	gid_t groups[PL_PEER_GROUPS_MAX];
};

struct pl__control_peer_policy {
	uid_t self_uid;
	bool has_group;
	gid_t gid;
	uid_t *member_uids;
	size_t n_members;
};

/* group: a name or a number; NULL or "" for none. A name that does not exist
 * is an error (logged), a number need not exist. 0 or -errno. */
int pl__control_peer_policy_init(struct pl__control_peer_policy *p, const char *group);
void pl__control_peer_policy_free(struct pl__control_peer_policy *p);

/* The credentials of a connected unix socket's peer. 0 or -errno. */
int pl__control_peer_get(int fd, struct pl__control_peer *out);
bool pl__control_peer_allowed(const struct pl__control_peer_policy *p,
			      const struct pl__control_peer *peer);

#endif
