/* See debug_files.h. elfutils' libdwfl reads the files: ELF symbol tables
 * (.symtab of a debug file, or .dynsym), DWARF line tables of every
 * version and form compilers write, compressed sections (.zdebug, SHF_COMPRESSED)
 * and the build-id note; a reader of our own would have to do all of that
 * again, and the device's sampler already names lines through the same
 * library (preload/sampler/sampler_lines.c), so both ends name a frame alike.
 *
 * Each debug file is one Dwfl session of one module, reported offline
 * (its addresses as the file has them), so an offset from the device is
 * looked up at offset + the module's bias in that session. libdwfl is
 * told to look for nothing by itself (no /usr/lib/debug of this machine,
 * no debuginfod): a file is used only from the places given, and only
 * when its build-id is the module's. */
#include "debug_files.h"
#include "log.h"
#include "recording.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An offset looked up once: a run's windows repeat the same few thousand
 * addresses, and libdw's lookups were 2.3 us a frame (2.16 M frames of
 * 600 windows: 4.9 s more than the export without names). */
struct looked_up {
	uint64_t offset;
	const char *function; /* libdw's, alive with its Dwfl; NULL: unnamed */
	char *file;           /* malloc'd base name; NULL: none */
	int line;
	bool used, looked, line_looked;
};

/* One build-id's file, found or not. */
struct debug_file {
	char build_id[PL_REC_BUILD_ID_HEX + 1];
	char *module_name; /* the first module that asked, for messages */
	Dwfl *dwfl;        /* NULL: no file of this build-id */
	Dwfl_Module *mod;
	GElf_Addr bias;
	uint64_t named, unnamed; /* frames */
	struct looked_up *seen;  /* open addressing, a power of two slots */
	size_t n_seen, cap_seen;
};

struct pl_debug_files {
	struct pl_symbol_dirs dirs;
	struct debug_file *files;
	size_t n_files, cap_files;
};

/* libdwfl asks for nothing itself: only the file it is given */
static int find_nothing_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
			    char **file_name, Elf **elfp)
{
	(void)mod, (void)userdata, (void)name, (void)base, (void)file_name;
	*elfp = NULL;
	return -1;
}

static int find_nothing_debuginfo(Dwfl_Module *mod, void **userdata, const char *name,
				  Dwarf_Addr base, const char *file_name, const char *debuglink,
				  GElf_Word crc, char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)name, (void)base, (void)file_name, (void)debuglink,
		(void)crc, (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = find_nothing_elf,
	.find_debuginfo = find_nothing_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct pl_debug_files *pl__debug_files_new(const struct pl_symbol_dirs *dirs, int *err)
{
	struct pl_debug_files *df = calloc(1, sizeof(*df));

	*err = df ? 0 : -ENOMEM;
	if (df)
		df->dirs = *dirs;
	return df;
}

void pl__debug_files_free(struct pl_debug_files *df)
{
	size_t i, k;

	if (!df)
		return;
	for (i = 0; i < df->n_files; i++) {
		struct debug_file *f = &df->files[i];

		if (!f->dwfl && f->unnamed)
			pl__log_info("%s (build-id %s): no debug file for it under %s%s%s; its %llu "
				     "frames stay %s+0xOFFSET",
				     f->module_name, f->build_id,
				     df->dirs.sysroot ? df->dirs.sysroot : "",
				     df->dirs.sysroot && df->dirs.debug_dir ? " or " : "",
				     df->dirs.debug_dir ? df->dirs.debug_dir : "",
				     (unsigned long long)f->unnamed, f->module_name);
		if (f->dwfl)
			dwfl_end(f->dwfl);
		for (k = 0; k < f->cap_seen; k++)
			free(f->seen[k].file);
		free(f->seen);
		free(f->module_name);
	}
	free(df->files);
	free(df);
}

static void hex_of(const unsigned char *bits, int n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hex[bits[i] >> 4];
		out[2 * i + 1] = hex[bits[i] & 15];
	}
	out[2 * n] = '\0';
}

/* path as f's file when its build-id is f's; said when it is not */
static bool try_file(struct debug_file *f, const char *path)
{
	char found[PL_REC_BUILD_ID_HEX + 1];
	const unsigned char *bits;
	GElf_Addr vaddr, bias;
	Dwfl_Module *mod;
	Dwfl *dwfl;
	int fd, n;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			pl__log_warn("%s", path);
		return false;
	}
	if (!(dwfl = dwfl_begin(&offline_callbacks))) {
		close(fd);
		return false;
	}
	/* dwfl takes the descriptor, also when it fails */
	mod = dwfl_report_offline(dwfl, f->module_name, path, fd);
	if (!mod || dwfl_report_end(dwfl, NULL, NULL) != 0 || !dwfl_module_getelf(mod, &bias)) {
		pl__log_warnx("%s: not an ELF file libdw can read (%s): not used for %s", path,
			      dwfl_errmsg(-1), f->module_name);
		dwfl_end(dwfl);
		return false;
	}
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n > 0 && n * 2 <= PL_REC_BUILD_ID_HEX)
		hex_of(bits, n, found);
	else
		found[0] = '\0';
	if (strcmp(found, f->build_id) != 0) {
		/* never a name from another build of the module */
		pl__log_warnx("%s: its build-id is %s, not %s's %s: not used", path,
			      found[0] ? found : "(none)", f->module_name, f->build_id);
		dwfl_end(dwfl);
		return false;
	}
	f->dwfl = dwfl;
	f->mod = mod;
	f->bias = bias;
	return true;
}

