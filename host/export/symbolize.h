/* Names on the host for what the device left as MODULE+0xOFFSET in its
 * render windows (a stripped program or library), from debug files found
 * by the module's GNU build-id (docs/wire.md "Frames a host can name",
 * docs/host-export.md "--sysroot"). */
#ifndef PL_HOST_SYMBOLIZE_H
#define PL_HOST_SYMBOLIZE_H

#include <stdbool.h>

struct pl_recording;

/* Where debug files are looked for; each NULL when not given. */
struct pl_symbol_dirs {
	/* a copy of the device's root: SYSROOT/usr/lib/debug/.build-id/xx/rest.debug,
	 * then each module's path under SYSROOT */
	const char *sysroot;
	/* a folder of the same layout as usr/lib/debug: DIR/.build-id/xx/rest.debug */
	const char *debug_dir;
};

/* Rewrite the frames of r's stacks that the sysroot can name into
 * function names (spelled as the folded stacks spell them), with each
 * function's module and, for frames that are innermost, the file:line of
 * its hottest line, as the device's report would have given them; frames
 * it cannot name stay as they are. A file whose build-id is not the
 * module's is never used (said once, on stderr). 0, or -ENOMEM; -ENOTSUP
 * (said) without libdw. Nothing is done when dirs names no folder. */
int pl__recording_symbolize(struct pl_recording *r, const struct pl_symbol_dirs *dirs);

#endif
