/* The processes of a live stall, each keeping a ledger in memory shared with
 * the test, so that what a tracer's rows say can be checked against what
 * the process did and when:
 *  - the victim (comm "victim", to be watched): writes 8 kB and fdatasyncs
 *    in a loop, 300 ms apart, so that each of its waits is a D episode of
 *    its own, three ticks from the next. It starts only when told (once the
 *    tracers have read it: their baselines) and after it stops it stays
 *    alive (their last readings), so every tracer's deltas of it add up to
 *    its counters' change between the two;
 *  - the napper (comm "pl-napper", not watched): 0.5 s asleep, 1 MiB to
 *    /dev/null (wchar, with no I/O wait), 0.5 s asleep, then a disk phase:
 *    4 times 4 kB written and fdatasync'ed, then 0.3 s in D as a vfork
 *    parent, so that both tools see it in D in every phase whatever the
 *    disk and the load. Its ledger has its counters at each phase's start
 *    and end, so a D row in phase j after one in phase i must carry the
 *    counters' change from phase i to j;
 *  - the bully: dd writing to a file with conv=fdatasync.
 * Times are seconds of CLOCK_MONOTONIC, as the CSVs' mono column. */
#ifndef PL_TEST_LIVE_STALL_ACTORS_H
#define PL_TEST_LIVE_STALL_ACTORS_H

#include <stdint.h>
#include <sys/types.h>

#define VICTIM_COMM "victim"
#define ACTORS_BULLY_FILE "bully.dat" /* dd's, in the folder given */
#define NAPPER_COMM "pl-napper"
#define VICTIM_WAITS_MAX 4096
#define NAPPER_PHASES_MAX 256

struct actor_counters {
	double mono;
	uint64_t wchar, wbytes, blkio_ticks; /* /proc/self/io, stat field 42 */
};

struct actor_span {
	double start, end;
};

struct actor_phase {
	struct actor_counters start, end;
};

struct actors {
	volatile int stop; /* set by the test: the loops end after their step */
	struct actor_counters victim_begin, victim_end;
	unsigned victim_waits; /* each write + fdatasync of the victim */
	struct actor_span victim_wait[VICTIM_WAITS_MAX];
	volatile unsigned napper_phases; /* complete phases in napper_phase */
	struct actor_phase napper_phase[NAPPER_PHASES_MAX];
};

/* The ledger, in memory shared with children forked later; NULL on error. */
struct actors *actors_map(void);

/* The victim, named and ready to start (its baselines can be read) when
 * this returns; -1 on error. */
pid_t actors_victim(struct actors *a, const char *dir);
/* Start it. 0, or -errno. */
int actors_victim_go(void);

pid_t actors_napper(struct actors *a, const char *dir);
/* After a->stop is set: wait until the victim has stopped writing (its
 * victim_end filled) and the napper has ended its last phase. 0, or
 * -ETIMEDOUT. */
int actors_wait_done(void);
pid_t actors_bully(const char *dir, const char *err_path);

/* Kill (SIGKILL) and reap; pid <= 0 is ignored. */
void actors_end(pid_t pid);

#endif
