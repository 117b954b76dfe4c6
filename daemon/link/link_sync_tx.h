/* The synchronous baseline sender (--sync): a message goes out as blocking
 * write(2)s of write_bytes each (32 KiB by default), the way a link without
 * AIO does it. Kept only so that benchmarks can compare the AIO sender with
 * it in the same run; nothing else uses it.
 *
 * It has the weaknesses the AIO sender exists to avoid: the caller waits
 * inside each transfer until the host took every byte, each write holds the
 * endpoint's only request, and a signal during a write can return EINTR on
 * kernels that already sent the data (the retry then sends it twice). */
#ifndef PL_DAEMON_LINK_SYNC_TX_H
#define PL_DAEMON_LINK_SYNC_TX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Write the pieces as consecutive writes of at most write_bytes, through
 * bounce (at least write_bytes long). 0 or -errno. *write_ns gets the time
 * spent inside write(2). */
int pl__sync_tx_send(int ep_fd, const struct iovec *iov, int iovcnt, size_t write_bytes,
		     uint8_t *bounce, uint64_t *write_ns);

#endif
