/* DIR/stacks.folded: the render sampler's stacks of every window, as
 * flamegraph.pl, inferno and speedscope read them: one "outer;...;inner
 * COUNT" line per distinct stack, under a first frame "COMM (PID)" for its
 * process, equal stacks of the run added up, in byte order. The frames are
 * the device's, or the names --sysroot found for them (symbolize.h). */
#ifndef PL_HOST_STACKS_FOLDED_H
#define PL_HOST_STACKS_FOLDED_H

#include <stdio.h>

/* For pl__atomic_file_write: recording is a struct pl_recording. 0 or
 * -errno. */
int pl__stacks_folded_write(FILE *out, const void *recording);

#endif
