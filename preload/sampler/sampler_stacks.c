/* The window's stacks and their ranking, on the sampler thread.
 *
 * Identical stacks are counted once in a bounded open-addressed table keyed
 * by the XXH3 hash of their addresses (a stack that finds the table full
 * is counted as overflow, never grows memory). Names come at report time,
 * once per distinct address, from dladdr (the dynamic symbol table), then
 * from the full symbol table and the line table through libdw when the
 * build has it (sampler_lines.c). A function neither can name (stripped)
 * is shown as module+offset. Return addresses are looked up one byte back, so a call
 * at the end of a function is not credited to the next one. */
#include "sampler.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#define STACK_SLOTS PL_STACK_SLOTS /* power of two; ~800 KiB */
#define NAME_SLOTS 8192u  /* power of two: distinct addresses in a window */
#define NAME_MAX_LEN 128
#define SYMBOL_FULL_MAX 1024 /* a mangled name, before it is demangled and cut */

struct stack {
	uint64_t hash;
	uint64_t count;
	uint32_t depth; /* 0: free slot */
	uint32_t idle;
	uintptr_t ip[PL_STACK_DEPTH];
};

/* One distinct address: its function's name and its own ("line") name. */
struct site {
	uintptr_t ip; /* 0: free */
	int func;     /* index into funcs */
	bool innermost; /* line is the source line (only innermost pcs need it) */
	char line[NAME_MAX_LEN];
};

struct func {
	char name[NAME_MAX_LEN];
	uint64_t inclusive, self;
	uint64_t mark; /* the stack that last counted it inclusively */
};

static struct stack *stacks;
static struct site *sites;
static struct func *funcs;
static size_t n_funcs;
static struct pl_count *out_incl, *out_self, *out_lines;
static uint64_t samples, idle, overflow, cut_short;

int pl__stacks_init(void)
{
	stacks = calloc(STACK_SLOTS, sizeof(*stacks));
	sites = calloc(NAME_SLOTS, sizeof(*sites));
	/* one function a site at most, and the name for the crowd */
	funcs = calloc(NAME_SLOTS + 1, sizeof(*funcs));
	out_incl = calloc(NAME_SLOTS + 1, sizeof(*out_incl));
	out_self = calloc(NAME_SLOTS + 1, sizeof(*out_self));
	out_lines = calloc(STACK_SLOTS, sizeof(*out_lines));
	if (!stacks || !sites || !funcs || !out_incl || !out_self || !out_lines)
		return -ENOMEM;
	return 0;
}

void pl__stacks_reset(void)
{
	memset(stacks, 0, STACK_SLOTS * sizeof(*stacks));
	memset(sites, 0, NAME_SLOTS * sizeof(*sites));
	n_funcs = 0;
	samples = idle = overflow = cut_short = 0;
	pl__window_modules_reset();
}

void pl__stacks_totals(uint64_t *s, uint64_t *i, uint64_t *o, uint64_t *c)
{
	*s = samples;
	*i = idle;
	*o = overflow;
	*c = cut_short;
}

struct site;
static struct site *site_of(uintptr_t ip, bool innermost, uint64_t taken_ns);

int pl__stacks_add(const struct pl_stack_sample *s)
{
	uint32_t depth = s->depth < PL_STACK_DEPTH ? s->depth : PL_STACK_DEPTH;
	uint64_t h;
	uint32_t i, d, probe;

	samples++;
	cut_short += s->cut_short != 0;
	if (s->idle) {
		idle++;
		return -1;
	}
	if (depth == 0) {
		overflow++;
		return -1;
	}
	h = XXH3_64bits(s->ip, depth * sizeof(s->ip[0]));
	for (probe = 0, i = (uint32_t)h & (STACK_SLOTS - 1); probe < STACK_SLOTS / 4;
	     probe++, i = (i + 1) & (STACK_SLOTS - 1)) {
		struct stack *e = &stacks[i];

		if (e->depth == 0) {
			e->hash = h;
			e->depth = depth;
			memcpy(e->ip, s->ip, depth * sizeof(s->ip[0]));
			e->count = 1;
			/* named now, not when the window is written: a library the
			 * program unloads meanwhile (glmark2 closes libGL before it
			 * exits) would leave only addresses */
			for (d = 0; d < depth; d++)
				site_of(e->ip[d], d == 0, s->taken_ns);
			return (int)i;
		}
		if (e->hash == h && e->depth == depth &&
		    memcmp(e->ip, s->ip, depth * sizeof(s->ip[0])) == 0) {
			e->count++;
			return (int)i;
		}
	}
	overflow++;
	return -1;
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : (path && *path ? path : "?");
}

