/* A listening unix socket for perflinkd's local clients (the control socket,
 * the producer socket): the directory made if missing, a socket file left by
 * a dead daemon replaced (a live one is refused), the file owner-only from
 * the moment it exists, then given to the group and opened to it (0660). */
#ifndef PL_DAEMON_UNIX_LISTEN_H
#define PL_DAEMON_UNIX_LISTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* type: SOCK_STREAM or SOCK_SEQPACKET. what names the setting in errors
 * ("control-socket"). Returns the listening fd (non-blocking, close-on-exec)
 * or -errno, the reason logged. On success the file is the caller's to
 * unlink. */
int pl__unix_listen(const char *path, int type, bool has_group, gid_t gid, const char *what);

/* Whether the directory that holds path is safe to create the daemon's
 * files in (its sockets, its pidfile): a directory, owned by root or by
 * us, that no one else may write to. In a directory another user owns or
 * can write to, that user could swap the socket under perflinkd, or plant
 * a pidfile that stops it starting (and that an init script would then
 * kill the pid of). 0, or -EPERM (or stat's -errno) with the reason logged
 * (what names the setting). */
int pl__dir_trusted(const char *path, const char *what);

/* After accept failed with err (an errno): whether the listener must stop
 * watching its socket for PL_ACCEPT_PAUSE_NS. Out of fds or memory, the
 * socket stays readable, and watching it would spin the loop and log on
 * every turn; a peer that went away or a signal are not such a failure. */
#define PL_ACCEPT_PAUSE_NS 1000000000u
bool pl__accept_must_pause(int err);

#endif
