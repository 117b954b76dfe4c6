/* Run-time kernel feature probes: one registry so that each feature a kernel
 * may lack is reported once per process, plainly, and so that tests can make
 * any of them look absent.
 *
 * A probe site asks pl__probe_forced() before it looks at the kernel; when
 * that is true it takes the same path as on a kernel without the feature.
 * Either way it calls pl__probe_absent() on that path: the first call for a
 * probe logs one line (info, or a warning where the user can act), later
 * calls only return.
 *
 * Test seam: PERFLINK_PROBE_FAIL=name[,name...] (read once, at the first
 * call) forces the named probes absent. Names are those of pl__probe_name():
 * memfd, smaps_rollup, psi, delayacct, ffs_aio, eventfd_flags.
 * An unknown name is warned about and ignored. It exists so that the
 * fallbacks run on a kernel that has everything; it is not a tuning knob.
 *
 * Thread-safe (atomics); not async-signal-safe (logs). */
#ifndef PL_COMMON_PROBE_H
#define PL_COMMON_PROBE_H

#include <stdbool.h>

#include "log.h"

enum pl_probe {
	PL_PROBE_MEMFD,         /* memfd_create(2): 3.17 */
	PL_PROBE_SMAPS_ROLLUP,  /* /proc/PID/smaps_rollup: 4.14 */
	PL_PROBE_PSI,           /* /proc/pressure/: 4.20 with CONFIG_PSI, not psi=0 */
	PL_PROBE_DELAYACCT,     /* per-task block-I/O delay (CONFIG_TASK_DELAY_ACCT, kernel.task_delayacct) */
	PL_PROBE_FFS_AIO,       /* native AIO, io_setup(2) (CONFIG_AIO), that FunctionFS serves */
	PL_PROBE_EVENTFD_FLAGS, /* eventfd EFD_NONBLOCK | EFD_CLOEXEC: 2.6.27 */
	PL_PROBE_COUNT
};

enum pl_probe_state { PL_PROBE_UNKNOWN, PL_PROBE_PRESENT, PL_PROBE_ABSENT };

/* The probe's name as PERFLINK_PROBE_FAIL spells it; "?" when out of range. */
const char *pl__probe_name(enum pl_probe p);

/* True when PERFLINK_PROBE_FAIL names p. */
bool pl__probe_forced(enum pl_probe p);

/* Records p as absent. The first call logs "NAME: <message>" (warn: as a
 * warning, else as info), with " (forced by PERFLINK_PROBE_FAIL)" appended
 * when it is forced, and keeps the message for pl__probe_message(). Returns
 * true for the call that logged. */
bool pl__probe_absent(enum pl_probe p, bool warn, const char *fmt, ...) PL_PRINTF(3, 4);

/* Records p as present unless it was already reported absent. */
void pl__probe_present(enum pl_probe p);

enum pl_probe_state pl__probe_state(enum pl_probe p);

/* The line logged when p was reported absent, "" before that. The string
 * stays valid and unchanged until pl__probe_reset(). */
const char *pl__probe_message(enum pl_probe p);

/* For tests only: read PERFLINK_PROBE_FAIL again at the next call and forget
 * every state and message. Not safe while another thread uses the registry. */
void pl__probe_reset(void);

#endif