/* ROOT/.build-id/xx/rest.debug */
static bool try_build_id_dir(struct debug_file *f, const char *root)
{
	char path[4096];

	return (size_t)snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", root,
				f->build_id, f->build_id + 2) < sizeof(path) &&
	       try_file(f, path);
}

/* The device's path under the sysroot: absolute, and never out of it */
static bool try_sysroot_path(struct debug_file *f, const char *sysroot, const char *path)
{
	char joined[4096];

	if (!path || path[0] != '/' || strstr(path, "/../") ||
	    (strlen(path) >= 3 && strcmp(path + strlen(path) - 3, "/..") == 0))
		return false;
	return (size_t)snprintf(joined, sizeof(joined), "%s%s", sysroot, path) < sizeof(joined) &&
	       try_file(f, joined);
}

static struct debug_file *file_of(struct pl_debug_files *df, const struct pl_recorded_module *m)
{
	struct debug_file *f;
	char root[4096];
	size_t i;

	for (i = 0; i < df->n_files; i++)
		if (strcmp(df->files[i].build_id, m->build_id) == 0)
			return &df->files[i];
	if (pl__recording_grow((void **)&df->files, &df->cap_files, df->n_files,
			       sizeof(*df->files)) < 0)
		return NULL;
	f = &df->files[df->n_files];
	memset(f, 0, sizeof(*f));
	memcpy(f->build_id, m->build_id, sizeof(f->build_id));
	if (!(f->module_name = strdup(m->name)))
		return NULL;
	df->n_files++;
	if (df->dirs.debug_dir && try_build_id_dir(f, df->dirs.debug_dir))
		return f;
	if (df->dirs.sysroot) {
		if ((size_t)snprintf(root, sizeof(root), "%s/usr/lib/debug", df->dirs.sysroot) <
			    sizeof(root) &&
		    try_build_id_dir(f, root))
			return f;
		if (try_sysroot_path(f, df->dirs.sysroot, m->path))
			return f;
	}
	return f;
}

static size_t slot_of(uint64_t offset, size_t cap)
{
	return (size_t)((offset * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

/* offset's entry in f->seen, made if new; NULL: no memory */
static struct looked_up *seen_entry(struct debug_file *f, uint64_t offset)
{
	struct looked_up *e;
	size_t k;

	if ((f->n_seen + 1) * 2 > f->cap_seen) {
		size_t cap = f->cap_seen ? f->cap_seen * 2 : 1024, i;
		struct looked_up *seen = calloc(cap, sizeof(*seen));

		if (!seen)
			return NULL;
		for (i = 0; i < f->cap_seen; i++) {
			if (!f->seen[i].used)
				continue;
			for (k = slot_of(f->seen[i].offset, cap); seen[k].used; k = (k + 1) & (cap - 1))
				;
			seen[k] = f->seen[i];
		}
		free(f->seen);
		f->seen = seen;
		f->cap_seen = cap;
	}
	for (k = slot_of(offset, f->cap_seen); f->seen[k].used; k = (k + 1) & (f->cap_seen - 1))
		if (f->seen[k].offset == offset)
			return &f->seen[k];
	e = &f->seen[k];
	memset(e, 0, sizeof(*e));
	e->used = true;
	e->offset = offset;
	f->n_seen++;
	return e;
}

/* the symbol the address lies inside, as the device takes it
 * (sampler_lines.c): the nearest one below it is not its name */
static const char *function_at(struct debug_file *f, Dwarf_Addr addr)
{
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(f->mod, addr, &off, &sym, NULL, NULL, NULL);

	if (!name || !name[0] || (sym.st_size > 0 ? off >= sym.st_size : off != 0))
		return NULL;
	return name;
}

/* the base name of the file and the line, as the device's report gives them */
static int line_at(struct debug_file *f, Dwarf_Addr addr, struct looked_up *e)
{
	Dwfl_Line *line = dwfl_module_getsrc(f->mod, addr);
	const char *file = line ? dwfl_lineinfo(line, NULL, &e->line, NULL, NULL, NULL) : NULL;
	const char *slash = file ? strrchr(file, '/') : NULL;

	e->line_looked = true;
	if (!file || e->line <= 0) {
		e->line = 0;
		return 0;
	}
	if (!(e->file = strdup(slash ? slash + 1 : file)))
		return -ENOMEM;
	return 0;
}

bool pl__debug_files_name(struct pl_debug_files *df, const struct pl_recorded_module *m,
			  uint64_t offset, bool want_line, struct pl_debug_name *out)
{
	struct looked_up *e;
	struct debug_file *f;
	Dwarf_Addr addr;

	memset(out, 0, sizeof(*out));
	if (!m->build_id[0] || !(f = file_of(df, m)))
		return false;
	if (!f->dwfl || offset > UINT64_MAX - f->bias || !(e = seen_entry(f, offset))) {
		f->unnamed++;
		return false;
	}
	addr = offset + f->bias;
	if (!e->looked) {
		/* the first time; remembered also when unnamed */
		e->looked = true;
		e->function = function_at(f, addr);
	}
	if (!e->function) {
		f->unnamed++;
		return false;
	}
	if (want_line && !e->line_looked && line_at(f, addr, e) < 0)
		return false;
	f->named++;
	out->function = e->function;
	if (want_line && e->file) {
		out->file = e->file;
		out->line = e->line;
	}
	return true;
}
