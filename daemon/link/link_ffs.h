/* A FunctionFS function: writes the descriptors and strings to ep0, follows
 * ep0's events, and opens the bulk endpoints only once the host enabled the
 * configuration (before ENABLE an endpoint either blocks or completes every
 * request with -EAGAIN; rig-notes.md).
 *
 * Driven from an event loop: watch pl__ffs_ep0_fd for EPOLLIN and call
 * pl__ffs_handle_ep0. ENABLE and DISABLE reach the owner through callbacks;
 * between them the endpoint fds are valid. Not thread-safe. */
#ifndef PL_DAEMON_LINK_FFS_H
#define PL_DAEMON_LINK_FFS_H

#include <stdbool.h>
#include <stdint.h>

struct pl_ffs;

struct pl_ffs_events {
	/* The host configured us: ep_in/ep_out are open (O_RDWR, O_NONBLOCK
	 * off; AIO does not need it) and packet_size is the bulk IN
	 * endpoint's wMaxPacketSize at the speed the link came up at. */
	void (*enable)(void *ctx, int ep_in, int ep_out, unsigned packet_size);
	/* Disabled, unbound or suspended-then-reset: stop using the endpoint
	 * fds now; they are closed right after this returns. */
	void (*disable)(void *ctx, const char *why);
};

struct pl_ffs_counters {
	uint64_t binds, unbinds, enables, disables, setups, suspends, resumes;
	uint64_t stalled_setups, unknown_events;
};

/* mount_dir: where the functionfs instance is mounted (ep0 lives there). */
int pl__ffs_open(struct pl_ffs **out, const char *mount_dir,
		 const struct pl_ffs_events *ev, void *ctx);
int pl__ffs_ep0_fd(const struct pl_ffs *f);
/* Read and act on every pending ep0 event. 0, or -errno when ep0 failed
 * (the function must then be closed and opened again). */
int pl__ffs_handle_ep0(struct pl_ffs *f);
bool pl__ffs_enabled(const struct pl_ffs *f);
void pl__ffs_get_counters(const struct pl_ffs *f, struct pl_ffs_counters *out);
/* Close the endpoints now, as a DISABLE would (the disable callback runs if
 * they were open), keeping ep0: before perflinkd unbinds the gadget
 * itself, so that nothing is submitted to an endpoint going away. The
 * events that follow find them closed already. */
void pl__ffs_drop_endpoints(struct pl_ffs *f, const char *why);
/* Close the endpoints (calling disable if enabled) and ep0. NULL is fine. */
void pl__ffs_close(struct pl_ffs *f);

#endif
