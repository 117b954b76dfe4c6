/* Finding the definitions the shim's exported hooks stand in for, by a
 * path the shim itself never answers.
 *
 * The shim exports dlsym on glibc (lookup_hooks.c) and, while sampling,
 * answers a lookup of a swap function with its own hook. Its own lookups
 * of real functions must not go through that: they would get the hook
 * back, and a hook that forwards to itself never returns. */
#pragma once

/* The C library's dlsym, never answered by the shim: libc's dlsym found
 * by version on glibc (dlsym_glibc.c), dlsym itself elsewhere, where the
 * shim exports none (dlsym_plain.c). RTLD_NEXT is relative to the shim. */
void *pl__dlsym_unanswered(void *handle, const char *name);

typedef void *(*pl_dlsym_fn)(void *, const char *);
/* glibc only (dlsym_glibc.c): the C library's dlsym itself, for the
 * shim's dlsym to jump to; NULL if no version of it is found (cannot
 * happen on glibc). */
pl_dlsym_fn pl__libc_dlsym(void);

/* The real definition of name, kept in *slot: the next one after the
 * shim in the global scope, else the one in the library already loaded
 * under soname (loaded RTLD_LOCAL, as GStreamer loads its GL plugins).
 * The first value stored in *slot wins, whoever stored it (a program's
 * own lookup may fill it first: stand_in.h). NULL while neither has it. */
void *pl__real_symbol(void **slot, const char *name, const char *soname);
