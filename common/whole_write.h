/* Writing a record (a JSON line, a CSV row) to a file whole or not at all.
 * A full disk, a quota or a file size limit can take part of a write: the
 * file would then end in half a line, which every reader of the format
 * trips over, and the next record would be glued to it. pl__write_record
 * writes all of it, or truncates the file back to where the record began
 * and returns why it could not. For files that only this process appends
 * to (the daemon's and the tools' outputs). */
#ifndef PL_COMMON_WHOLE_WRITE_H
#define PL_COMMON_WHOLE_WRITE_H

#include <stddef.h>
#include <sys/types.h>

/* 0, or -errno with nothing of the record left in the file. */
int pl__write_record(int fd, const void *buf, size_t len);
/* The same for a file several processes append to (O_APPEND: the preload
 * library's reports of every process it is in): under an exclusive flock
 * for the record's time, so that taking back a partial record cannot cut
 * another process's record, which every writer of the file must take too.
 * A record that would pass the process's RLIMIT_FSIZE is not written
 * (-EFBIG): writing it would raise SIGXFSZ, whose default kills the
 * process, and the process here is somebody else's program. */
int pl__append_record(int fd, const void *buf, size_t len);
/* The file's length, for pl__truncate_to after a record that was not whole
 * (stdio writers, whose records reach the file in their own time); -1 if
 * it cannot be known. */
off_t pl__file_length(int fd);
/* Back to length bytes (a length from pl__file_length); 0 or -errno. */
int pl__truncate_to(int fd, off_t length);

#endif