static int func_index(const char *name)
{
	size_t i;

	/* few distinct functions a window: a linear search is cheaper than
	 * another table, and runs once per distinct address */
	for (i = 0; i < n_funcs; i++) {
		if (strcmp(funcs[i].name, name) == 0)
			return (int)i;
	}
	if (n_funcs == NAME_SLOTS + 1)
		return -1;
	snprintf(funcs[n_funcs].name, sizeof(funcs[n_funcs].name), "%s", name);
	funcs[n_funcs].inclusive = funcs[n_funcs].self = 0;
	funcs[n_funcs].mark = 0;
	return (int)n_funcs++;
}

/* dladdr's strings live in the object's mapping and the loader's heap: a
 * dlclose on another thread between dladdr and reading them would leave
 * them dangling (a soak hit it). So the object is first found under the
 * loader's lock (dl_iterate_phdr), then held with dlopen(RTLD_NOLOAD)
 * while dladdr's answer is used, and that answer must be the same object.
 * Every object the loader names by a path is held, relative paths too (a
 * program that dlopens "plugins/libx.so" gets that name back, and dlopen
 * finds the loaded object by it); the program itself ("") and the vdso
 * (a bare name) are never unloaded: not held. */
struct module_find {
	uintptr_t pc, base;
	uintptr_t map_start; /* its lowest segment's page: dladdr's dli_fbase */
	bool found;
	char name[PATH_MAX];
	struct pl_window_module *module; /* its build-id, read while it is held still */
};

/* Where the loader mapped the module from: its lowest PT_LOAD's page.
 * That is dladdr's dli_fbase (glibc's l_map_start, musl's map), which is
 * the load bias only where the file is linked at 0 (shared libraries,
 * PIE): a program linked at 0x400000 has bias 0. */
static uintptr_t lowest_page(const struct dl_phdr_info *info)
{
	uintptr_t low = UINTPTR_MAX, page = (uintptr_t)sysconf(_SC_PAGESIZE);
	int i;

	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_vaddr < low)
			low = info->dlpi_phdr[i].p_vaddr;
	if (low == UINTPTR_MAX)
		return info->dlpi_addr;
	return info->dlpi_addr + (low & ~(page - 1));
}

static int module_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct module_find *m = arg;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && m->pc >= lo && m->pc < lo + ph->p_memsz) {
			m->found = true;
			m->base = info->dlpi_addr;
			m->map_start = lowest_page(info);
			snprintf(m->name, sizeof(m->name), "%s", info->dlpi_name ? info->dlpi_name : "");
			m->module = pl__window_module_note(info);
			return 1;
		}
	}
	return 0;
}

/* Set by pl__stacks_exiting: from the exit handlers on, objects are not
 * held open to be named. During _dl_fini a dlopen, even RTLD_NOLOAD, of an
 * object whose destructors already ran initialises it again: for this
 * library that re-ran its constructor and replaced the sampler's tables
 * under the window being written (a crash at exit, about one run in two). */
static bool exiting;

void pl__stacks_exiting(void)
{
	exiting = true;
}

void pl__stacks_names_refresh(void)
{
	pl__lines_refresh(); /* libraries loaded since the last look */
	pl__demangle_window();
}

/* dladdr for pc with its object held; *pin to dlclose after use (may be
 * NULL), *module its entry in the window's modules, *bias its load bias.
 * False: no object there (any more); m->found then says whether the loader
 * still listed one, with its name and base: an object being unloaded (a
 * dlclose running its destructors, under the loader's lock: the dlopen
 * that would hold it waits for the close, then finds nothing). */
