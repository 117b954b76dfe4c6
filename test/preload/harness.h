/* Test-side helpers for the preload suite: run a program with a chosen
 * environment and capture what it prints; read the shim's JSON-line
 * reports back through common/json_reader.h. Test code: aborts on
 * allocation failure. */
#ifndef PL_TEST_PRELOAD_HARNESS_H
#define PL_TEST_PRELOAD_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define H_OUT_MAX (256 * 1024)

struct h_run {
	int status;      /* exit status, or 128 + signal */
	char *out, *err; /* NUL-terminated, at most H_OUT_MAX */
};

/* Run argv[0] with the environment of this process minus LD_PRELOAD and
 * PERFLINK_*, plus env ("K=V" strings, NULL-terminated; NULL for none).
 * 0, or -errno if it could not be run. */
int h_run(struct h_run *r, char *const argv[], const char *const env[]);
void h_run_free(struct h_run *r);

/* Print text as TAP diagnostics: "# " before every line. */
void h_diag(const char *text);

/* text on one line (newlines as " / "), at most 200 bytes, for a TAP
 * description; static storage, overwritten by the next call. */
const char *h_oneline(const char *text);

/* How often needle occurs in haystack. */
unsigned h_count(const char *haystack, const char *needle);

/* A fresh directory under $TMPDIR (or /tmp), its path in out. */
int h_tempdir(char *out, size_t cap, const char *tag);
int h_write_file(const char *path, const char *text);
/* Whole files: test/read_file.h. */
bool h_exists(const char *path);
/* Remove a directory and everything under it. */
void h_rmdir(const char *dir);

/* One report: the (dotted path, value) pairs of its JSON object. */
struct h_kv {
	char *path, *value;
};
struct h_report {
	struct h_kv *kv;
	size_t n, cap;
};
struct h_reports {
	struct h_report *r;
	size_t n;
	bool all_ok; /* every line was one JSON object ending in a newline */
};

/* Read a JSON-lines file of reports; a missing file is zero reports. */
void h_reports_load(struct h_reports *rs, const char *path);
void h_reports_free(struct h_reports *rs);
const char *h_get(const struct h_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The unsigned integer at a path; UINT64_MAX when absent or not one. */
uint64_t h_u64(const struct h_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The index of a stage in r's "stages" array, or -1. */
int h_stage(const struct h_report *r, const char *name);
/* A stage's field, UINT64_MAX when the stage or field is absent (a stage
 * with no calls is absent from a report). */
uint64_t h_stage_u64(const struct h_report *r, const char *stage, const char *field);
/* The last report of pid (0: of anyone), or NULL. */
const struct h_report *h_last(const struct h_reports *rs, uint64_t pid);

#endif
