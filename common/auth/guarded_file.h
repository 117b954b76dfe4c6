/* Reading a file that decides who is trusted (the link's pre-shared key,
 * its TLS certificate, private key and CA) so that nobody else could have
 * put it there: a regular file, not a symbolic link (O_NOFOLLOW), owned by
 * the caller or root, not writable by group or others, and for a secret
 * not readable by them either. Opened without blocking (a FIFO in its
 * place cannot hang the start) and read whole from the one descriptor that
 * was checked, so nothing can swap it between the check and the read. */
#ifndef PL_COMMON_GUARDED_FILE_H
#define PL_COMMON_GUARDED_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The file's bytes into buf (min_bytes to cap of them) and their count in
 * *len. 0, or -errno with the reason in err ("PATH: why", for the caller
 * to say with its option's name). */
int pl__guarded_file_read(const char *path, bool secret, size_t min_bytes, uint8_t *buf,
			  size_t cap, size_t *len, char *err, size_t err_len);

#endif