static bool dladdr_held(uintptr_t pc, Dl_info *info, void **pin, struct pl_window_module **module,
			uintptr_t *bias, struct module_find *m)
{
	const ElfW(Sym) *sym = NULL;

	memset(m, 0, sizeof(*m));
	m->pc = pc;
	*pin = NULL;
	dl_iterate_phdr(module_cb, m);
	if (!m->found)
		return false;
	if (strchr(m->name, '/') && !exiting) {
		*pin = dlopen(m->name, RTLD_LAZY | RTLD_NOLOAD);
		if (!*pin)
			return false; /* unloaded since */
	}
	if (dladdr1((void *)pc, info, (void **)&sym, RTLD_DL_SYMENT) != 0 &&
	    ((uintptr_t)info->dli_fbase == m->base || (uintptr_t)info->dli_fbase == m->map_start)) {
		/* dladdr gives the nearest exported symbol below pc, even
		 * where pc is past its end (a static function after it, or
		 * code of a stripped library): a name only when pc lies inside */
		if (info->dli_sname && sym && sym->st_size > 0 &&
		    pc - (uintptr_t)info->dli_saddr >= sym->st_size) {
			info->dli_sname = NULL;
			info->dli_saddr = NULL;
		}
		*module = m->module;
		*bias = m->base;
		return true;
	}
	if (*pin)
		dlclose(*pin);
	*pin = NULL;
	return false;
}

/* Name the address (pc exactly for the innermost frame, else a return
 * address) of a sample taken at taken_ns (CLOCK_MONOTONIC; 0 when not
 * known). */
static struct site *site_of(uintptr_t ip, bool innermost, uint64_t taken_ns)
{
	uintptr_t look = innermost ? ip : ip - 1;
	uint64_t h = XXH3_64bits(&ip, sizeof(ip));
	uint32_t i, probe;
	struct site *s = NULL;
	char fname[NAME_MAX_LEN];
	bool held;
	Dl_info info;
	void *pin;
	struct pl_window_module *module = NULL;
	uintptr_t bias = 0;
	struct module_find listed;

	for (probe = 0, i = (uint32_t)h & (NAME_SLOTS - 1); probe < NAME_SLOTS / 2;
	     probe++, i = (i + 1) & (NAME_SLOTS - 1)) {
		if (sites[i].ip == ip && (sites[i].innermost || !innermost))
			return &sites[i];
		if (sites[i].ip == ip || sites[i].ip == 0) {
			s = &sites[i];
			break;
		}
	}
	if (!s) {
		/* more distinct addresses than names kept: still counted, under
		 * one name, rather than losing the window */
		static struct site crowded;

		crowded.func = func_index("[too many distinct addresses]");
		snprintf(crowded.line, sizeof(crowded.line), "[too many distinct addresses]");
		return &crowded;
	}
	memset(&info, 0, sizeof(info));
	held = dladdr_held(look, &info, &pin, &module, &bias, &listed);
	if (!held && listed.found) {
		/* being unloaded: its name and offset, as for one unloaded
		 * since (a driver's libLLVM runs its destructors for a while
		 * inside eglTerminate's dlclose) */
		snprintf(fname, sizeof(fname), "%.*s+%#lx", NAME_MAX_LEN / 2, base_name(listed.name),
			 (unsigned long)(look - listed.base));
		snprintf(s->line, sizeof(s->line), "%s", fname);
		if (listed.module)
			pl__window_module_use(listed.module, base_name(listed.name));
	} else if (!held && pl__anon_code(look, taken_ns)) {
		/* a JIT's code (llvmpipe's shaders): one name for all of it, so
		 * that its addresses make one tower, not hundreds */
		snprintf(fname, sizeof(fname), "[anonymous code]");
		snprintf(s->line, sizeof(s->line), "[anonymous code] %#lx", (unsigned long)look);
	} else if (!held && pl__modules_gone_name(look, fname, sizeof(fname))) {
		/* unloaded since the sample: its module and offset, no symbol */
		snprintf(s->line, sizeof(s->line), "%s", fname);
	} else if (!held) {
		snprintf(fname, sizeof(fname), "[unknown] %#lx", (unsigned long)ip);
		snprintf(s->line, sizeof(s->line), "%#lx", (unsigned long)look);
	} else {
		const char *mod = base_name(info.dli_fname);
		/* less the load bias, not dli_fbase: an address in the file's
		 * own vaddr space, which the host's symbolisation reads the
		 * file's symbols and DWARF in (they differ for a program not
		 * linked at 0) */
		unsigned long moff = (unsigned long)(look - bias);
		char sym[NAME_MAX_LEN / 2], where[NAME_MAX_LEN / 2], full[SYMBOL_FULL_MAX];
		const char *raw = info.dli_sname;
		bool named = raw != NULL;

		/* the dynamic symbol table first; then the full one (static
		 * functions), when libdw can read it; the whole name either way,
		 * cut only once it is demangled */
		if (!named && (named = pl__symbol_of(look, full, sizeof(full))))
			raw = full;
		if (named)
			pl__demangle(raw, sym, sizeof(sym));
		if (named)
			snprintf(fname, sizeof(fname), "%s (%s)", sym, mod);
		else
			snprintf(fname, sizeof(fname), "%s+%#lx", mod, moff);
		/* "file:line function" as the Python sampler shows it; module+offset without DWARF.
		 * Only for the innermost pc: the line table is the costly part
		 * of libdw (a distribution's debug files are compressed), and
		 * return addresses' lines are never shown. */
		if (named && innermost && pl__line_of(look, where, sizeof(where)))
			snprintf(s->line, sizeof(s->line), "%s %s", where, sym);
		else if (info.dli_sname && info.dli_saddr)
			snprintf(s->line, sizeof(s->line), "%s+%#lx %s+%#lx", mod, moff, sym,
				 (unsigned long)(look - (uintptr_t)info.dli_saddr));
		else if (named)
			snprintf(s->line, sizeof(s->line), "%s+%#lx %s", mod, moff, sym);
		else
			snprintf(s->line, sizeof(s->line), "%s+%#lx", mod, moff);
		if (module)
			pl__window_module_use(module, mod);
		if (pin)
			dlclose(pin);
	}
	s->func = func_index(fname);
	s->ip = ip;
	s->innermost = innermost;
	return s;
}

