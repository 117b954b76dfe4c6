/* Anonymous executable mappings: a JIT's code (llvmpipe's shaders), which
 * no module lists. They come from /proc/self/maps, read on the sampler
 * thread outside the loader's lock:
 *
 * - for the walk: at the next drain after a walk met a pc it could not
 *   place (pl__anon_refresh_maps);
 * - for the names: when a sample's pc is in none of the mappings as last
 *   read, and they were read before the sample was taken (code mapped
 *   since: llvmpipe compiles a shader variant at its first draw). A few
 *   reads a window at most: each costs a few hundred microseconds in a
 *   process with hundreds of mappings, and a JIT that maps and unmaps
 *   code all the time would otherwise have one read a sample.
 *
 * A region seen at one read and missing from a later one is kept (the last
 * 64): a sample taken in it before it was unmapped (a destroyed context's
 * shaders), and named after, is still a JIT's code. */
#include "sampler.h"
#include "clock.h"
#include "real.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_ANON_EXEC 64
#define MAX_ANON_GONE 64
#define READS_A_WINDOW 8

struct range {
	uintptr_t lo, hi;
};

static struct range anon_exec[MAX_ANON_EXEC], last_read[MAX_ANON_EXEC];
static int n_anon_exec, n_last_read;
static struct range gone[MAX_ANON_GONE]; /* a ring, newest at gone_next - 1 */
static unsigned gone_next;
static bool maps_wanted;
static uint64_t maps_read_ns; /* when /proc/self/maps was last opened; 0: never */
static unsigned reads_left = READS_A_WINDOW;

static bool in_ranges(const struct range *r, int n, uintptr_t lo, uintptr_t hi)
{
	int i;

	for (i = 0; i < n; i++) {
		if (lo >= r[i].lo && hi <= r[i].hi)
			return true;
	}
	return false;
}

bool pl__anon_exec(uintptr_t pc)
{
	if (in_ranges(anon_exec, n_anon_exec, pc, pc + 1))
		return true;
	maps_wanted = true;
	return false;
}

/* "lo-hi perms offset dev inode [path]": executable, inode 0 */
static void parse_maps_line(const char *line)
{
	unsigned long lo, hi, offset, inode;
	unsigned major, minor;
	char perms[5];

	if (sscanf(line, "%lx-%lx %4s %lx %x:%x %lu", &lo, &hi, perms, &offset, &major, &minor,
		   &inode) != 7 ||
	    perms[2] != 'x' || inode != 0 || hi <= lo || n_anon_exec >= MAX_ANON_EXEC)
		return;
	anon_exec[n_anon_exec].lo = lo;
	anon_exec[n_anon_exec++].hi = hi;
}

/* What the last read had and this one has not (neither whole nor inside
 * a larger mapping: adjacent regions merge into one): gone. */
static void note_gone(void)
{
	int i;

	for (i = 0; i < n_last_read; i++) {
		if (!in_ranges(anon_exec, n_anon_exec, last_read[i].lo, last_read[i].hi))
			gone[gone_next++ % MAX_ANON_GONE] = last_read[i];
	}
}

static void read_maps(void)
{
	static char buf[8192];
	size_t used = 0;
	ssize_t n;
	int fd;

	maps_wanted = false; /* this read answers a walk's ask too */
	maps_read_ns = pl__mono_ns();
	fd = pl__real.open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return; /* the last read's list stays */
	memcpy(last_read, anon_exec, (size_t)n_anon_exec * sizeof(anon_exec[0]));
	n_last_read = n_anon_exec;
	n_anon_exec = 0;
	for (;;) {
		char *nl, *line;

		do
			n = read(fd, buf + used, sizeof(buf) - 1 - used);
		while (n < 0 && errno == EINTR);
		if (n <= 0)
			break;
		used += (size_t)n;
		buf[used] = '\0';
		for (line = buf; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
			*nl = '\0';
			parse_maps_line(line);
		}
		used = strlen(line);
		memmove(buf, line, used);
		if (used == sizeof(buf) - 1)
			used = 0; /* a line longer than the buffer: dropped */
	}
	pl__real.close(fd);
	note_gone();
}

void pl__anon_refresh_maps(void)
{
	if (maps_wanted)
		read_maps();
}

bool pl__anon_code(uintptr_t pc, uint64_t taken_ns)
{
	/* the ring fills from its first slot: its first n hold every region kept */
	int n_gone = gone_next < MAX_ANON_GONE ? (int)gone_next : MAX_ANON_GONE;

	if (in_ranges(anon_exec, n_anon_exec, pc, pc + 1))
		return true;
	if (maps_read_ns <= taken_ns && reads_left > 0) {
		reads_left--;
		read_maps();
		if (in_ranges(anon_exec, n_anon_exec, pc, pc + 1))
			return true;
	}
	return in_ranges(gone, n_gone, pc, pc + 1);
}

void pl__anon_new_window(void)
{
	reads_left = READS_A_WINDOW;
}
