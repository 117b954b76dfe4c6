/* The target of preload_dormant: calls the hooks a short-lived program
 * meets (open, openat, ioctl, poll, select, epoll, dup, close, dlsym) and then
 * says how many pages of the shim's .bss are present in its page tables
 * (/proc/self/pagemap): the whole pages of the shim's writable segment past
 * its file-backed part, found from the shim's program headers. A dormant shim
 * must have faulted in none of them (dormant.h): each one is what a
 * process start pays for, 12-15 µs on a paravirtualised guest.
 *
 * Usage: dormant_pages SHIM_PATH
 * Prints "bss_pages_present N of M", or "no shim" and exits 1. */
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <unistd.h>

static void call_hooks(void)
{
	int p[2], n = 0, fd, ep;
	struct pollfd pfd;
	struct epoll_event ev = { .events = EPOLLIN }, out;
	fd_set rd;
	struct timeval tv = { 0, 0 };

	if (pipe(p) < 0)
		return;
	(void)ioctl(p[0], FIONREAD, &n);
	pfd = (struct pollfd){ .fd = p[0], .events = POLLIN };
	(void)poll(&pfd, 1, 0);
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	(void)select(p[0] + 1, &rd, NULL, NULL, &tv);
	ep = epoll_create1(0);
	if (ep >= 0) {
		(void)epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
		(void)epoll_wait(ep, &out, 1, 0);
		close(ep);
	}
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0) {
		int d = dup(fd);

		if (d >= 0)
			close(d);
		close(fd);
	}
	fd = openat(AT_FDCWD, "/dev/null", O_RDONLY);
	if (fd >= 0)
		close(fd);
	close(p[0]);
	close(p[1]);
	/* what a program that loads plugins does: the shim's dlsym answers */
	(void)dlsym(RTLD_DEFAULT, "strlen");
}

struct bss {
	const char *shim;
	uintptr_t from, to; /* whole pages, [from, to) */
};

static int find_bss(struct dl_phdr_info *info, size_t size, void *data)
{
	struct bss *b = data;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	(void)size;
	if (strcmp(info->dlpi_name, b->shim) != 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && ph->p_memsz > ph->p_filesz) {
			uintptr_t file_end = info->dlpi_addr + ph->p_vaddr + ph->p_filesz;
			uintptr_t mem_end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;

			/* whole pages only: musl's loader gives the unused tail
			 * of the last one to malloc, which writes there */
			b->from = (file_end + page - 1) & ~(page - 1);
			b->to = mem_end & ~(page - 1);
		}
	}
	return 1;
}

int main(int argc, char **argv)
{
	struct bss b = { 0 };
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	unsigned present = 0, pages = 0;
	int fd;

	if (argc != 2)
		return 2;
	call_hooks();
	b.shim = argv[1];
	if (!dl_iterate_phdr(find_bss, &b) || b.to <= b.from) {
		printf("no shim\n");
		return 1;
	}
	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0)
		return 1;
	for (uintptr_t a = b.from; a < b.to; a += page, pages++) {
		uint64_t entry;

		if (pread(fd, &entry, sizeof(entry), (off_t)(a / page * sizeof(entry))) !=
		    (ssize_t)sizeof(entry))
			return 1;
		present += (unsigned)(entry >> 63);
	}
	printf("bss_pages_present %u of %u\n", present, pages);
	return 0;
}