static int by_count(const void *a, const void *b)
{
	const struct pl_count *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct pl_count *)a)->name, ((const struct pl_count *)b)->name);
}

int pl__stacks_rank(struct pl_ranking *r)
{
	uint64_t mark = 0;
	size_t i, n_lines = 0, n_incl = 0, n_self = 0;

	pl__stacks_names_refresh();

	for (i = 0; i < STACK_SLOTS; i++) {
		struct stack *e = &stacks[i];
		struct site *inner;
		uint32_t d;

		if (e->depth == 0)
			continue;
		mark++;
		inner = site_of(e->ip[0], true, 0);
		if (!inner || inner->func < 0)
			return -ENOSPC;
		funcs[inner->func].self += e->count;
		out_lines[n_lines].name = inner->line;
		out_lines[n_lines++].count = e->count;
		for (d = 0; d < e->depth; d++) {
			struct site *s = site_of(e->ip[d], d == 0, 0);

			if (!s || s->func < 0)
				return -ENOSPC;
			/* recursion: a function counts once a stack */
			if (funcs[s->func].mark == mark)
				continue;
			funcs[s->func].mark = mark;
			funcs[s->func].inclusive += e->count;
		}
	}
	/* one entry per stack so far: merge equal lines (one pc in several
	 * stacks, several pcs on one source line) */
	qsort(out_lines, n_lines, sizeof(*out_lines), by_name);
	for (i = 1; i < n_lines; i++) {
		size_t j = i;

		while (j > 0 && out_lines[j - 1].count == 0)
			j--;
		if (j > 0 && strcmp(out_lines[j - 1].name, out_lines[i].name) == 0) {
			out_lines[j - 1].count += out_lines[i].count;
			out_lines[i].count = 0;
		}
	}
	for (i = 0; i < n_funcs; i++) {
		if (funcs[i].inclusive) {
			out_incl[n_incl].name = funcs[i].name;
			out_incl[n_incl++].count = funcs[i].inclusive;
		}
		if (funcs[i].self) {
			out_self[n_self].name = funcs[i].name;
			out_self[n_self++].count = funcs[i].self;
		}
	}
	qsort(out_incl, n_incl, sizeof(*out_incl), by_count);
	qsort(out_self, n_self, sizeof(*out_self), by_count);
	qsort(out_lines, n_lines, sizeof(*out_lines), by_count);
	while (n_lines && out_lines[n_lines - 1].count == 0)
		n_lines--;
	r->inclusive = out_incl;
	r->self = out_self;
	r->lines = out_lines;
	r->n_inclusive = n_incl;
	r->n_self = n_self;
	r->n_lines = n_lines;
	return 0;
}

