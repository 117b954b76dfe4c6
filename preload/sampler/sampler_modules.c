/* The loaded modules' segments, for the walk on the sampler thread.
 *
 * The walk reads a module's unwind tables and code (sampler_unwind.c).
 * It does that only inside dl_iterate_phdr's callback: glibc removes a
 * closed library from the list and unmaps it under the same lock
 * (dl_load_write_lock, _dl_close_worker), so whatever the list shows
 * stays mapped until the callback returns; musl never unmaps on dlclose.
 * The table is rebuilt inside that callback when the loader's counters
 * (dlpi_adds, dlpi_subs) moved, so it always describes what is mapped.
 *
 * Anonymous executable mappings (a JIT's code) are not modules: they are
 * sampler_anon_code.c's. */
#include "sampler.h"
#include "real.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_SEGMENTS 4096

struct segment {
	uintptr_t lo, hi;
	uintptr_t load_base, eh_frame_hdr;
	bool readable, executable;
};

static struct segment segs[MAX_SEGMENTS];

/* The modules' code, by name, and what was unloaded since: a sample taken
 * just before a dlclose and named just after it still gets its module's
 * name and offset (glmark2 closes libGL as it exits, and the last window
 * is written after that). */
#define MAX_TEXTS 1024
#define MAX_GONE 64
#define TEXT_NAME_MAX 48

struct text {
	uintptr_t lo, hi, load_base;
	char name[TEXT_NAME_MAX]; /* the file's base name */
};

static struct text texts[MAX_TEXTS], prev_texts[MAX_TEXTS];
static int n_texts, n_prev_texts;
static struct text gone[MAX_GONE]; /* a ring, newest at gone_next - 1 */
static unsigned gone_next;
static int n_segs;
static bool table_built;
static unsigned long generation;
static unsigned long long seen_adds, seen_subs;

struct hold {
	void (*fn)(void *);
	void *arg;
	bool ran;
};

static int add_module(struct dl_phdr_info *info, size_t size, void *unused)
{
	uintptr_t hdr = 0;
	int i, first = n_segs;

	(void)size;
	(void)unused;
	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
	}
	for (i = 0; i < info->dlpi_phnum && n_segs < MAX_SEGMENTS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		struct segment *s;

		if (ph->p_type != PT_LOAD || ph->p_memsz == 0)
			continue;
		s = &segs[n_segs++];
		s->lo = info->dlpi_addr + ph->p_vaddr;
		s->hi = s->lo + ph->p_memsz;
		s->load_base = info->dlpi_addr;
		s->readable = (ph->p_flags & PF_R) != 0;
		s->executable = (ph->p_flags & PF_X) != 0;
		if (s->executable && n_texts < MAX_TEXTS) {
			const char *name = info->dlpi_name ? info->dlpi_name : "";
			const char *slash = strrchr(name, '/');
			struct text *t = &texts[n_texts++];

			t->lo = s->lo;
			t->hi = s->hi;
			t->load_base = s->load_base;
			snprintf(t->name, sizeof(t->name), "%s", slash ? slash + 1 : name);
		}
	}
	for (i = first; i < n_segs; i++)
		segs[i].eh_frame_hdr = hdr;
	return 0;
}

/* Shell sort by start address, in place: qsort may call malloc, and
 * this runs under the loader's lock (a heap profiler's allocator that
 * walks stacks takes the two the other way round). */
static void sort_segments(void)
{
	static const int gaps[] = { 701, 301, 132, 57, 23, 10, 4, 1 };
	size_t g;
	int i, j;

	for (g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++) {
		for (i = gaps[g]; i < n_segs; i++) {
			struct segment t = segs[i];

			for (j = i; j >= gaps[g] && segs[j - gaps[g]].lo > t.lo; j -= gaps[g])
				segs[j] = segs[j - gaps[g]];
			segs[j] = t;
		}
	}
}

/* Inside the outer callback: glibc's lock is recursive and musl holds
 * none across callbacks, so the nested walk sees the same list. */
/* What the last table had and this one has not: gone. */
static void note_gone(void)
{
	int i, k;

	for (i = 0; i < n_prev_texts; i++) {
		const struct text *p = &prev_texts[i];

		for (k = 0; k < n_texts; k++) {
			if (texts[k].lo == p->lo && texts[k].load_base == p->load_base &&
			    strcmp(texts[k].name, p->name) == 0)
				break;
		}
		if (k == n_texts && p->name[0])
			gone[gone_next++ % MAX_GONE] = *p;
	}
}

static void rebuild(void)
{
	memcpy(prev_texts, texts, (size_t)n_texts * sizeof(texts[0]));
	n_prev_texts = n_texts;
	n_segs = 0;
	n_texts = 0;
	dl_iterate_phdr(add_module, NULL);
	note_gone();
	sort_segments();
	table_built = true;
	generation++;
}

static int hold_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct hold *h = arg;
	bool counted = size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs);

	if (!counted || !table_built || info->dlpi_adds != seen_adds ||
	    info->dlpi_subs != seen_subs) {
		rebuild();
		if (counted) {
			seen_adds = info->dlpi_adds;
			seen_subs = info->dlpi_subs;
		}
	}
	h->fn(h->arg);
	h->ran = true;
	return 1; /* the first module is enough: the lock is what was wanted */
}

int pl__modules_hold(void (*fn)(void *arg), void *arg)
{
	struct hold h = { fn, arg, false };

	dl_iterate_phdr(hold_cb, &h);
	return h.ran ? 0 : -ENOENT;
}

static const struct segment *segment_of(uintptr_t addr)
{
	int lo = 0, hi = n_segs - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (addr < segs[mid].lo)
			hi = mid - 1;
		else if (addr >= segs[mid].hi)
			lo = mid + 1;
		else
			return &segs[mid];
	}
	return NULL;
}

bool pl__modules_text_of(uintptr_t pc, struct pl_module_text *out)
{
	const struct segment *s = segment_of(pc);

	if (!s || !s->executable)
		return false;
	out->lo = s->lo;
	out->hi = s->hi;
	out->eh_frame_hdr = s->eh_frame_hdr;
	out->load_base = s->load_base;
	return true;
}

bool pl__modules_readable(uintptr_t addr, size_t len)
{
	const struct segment *s = segment_of(addr);

	return s && s->readable && len <= s->hi - addr;
}

bool pl__modules_gone_name(uintptr_t pc, char *out, size_t cap)
{
	unsigned i, n = gone_next < MAX_GONE ? gone_next : MAX_GONE;

	for (i = 1; i <= n; i++) {
		const struct text *g = &gone[(gone_next - i) % MAX_GONE];

		if (pc >= g->lo && pc < g->hi) {
			snprintf(out, cap, "%s+%#lx", g->name, (unsigned long)(pc - g->load_base));
			return true;
		}
	}
	return false;
}

unsigned long pl__modules_generation(void)
{
	return generation;
}
