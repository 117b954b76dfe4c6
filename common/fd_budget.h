/* How many /proc descriptors a process may keep open. The parts that keep
 * them to make a tick cheap (the stall tracer, the resource sampler) share
 * one process's RLIMIT_NOFILE with everything else in it: sockets,
 * producers, the link, log and output files. pl__fd_budget raises the soft
 * limit to the hard one once (capped at 2^20) and gives what may be kept
 * in all: the limit less PL_FD_RESERVE. A daemon that runs several such
 * parts splits that number between them, so that together they never take
 * the descriptors the rest needs (a process out of them cannot accept a
 * connection). Not thread-safe; called at start. */
#ifndef PL_COMMON_FD_BUDGET_H
#define PL_COMMON_FD_BUDGET_H

/* Left for everything that is not a kept /proc descriptor. */
#define PL_FD_RESERVE 128

/* 0 when the limit cannot be read or is below the reserve. */
long pl__fd_budget(void);

#endif
