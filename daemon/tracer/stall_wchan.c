/* What the kernel function a sleeping task is in (/proc/PID/wchan) says it
 * waits for (stall_detect.h). */
#include "stall_detect.h"

#include <string.h>

/* The names of what a task sleeps in, by prefix, from Linux 4.x to 6.x;
 * the first match counts, so the longer names come first. A page's lock
 * and its bits are waited for both in a read and in a writeback: those
 * are PL_WCHAN_PAGE, which pl__stall_page_kinds settles; the read path's
 * own functions (a fault, a buffered read, the killable lock it takes)
 * are a read. ext4's fsync waits in jbd2, xfs's in xlog. */
static const struct {
	const char *prefix;
	enum pl_wchan_kind kind;
} wchan_names[] = {
	{ "balance_dirty_pages", PL_WCHAN_THROTTLE },
	{ "filemap_fault", PL_WCHAN_READ },
	{ "filemap_read", PL_WCHAN_READ },
	{ "filemap_get_pages", PL_WCHAN_READ },
	{ "filemap_update_page", PL_WCHAN_READ },
	{ "__folio_lock_killable", PL_WCHAN_READ },
	{ "__folio_lock_or_retry", PL_WCHAN_READ },
	{ "folio_lock_or_retry", PL_WCHAN_READ },
	{ "__lock_page_killable", PL_WCHAN_READ },
	{ "__lock_page_or_retry", PL_WCHAN_READ },
	{ "wait_on_page_read", PL_WCHAN_READ },
	{ "do_read_cache", PL_WCHAN_READ },
	{ "read_cache_page", PL_WCHAN_READ },
	{ "page_cache_sync_ra", PL_WCHAN_READ },
	{ "generic_file_buffered_read", PL_WCHAN_READ },
	{ "generic_file_read_iter", PL_WCHAN_READ },
	{ "folio_wait_writeback", PL_WCHAN_WRITEBACK },
	{ "folio_wait_stable", PL_WCHAN_WRITEBACK },
	{ "wait_on_page_writeback", PL_WCHAN_WRITEBACK },
	{ "folio_wait_", PL_WCHAN_PAGE },   /* _bit, _bit_common, _bit_killable, _locked */
	{ "wait_on_page_", PL_WCHAN_PAGE }, /* _bit, _bit_common, _locked (before folios) */
	{ "__folio_lock", PL_WCHAN_PAGE },
	{ "__lock_page", PL_WCHAN_PAGE },
	{ "__filemap_fdatawait", PL_WCHAN_WRITEBACK },
	{ "filemap_fdatawait", PL_WCHAN_WRITEBACK },
	{ "file_write_and_wait", PL_WCHAN_WRITEBACK },
	{ "wb_wait_for_completion", PL_WCHAN_WRITEBACK },
	{ "wait_sb_inodes", PL_WCHAN_WRITEBACK },
	{ "jbd2_", PL_WCHAN_JOURNAL },
	{ "__jbd2_", PL_WCHAN_JOURNAL },
	{ "xlog_", PL_WCHAN_JOURNAL },
	{ "xfs_log_force", PL_WCHAN_JOURNAL },
	{ "io_schedule", PL_WCHAN_BLOCK },
	{ "submit_bio_wait", PL_WCHAN_BLOCK },
	{ "blk_", PL_WCHAN_BLOCK },
	{ "bio_", PL_WCHAN_BLOCK },
	{ "rq_qos_wait", PL_WCHAN_BLOCK },
	{ "wbt_wait", PL_WCHAN_BLOCK },
	{ "wait_for_completion_io", PL_WCHAN_BLOCK },
	{ "__wait_on_buffer", PL_WCHAN_BLOCK },
	{ "__sync_dirty_buffer", PL_WCHAN_BLOCK },
	{ "__lock_buffer", PL_WCHAN_BLOCK },
	{ "bit_wait_io", PL_WCHAN_BLOCK },
	{ "__blockdev_direct_IO", PL_WCHAN_BLOCK },
	{ "__iomap_dio_rw", PL_WCHAN_BLOCK },
	{ "iomap_dio_", PL_WCHAN_BLOCK },
	{ "compact", PL_WCHAN_MEMORY },
	{ "kcompactd", PL_WCHAN_MEMORY },
	{ "migrate_pages", PL_WCHAN_MEMORY },
	{ "shrink_", PL_WCHAN_MEMORY },
	{ "throttle_direct_reclaim", PL_WCHAN_MEMORY },
	{ "reclaim_throttle", PL_WCHAN_MEMORY },
	{ "try_to_free_", PL_WCHAN_MEMORY },
	{ "__alloc_pages", PL_WCHAN_MEMORY },
	{ "mempool_alloc", PL_WCHAN_MEMORY },
	{ "__mutex_lock", PL_WCHAN_LOCK },
	{ "mutex_lock", PL_WCHAN_LOCK },
	{ "rwsem_down_", PL_WCHAN_LOCK },
	{ "down_read", PL_WCHAN_LOCK },
	{ "down_write", PL_WCHAN_LOCK },
	{ "__down", PL_WCHAN_LOCK },
	{ "rt_mutex", PL_WCHAN_LOCK },
	{ "percpu_rwsem", PL_WCHAN_LOCK },
	{ "__percpu_down", PL_WCHAN_LOCK },
	/* the rwsem and mutex slow paths are scheduler functions, which wchan
	 * skips: a wait for the mmap lock shows as its caller */
	{ "vm_mmap_pgoff", PL_WCHAN_LOCK },
	{ "__vm_munmap", PL_WCHAN_LOCK },
	{ "vm_munmap", PL_WCHAN_LOCK },
	{ "do_madvise", PL_WCHAN_LOCK },
	{ "do_mprotect_pkey", PL_WCHAN_LOCK },
	{ "lock_mm_and_find_vma", PL_WCHAN_LOCK },
};

enum pl_wchan_kind pl__wchan_kind(const char *wchan)
{
	size_t i;

	if (!wchan[0] || strcmp(wchan, "0") == 0)
		return PL_WCHAN_UNKNOWN;
	for (i = 0; i < sizeof(wchan_names) / sizeof(wchan_names[0]); i++) {
		if (strncmp(wchan, wchan_names[i].prefix, strlen(wchan_names[i].prefix)) == 0)
			return wchan_names[i].kind;
	}
	return PL_WCHAN_OTHER;
}

static const char *const wchan_kind_names[PL_WCHAN_KINDS] = {
	"unknown", "throttle", "writeback", "journal", "block", "memory", "lock", "other",
	"read", "page",
};

const char *pl__wchan_kind_name(enum pl_wchan_kind k)
{
	return k < PL_WCHAN_KINDS ? wchan_kind_names[k] : "unknown";
}

unsigned pl__stall_page_kinds(unsigned kinds, bool victim_wrote)
{
	if (!(kinds & (1u << PL_WCHAN_PAGE)))
		return kinds;
	kinds &= ~(1u << PL_WCHAN_PAGE);
	return kinds | (1u << (victim_wrote ? PL_WCHAN_WRITEBACK : PL_WCHAN_READ));
}