static int append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t c = *cap ? *cap : 4096;
		char *p;

		while (*len + n + 1 > c)
			c *= 2;
		p = realloc(*buf, c);
		if (!p)
			return -ENOMEM;
		*buf = p;
		*cap = c;
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

/* Folded-stack frame: the function name without its module, and nothing
 * that would split a frame or end the stack (';', ' ' before the count). */
static int append_frame(char **buf, size_t *len, size_t *cap, const char *name)
{
	char tmp[NAME_MAX_LEN];
	size_t n;

	for (n = 0; name[n] && n + 1 < sizeof(tmp); n++)
		tmp[n] = (name[n] == ';' || name[n] == ' ') ? '_' : name[n];
	/* "hot_a (renderer)" -> "hot_a" */
	{
		const char *paren = strstr(name, " (");

		if (paren && (size_t)(paren - name) < n)
			n = (size_t)(paren - name);
	}
	return append(buf, len, cap, tmp, n);
}

struct folded_line {
	size_t off;     /* into the scratch buffer: the frames, NUL-terminated */
	uint64_t count;
	uint32_t slot;  /* the table's */
};

static const char *scratch_base; /* for the comparison below */

static int by_frames(const void *a, const void *b)
{
	const struct folded_line *x = a, *y = b;

	return strcmp(scratch_base + x->off, scratch_base + y->off);
}

/* Distinct pcs in one function fold to the same line: lines are sorted
 * and equal ones merged, so each stack appears once. */
int pl__stacks_folded(char **buf, size_t *len, size_t *cap, int32_t *slot_line)
{
	struct folded_line *lines = calloc(STACK_SLOTS, sizeof(*lines));
	char *scratch = NULL;
	size_t slen = 0, scap = 0, n = 0, i;
	char num[32];
	int r = 0;

	if (!lines)
		return -ENOMEM;
	for (i = 0; i < STACK_SLOTS && r == 0; i++) {
		struct stack *e = &stacks[i];
		uint32_t d;

		if (e->depth == 0)
			continue;
		lines[n].off = slen;
		lines[n].count = e->count;
		lines[n].slot = (uint32_t)i;
		for (d = e->depth; d-- > 0 && r == 0;) {
			struct site *s = site_of(e->ip[d], d == 0, 0);

			if (!s || s->func < 0) {
				r = -ENOSPC;
				break;
			}
			r = append_frame(&scratch, &slen, &scap, funcs[s->func].name);
			/* ';' between frames, the NUL that ends the line's string */
			if (r == 0)
				r = append(&scratch, &slen, &scap, d > 0 ? ";" : "\0", 1);
		}
		n++;
	}
	if (slot_line)
		for (i = 0; i < STACK_SLOTS; i++)
			slot_line[i] = -1;
	if (r == 0 && n > 0) {
		int32_t out = 0;

		scratch_base = scratch;
		qsort(lines, n, sizeof(*lines), by_frames);
		for (i = 0; i < n && r == 0; i++) {
			/* equal lines are merged into the last of them: each slot
			 * of the run is that line */
			if (slot_line)
				slot_line[lines[i].slot] = out;
			if (i + 1 < n && strcmp(scratch + lines[i].off, scratch + lines[i + 1].off) == 0) {
				lines[i + 1].count += lines[i].count;
				continue;
			}
			out++;
			r = append(buf, len, cap, scratch + lines[i].off, strlen(scratch + lines[i].off));
			snprintf(num, sizeof(num), " %llu\n", (unsigned long long)lines[i].count);
			if (r == 0)
				r = append(buf, len, cap, num, strlen(num));
		}
	}
	free(scratch);
	free(lines);
	return r;
}
