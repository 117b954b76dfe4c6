/* The shim's stand-ins for functions a program may look up itself (the
 * swap functions, the GetProcAddress functions: lookup_hooks.c): a
 * program that asks for one gets the shim's, which forwards to what the
 * program's lookup found. */
#pragma once

#include <stddef.h>

struct pl_stand_in {
	const char *name;
	void **real_slot;  /* what the stand-in forwards to (real_symbol.h) */
	void (*hook)(void); /* the shim's exported function */
};

/* The entry of table[0..n) named name, or NULL. */
const struct pl_stand_in *pl__stand_in_named(const struct pl_stand_in *table, size_t n,
					     const char *name);

/* s's hook, as a data pointer; found (not NULL, not the hook itself:
 * a scope that holds the shim finds the shim's) becomes the function the
 * hook forwards to, unless it has one already. */
void *pl__stand_in_take(const struct pl_stand_in *s, void *found);
