/* The stage table: which calls are measured, and under what name.
 *
 * A rule maps (device path pattern, ioctl request code) to a stage; a stage
 * has a name, a kind and possibly the frame-boundary mark. Built-in rules
 * cover V4L2, dma-buf sync and the legacy ION and KGSL cache ioctls; a
 * stage file (docs/stages.md) adds vendor rules, which win over built-in
 * ones for the same code.
 *
 * The table is built once by the constructor and only read afterwards, so
 * the hooks read it without synchronisation. A lookup for a code no rule
 * names costs a hash and one or two compares. */
#ifndef PL_PRELOAD_STAGES_H
#define PL_PRELOAD_STAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PL_MAX_STAGES 64
#define PL_MAX_RULES 160
#define PL_MAX_PATTERNS 28 /* one bit each in the fd table */
#define PL_PATTERN_MAX 128
#define PL_STAGE_NAME_MAX 32
#define PL_WAIT_SUFFIX ".wait" /* a dequeue or wait stage's poll-wait companion */
#define PL_HASH_SLOTS 512 /* power of two, well above PL_MAX_RULES */

enum pl_stage_kind {
	PL_KIND_SUBMIT,
	PL_KIND_WAIT,
	PL_KIND_DEQUEUE,
	PL_KIND_QUEUE,
	PL_KIND_CACHE,
	PL_KIND_OTHER,
	PL_KIND_COUNT
};

/* What the hook reads from a successful call's argument, beyond timing. */
enum pl_special {
	PL_SPECIAL_NONE,
	PL_SPECIAL_V4L2_DQBUF,  /* frame boundary (capture queues), stream bytes */
	PL_SPECIAL_V4L2_FMT,    /* learns whether an fd's capture queue is compressed */
	PL_SPECIAL_DMABUF_SYNC, /* cache bytes: the dma-buf's size */
	PL_SPECIAL_ION_SYNC,    /* cache bytes: the size of the buffer named by fd */
	PL_SPECIAL_KGSL_SYNC_CACHE, /* cache bytes: length of a ranged sync */
	PL_SPECIAL_KGSL_GPUOBJ_SYNC, /* cache bytes: the sum over the objects */
};

/* A byte count read from the call's argument: width 0 means none. */
struct pl_extract {
	uint16_t offset;
	uint8_t width; /* 1, 2, 4 or 8 bytes, native byte order */
	uint8_t within_ioc; /* inside the size the request code declares */
};

struct pl_stage {
	char name[PL_STAGE_NAME_MAX];
	uint8_t kind;     /* enum pl_stage_kind */
	bool boundary;    /* a successful call completes a frame */
	bool from_config; /* declared in the stage file */
	unsigned line;    /* where the file first names it; 0: built in */
	/* 1 + the index of this stage's companion "NAME.wait", which times the
	 * thread's waits in poll, select and epoll for this stage's device
	 * (waits.h); 0: none (not a dequeue or wait stage, or no room) */
	uint8_t wait_stage;
};

struct pl_rule {
	uint32_t code;        /* the request, as the kernel sees it (32 bits) */
	uint32_t pattern_bit; /* 0: any fd */
	uint16_t stage;
	uint8_t special;      /* enum pl_special */
	bool from_config;
	struct pl_extract cache_bytes, stream_bytes;
};

struct pl_stage_table {
	struct pl_stage stage[PL_MAX_STAGES];
	unsigned n_stages;
	struct pl_rule rule[PL_MAX_RULES]; /* sorted by code, config rules first */
	unsigned n_rules;
	char pattern[PL_MAX_PATTERNS][PL_PATTERN_MAX];
	unsigned n_patterns;
	bool explicit_boundary; /* the stage file named one: V4L2's default is off */
	int cacheflush_stage;   /* the MIPS cacheflush(2) stage, -1 if none */
	struct {
		uint32_t code;
		uint16_t first;
		uint8_t count;
		uint8_t used;
	} hash[PL_HASH_SLOTS];
};

extern struct pl_stage_table pl__stages;

/* Build the table: built-in rules plus those of the stage file at path
 * (NULL or "": none). On a bad file, "path:line: what" goes to err and
 * -EINVAL (or -errno when it cannot be read) is returned; the table is then
 * unusable and the shim stays dormant. Not for the hot path: reads a file. */
int pl__stages_build(const char *path, char *err, size_t errlen);
/* The same from text[0..len) (NUL-terminated, cut in place), named name in
 * messages: for the fuzz target. */
int pl__stages_build_text(const char *name, char *text, size_t len, char *err, size_t errlen);

/* Used by the parser in stages_file.c and by the built-ins. */
/* line: the stage file's line, 0 for a built-in stage. */
int pl__stages_add_stage(const char *name, enum pl_stage_kind kind, unsigned line,
			 char *err, size_t errlen);
int pl__stages_add_pattern(const char *pattern, uint32_t *bit, char *err, size_t errlen);
int pl__stages_add_rule(const struct pl_rule *r, char *err, size_t errlen);
int pl__stages_find(const char *name);
/* The stage file names a frame boundary (resolved once all stages exist). */
int pl__stages_want_boundary(const char *name, unsigned line, char *err, size_t errlen);
const char *pl__kind_name(enum pl_stage_kind kind);
int pl__kind_parse(const char *s, enum pl_stage_kind *out);

/* The built-in rules (builtin.c). */
int pl__stages_add_builtins(char *err, size_t errlen);
/* The stage file (stages_file.c): read path, or parse text[0..len) (which
 * must be followed by a NUL; lines are cut in place) with path only naming
 * it in messages. */
int pl__stages_load_file(const char *path, char *err, size_t errlen);
int pl__stages_parse_text(const char *path, char *text, size_t len, char *err, size_t errlen);

/* The first rule for code, and how many rules (with different patterns)
 * follow it; NULL when no rule names code. Hot path. */
static inline const struct pl_rule *pl__stages_lookup(uint32_t code, unsigned *count)
{
	uint32_t h = (code * 2654435761u) >> 23; /* 9 bits: PL_HASH_SLOTS */

	for (;;) {
		if (!pl__stages.hash[h].used)
			return NULL;
		if (pl__stages.hash[h].code == code) {
			*count = pl__stages.hash[h].count;
			return &pl__stages.rule[pl__stages.hash[h].first];
		}
		h = (h + 1) & (PL_HASH_SLOTS - 1);
	}
}

/* Shell-style match of '*' and '?' (no classes), allocation-free. */
bool pl__glob_match(const char *pattern, const char *s);

#endif
