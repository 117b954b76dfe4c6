/* The modules a window's frames are in, each with its GNU build-id, so
 * that the host can name later, from a sysroot or a debug folder, the
 * frames the device left as module+offset (docs/sampler.md, "Modules and
 * build-ids").
 *
 * Sampler thread only: the build-id is read from the module's PT_NOTE
 * segments in memory, inside dl_iterate_phdr's callback (sampler_stacks.c
 * finds a pc's module there), where the loader keeps the module mapped;
 * never in the signal handler. A module is read once, when a frame first
 * falls in it; the table keeps what it learnt across windows, and marks
 * which modules the current window's frames named. */
#include "sampler.h"

#include <limits.h>
#include <stddef.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_MODULES 128
#define MODULE_PATH_MAX 512

struct module {
	uintptr_t bias;              /* dlpi_addr */
	char loader_name[MODULE_PATH_MAX]; /* dlpi_name: "" for the program */
	struct pl_window_module out;
	char path[MODULE_PATH_MAX];
	char name[PL_MODULE_NAME_MAX];
	char build_id[PL_BUILD_ID_MAX * 2 + 1];
	bool in_use;                 /* the slot holds a module */
};

static struct module modules[MAX_MODULES];
static unsigned next_slot; /* a full table reuses the oldest slot */

/* Notes are 4-byte aligned, or 8 where the segment says so (x86_64's
 * .note.gnu.property shares a PT_NOTE of alignment 8). */
static size_t note_align(size_t n, size_t align)
{
	return (n + align - 1) & ~(align - 1);
}

/* NT_GNU_BUILD_ID in the segment [p, p + size) as hex into out; false
 * when it has none. Every length is checked against the segment: the
 * notes are the module's bytes, not ours. */
static bool build_id_in(const unsigned char *p, size_t size, size_t align, char *out)
{
	size_t at = 0;

	while (size - at >= sizeof(ElfW(Nhdr))) {
		ElfW(Nhdr) nh;
		size_t name_at, desc_at, end;

		memcpy(&nh, p + at, sizeof(nh));
		name_at = at + sizeof(nh);
		if (nh.n_namesz > size - name_at)
			return false;
		desc_at = note_align(name_at + nh.n_namesz, align);
		if (desc_at > size || nh.n_descsz > size - desc_at)
			return false;
		end = note_align(desc_at + nh.n_descsz, align);
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(p + name_at, "GNU", 4) == 0 && nh.n_descsz > 0 &&
		    nh.n_descsz <= PL_BUILD_ID_MAX) {
			static const char hex[] = "0123456789abcdef";
			size_t i;

			for (i = 0; i < nh.n_descsz; i++) {
				out[2 * i] = hex[p[desc_at + i] >> 4];
				out[2 * i + 1] = hex[p[desc_at + i] & 15];
			}
			out[2 * i] = '\0';
			return true;
		}
		if (end <= at || end > size)
			return false;
		at = end;
	}
	return false;
}

static void read_build_id(const struct dl_phdr_info *info, char *out)
{
	int i;

	out[0] = '\0';
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE && ph->p_memsz > 0 &&
		    build_id_in((const unsigned char *)(info->dlpi_addr + ph->p_vaddr),
				(size_t)ph->p_memsz, ph->p_align == 8 ? 8 : 4, out))
			return;
	}
}

/* The program's own file: the loader names it "" (and dladdr by argv[0]) */
static void program_path(char *out, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", out, cap - 1);

	out[n > 0 ? (size_t)n : 0] = '\0';
}

struct pl_window_module *pl__window_module_note(const struct dl_phdr_info *info)
{
	const char *loader_name = info->dlpi_name ? info->dlpi_name : "";
	struct module *m;
	unsigned i;

	for (i = 0; i < MAX_MODULES; i++) {
		m = &modules[i];
		if (m->in_use && m->bias == info->dlpi_addr && strcmp(m->loader_name, loader_name) == 0)
			return &m->out;
	}
	/* new, or a library loaded where a closed one was: read afresh */
	m = &modules[next_slot++ % MAX_MODULES];
	memset(m, 0, sizeof(*m));
	m->in_use = true;
	m->bias = info->dlpi_addr;
	snprintf(m->loader_name, sizeof(m->loader_name), "%s", loader_name);
	if (loader_name[0] == '\0')
		program_path(m->path, sizeof(m->path));
	else /* absolute; relative as the program dlopened it; the vdso's bare name */
		snprintf(m->path, sizeof(m->path), "%s", loader_name);
	read_build_id(info, m->build_id);
	m->out.name = m->name;
	m->out.path = m->path;
	m->out.build_id = m->build_id;
	return &m->out;
}

void pl__window_module_use(struct pl_window_module *wm, const char *frame_name)
{
	struct module *m = (struct module *)((char *)wm - offsetof(struct module, out));

	if (strcmp(m->name, frame_name) != 0)
		snprintf(m->name, sizeof(m->name), "%s", frame_name);
	m->out.in_window = true;
}

void pl__window_modules_reset(void)
{
	unsigned i;

	for (i = 0; i < MAX_MODULES; i++)
		modules[i].out.in_window = false;
}

const struct pl_window_module *pl__window_module_at(size_t *cursor)
{
	while (*cursor < MAX_MODULES) {
		const struct module *m = &modules[(*cursor)++];

		if (m->in_use && m->out.in_window)
			return &m->out;
	}
	return NULL;
}
