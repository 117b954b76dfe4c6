/* See link_sync_tx.h. */
#include "link_sync_tx.h"
#include "clock.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static int write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue; /* the naive retry the baseline stands for */
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int pl__sync_tx_send(int ep_fd, const struct iovec *iov, int iovcnt, size_t write_bytes,
		     uint8_t *bounce, uint64_t *write_ns)
{
	size_t fill = 0, off = 0;
	uint64_t spent = 0;
	int i = 0, err;

	while (i < iovcnt) {
		size_t n = iov[i].iov_len - off;

		if (n > write_bytes - fill)
			n = write_bytes - fill;
		memcpy(bounce + fill, (const uint8_t *)iov[i].iov_base + off, n);
		fill += n;
		off += n;
		if (off == iov[i].iov_len) {
			i++;
			off = 0;
		}
		if (fill == write_bytes || i == iovcnt) {
			uint64_t t0 = pl__mono_ns();

			err = write_all(ep_fd, bounce, fill);
			spent += pl__mono_ns() - t0;
			if (err < 0)
				return err;
			fill = 0;
		}
	}
	/* a message that fills its last packet ends with a zero-length
	 * packet, as the AIO sender does */
	if (write(ep_fd, bounce, 0) < 0 && errno != EINTR)
		return -errno;
	*write_ns = spent;
	return 0;
}
