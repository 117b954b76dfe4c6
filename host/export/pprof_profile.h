/* The render sampler's stacks (recording.h: windows, stacks, functions)
 * as pprof profiles: github.com/google/pprof's proto/profile.proto,
 * written with protobuf_writer.h and gzipped (zlib), which is the form
 * `go tool pprof` and its web UI read.
 *
 * Sample types samples/count and cpu/nanoseconds (count times the
 * window's sampling period; 0 for a window that did not say its period),
 * one location per function (the device sends names, not addresses), with
 * the file:line the device gave for the function's hottest innermost line
 * and a mapping per module it named (with the module's build-id where the
 * windows listed one). Each sample is labelled with the
 * process's pid and comm. */
#ifndef PL_HOST_PPROF_PROFILE_H
#define PL_HOST_PPROF_PROFILE_H

#include <stddef.h>
#include <stdio.h>

struct pl_recording;

/* Every window of the recording in one profile. 0 or -errno (-ENOMEM,
 * -EIO). For pl__atomic_file_write: recording is a struct pl_recording. */
int pl__pprof_write_merged(FILE *out, const void *recording);

struct pl_pprof_window {
	const struct pl_recording *r;
	size_t window; /* index into r->windows */
};
/* One window. ctx is a struct pl_pprof_window. 0 or -errno. */
int pl__pprof_write_window(FILE *out, const void *ctx);

#endif
