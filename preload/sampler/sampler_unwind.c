/* The walk of a captured sample, on the sampler thread: libunwind's
 * remote interface over the registers and the stack copy the handler took
 * (sampler_capture.c), with accessors that read only the copy and the
 * modules' readable segments (sampler_modules.c), inside the loader's
 * lock. No read here can fault: an address in neither is an error, and
 * the walk ends there, cut short and counted.
 *
 * A frame whose pc is in no module's code and in no anonymous executable
 * mapping ends the walk too: that is a frame-pointer guess gone wrong
 * (a JIT's frames have no unwind information), not a caller. */
#include "sampler.h"

#include <errno.h>
#include <libunwind.h>
#include <string.h>

/* The eh_frame_hdr search libunwind's own ptrace and core-file accessors
 * use: exported by libunwind-ARCH, not declared in its headers. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					       unw_dyn_info_t *di, unw_proc_info_t *pi,
					       int need_unwind_info, void *arg);

/* .eh_frame_hdr's encodings (LSB: DW_EH_PE_*) */
#define EH_PE_OMIT 0xff
#define EH_PE_FORMAT 0x0f
#define EH_PE_DATAREL_SDATA4 0x3b

struct walk {
	const struct pl_raw_sample *raw;
	bool past_copy; /* a read just above the copy: the stack was deeper */
};

static unw_addr_space_t space;
static unsigned long copy_ends; /* atomic: read by the report */

/* Bytes an encoded value of .eh_frame_hdr takes; 0 when not a fixed size. */
static size_t encoded_size(unsigned char enc)
{
	switch (enc & EH_PE_FORMAT) {
	case 0x00: return sizeof(uintptr_t); /* absptr */
	case 0x02: case 0x0a: return 2;
	case 0x03: case 0x0b: return 4;
	case 0x04: case 0x0c: return 8;
	default: return 0;
	}
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct pl_module_text text;
	const unsigned char *hdr;
	size_t ptr_size, count_size;
	uint32_t fde_count;
	unw_dyn_info_t di;

	if (!pl__modules_text_of((uintptr_t)ip, &text) || text.eh_frame_hdr == 0 ||
	    !pl__modules_readable(text.eh_frame_hdr, 4))
		return -UNW_ENOINFO;
	hdr = (const unsigned char *)text.eh_frame_hdr;
	/* version 1, a binary search table of (start, fde) sdata4 pairs
	 * relative to the header: what every linker writes */
	ptr_size = encoded_size(hdr[1]);
	count_size = encoded_size(hdr[2]);
	if (hdr[0] != 1 || hdr[1] == EH_PE_OMIT || hdr[3] != EH_PE_DATAREL_SDATA4 ||
	    ptr_size == 0 || count_size != 4 ||
	    !pl__modules_readable(text.eh_frame_hdr, 4 + ptr_size + count_size))
		return -UNW_ENOINFO;
	memcpy(&fde_count, hdr + 4 + ptr_size, sizeof(fde_count));
	if (fde_count == 0 ||
	    !pl__modules_readable(text.eh_frame_hdr + 4 + ptr_size + count_size,
				  (size_t)fde_count * 8))
		return -UNW_ENOINFO;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = text.lo;
	di.end_ip = text.hi;
	di.u.rti.segbase = text.eh_frame_hdr;
	di.u.rti.table_data = text.eh_frame_hdr + 4 + ptr_size + count_size;
	di.u.rti.table_len = (unw_word_t)fde_count * 8 / sizeof(unw_word_t);
	return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
}

/* libunwind frees what dwarf_search_unwind_table gave itself */
static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)as;
	(void)pi;
	(void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	(void)as;
	(void)addr;
	(void)arg;
	return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	struct walk *w = arg;
	const struct pl_raw_sample *raw = w->raw;
	uintptr_t a = (uintptr_t)addr, start = raw->stack_start;

	(void)as;
	if (write)
		return -UNW_EINVAL;
	if (a >= start && a - start <= raw->stack_len &&
	    raw->stack_len - (a - start) >= sizeof(*val)) {
		memcpy(val, raw->stack + (a - start), sizeof(*val));
		return 0;
	}
	if (pl__modules_readable(a, sizeof(*val))) {
		memcpy(val, (const void *)a, sizeof(*val));
		return 0;
	}
	if (raw->stack_len == PL_STACK_COPY_BYTES && a >= start + raw->stack_len &&
	    a - (start + raw->stack_len) < PL_STACK_COPY_BYTES)
		w->past_copy = true;
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write,
		      void *arg)
{
	struct walk *w = arg;
	int slot = pl__regs_slot((int)reg);

	(void)as;
	if (slot < 0 || write)
		return -UNW_EBADREG;
	*val = (unw_word_t)w->raw->regs[slot];
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			void *arg)
{
	(void)as;
	(void)reg;
	(void)val;
	(void)write;
	(void)arg;
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	(void)as;
	(void)c;
	(void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *offp, void *arg)
{
	(void)as;
	(void)addr;
	(void)buf;
	(void)len;
	(void)offp;
	(void)arg;
	return -UNW_ENOINFO;
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

int pl__unwind_init(void)
{
	space = unw_create_addr_space(&accessors, 0);
	if (!space)
		return -ENOMEM;
	pl__regs_mend_space(space, &accessors);
	/* keyed by pc: a frame seen before costs no table search */
	if (unw_set_caching_policy(space, UNW_CACHE_GLOBAL) < 0)
		return -EINVAL;
	return 0;
}

static bool is_code(uintptr_t pc)
{
	struct pl_module_text text;

	return pl__modules_text_of(pc, &text) || pl__anon_exec(pc);
}

/* The module table's generation libunwind's caches were filled under. */
static unsigned long cached_generation;

void pl__unwind(const struct pl_raw_sample *raw, struct pl_stack_sample *out)
{
	struct walk w = { raw, false };
	unw_cursor_t c;
	unw_word_t ip;
	uint32_t n = 0;
	int step = -1;

	out->idle = raw->idle;
	out->cut_short = 1;
	out->taken_ns = raw->mono_ns;
	out->ip[n++] = pl__regs_pc(raw->regs);
	if (pl__modules_generation() != cached_generation) {
		cached_generation = pl__modules_generation();
		unw_flush_cache(space, 0, 0);
	}
	if (raw->stack_unknown || unw_init_remote(&c, space, &w) < 0)
		goto done;
	while (n < PL_STACK_DEPTH && (step = unw_step(&c)) > 0) {
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0) {
			step = -1;
			break;
		}
		if (ip == 0)
			break; /* past the outermost frame */
		if (!is_code((uintptr_t)ip)) {
			step = -1;
			break;
		}
		out->ip[n++] = (uintptr_t)ip;
	}
	/* A full buffer is a deep stack, not a failure. libunwind also says 0
	 * ("outermost") when its frame-pointer guess for a pc without unwind
	 * information fails; at a real outermost frame (_start, clone, whose
	 * entries mark the return address undefined) it clears the pc, after
	 * a failed guess the pc stays. */
	if (n == PL_STACK_DEPTH || step > 0)
		out->cut_short = 0;
	else if (step == 0)
		out->cut_short = unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip != 0;
done:
	if (out->cut_short && w.past_copy)
		__atomic_add_fetch(&copy_ends, 1, __ATOMIC_RELAXED);
	out->depth = n;
}

unsigned long pl__unwind_copy_ends(void)
{
	return __atomic_load_n(&copy_ends, __ATOMIC_RELAXED);
}
