/* The USB descriptors and strings perflinkd writes to FunctionFS ep0: one
 * vendor-specific interface with one bulk IN and one bulk OUT endpoint, for
 * full, high and SuperSpeed, in the V2 descriptor format. */
#ifndef PL_DAEMON_LINK_FFS_DESC_H
#define PL_DAEMON_LINK_FFS_DESC_H

#include <stddef.h>

/* The blobs, ready to write(2) to ep0: descriptors first, then strings. */
const void *pl__ffs_descriptors(size_t *len);
const void *pl__ffs_strings(size_t *len);

#endif
