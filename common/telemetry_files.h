/* The device's telemetry lines as files, one per "type", as perflink-host
 * --out and perflinkd's recorder (--record-dir) write them: DIR/<type>.jsonl
 * (link_diag.jsonl, stall.jsonl, perflink-profile.jsonl, ...; the resource
 * sampler's "header" and "sample" lines both go to resources.jsonl).
 *
 * A type name comes from the wire, so it is hostile: only [a-z0-9_-], 1 to
 * PL_TELEMETRY_TYPE_MAX characters, becomes a file name; anything else, a
 * line without a type, and types beyond the first PL_TELEMETRY_FILES_MAX
 * distinct ones go to other.jsonl. Files are opened relative to the
 * directory (O_NOFOLLOW) and truncated when first opened in a run. */
#ifndef PL_COMMON_TELEMETRY_FILES_H
#define PL_COMMON_TELEMETRY_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PL_TELEMETRY_TYPE_MAX 40
#define PL_TELEMETRY_FILES_MAX 32

struct pl_telemetry_file {
	char name[PL_TELEMETRY_TYPE_MAX + 1];
	FILE *f;
};

struct pl_telemetry_files {
	int dir_fd;
	struct pl_telemetry_file files[PL_TELEMETRY_FILES_MAX + 1]; /* + other */
	size_t n;
	uint64_t lines, write_errors;
};

/* The file a type's lines belong in, without ".jsonl": "resources" for
 * header and sample, the type itself when it is a safe name, else
 * "other". type may be NULL (no type). */
const char *pl__telemetry_file_for(const char *type);
/* dir must exist. 0 or -errno. */
int pl__telemetry_files_open(struct pl_telemetry_files *tf, const char *dir);
/* Append one line (without its newline; one is added) to the file for
 * type. 0 or -errno (counted in write_errors). */
int pl__telemetry_files_write(struct pl_telemetry_files *tf, const char *type, const char *line,
			      size_t len);
void pl__telemetry_files_flush(struct pl_telemetry_files *tf);
void pl__telemetry_files_close(struct pl_telemetry_files *tf);

#endif
