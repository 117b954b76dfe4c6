/* The systemd readiness protocol without libsystemd: one datagram with
 * "READY=1", "STOPPING=1", "STATUS=..." to the socket named by $NOTIFY_SOCKET.
 *
 * Supported addresses: an absolute path, or '@' for the abstract namespace.
 * Other forms (vsock:) are refused with -EAFNOSUPPORT. */
#ifndef PL_DAEMON_NOTIFY_H
#define PL_DAEMON_NOTIFY_H

/* Send state to address (as $NOTIFY_SOCKET spells it). Never blocks: a
 * receiver that does not read gives -EAGAIN. 0 or -errno. */
int pl__notify_send(const char *address, const char *state);

/* Send state to $NOTIFY_SOCKET. 1 when sent, 0 when the variable is unset or
 * empty (not started by systemd), -errno on failure. */
int pl__notify(const char *state);

#endif
