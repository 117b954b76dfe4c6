/* See control_peer.h. */
#include "control_peer.h"
#include "log.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static bool parse_id(const char *s, unsigned long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno == 0 && *end == '\0' && *out < (unsigned long)(gid_t)-1;
}

/* Copy the member names first: getpwnam may reuse the buffers getgrnam
 * returned. */
static int resolve_members(struct pl__control_peer_policy *p, char *const *mem)
{
	size_t n = 0, i;
	char **names;
	int ret = 0;

	while (mem && mem[n])
		n++;
	if (n == 0)
		return 0;
	names = calloc(n, sizeof(*names));
	p->member_uids = calloc(n, sizeof(*p->member_uids));
	if (!names || !p->member_uids) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		names[i] = strdup(mem[i]);
		if (!names[i]) {
			ret = -ENOMEM;
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		struct passwd *pw = getpwnam(names[i]);

		if (pw)
			p->member_uids[p->n_members++] = pw->pw_uid;
	}
out:
	for (i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

int pl__control_peer_policy_init(struct pl__control_peer_policy *p, const char *group)
{
	struct group *gr;
	unsigned long id;
	int ret;

	memset(p, 0, sizeof(*p));
	p->self_uid = geteuid();
	if (!group || !*group)
		return 0;
	errno = 0;
	if (parse_id(group, &id)) {
		p->gid = (gid_t)id;
		gr = getgrgid(p->gid);
	} else {
		gr = getgrnam(group);
		if (!gr) {
			pl__log_warnx("control-group: no group named '%s'%s%s", group,
				      errno ? ": " : "", errno ? strerror(errno) : "");
			return -ENOENT;
		}
		p->gid = gr->gr_gid;
	}
	p->has_group = true;
	ret = gr ? resolve_members(p, gr->gr_mem) : 0;
	if (ret < 0) {
		pl__log_warnx("control-group: %s", strerror(-ret));
		pl__control_peer_policy_free(p);
	}
	return ret;
}

void pl__control_peer_policy_free(struct pl__control_peer_policy *p)
{
	free(p->member_uids);
	p->member_uids = NULL;
	p->n_members = 0;
}

int pl__control_peer_get(int fd, struct pl__control_peer *out)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	if (len != sizeof(cred))
		return -EPROTO;
	out->pid = cred.pid;
	out->uid = cred.uid;
	out->gid = cred.gid;
	out->ngroups = -1;
#ifdef SO_PEERGROUPS
	len = sizeof(out->groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, out->groups, &len) == 0)
		out->ngroups = (int)(len / sizeof(gid_t));
#endif
	return 0;
}

bool pl__control_peer_allowed(const struct pl__control_peer_policy *p,
			      const struct pl__control_peer *peer)
{
	size_t i;

	if (peer->uid == 0 || peer->uid == p->self_uid)
		return true;
	if (!p->has_group)
		return false;
	if (peer->gid == p->gid)
		return true;
	for (i = 0; peer->ngroups > 0 && i < (size_t)peer->ngroups; i++) {
		if (peer->groups[i] == p->gid)
			return true;
	}
	for (i = 0; i < p->n_members; i++) {
		if (peer->uid == p->member_uids[i])
			return true;
	}
	return false;
}
