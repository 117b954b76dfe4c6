/* The stand-in tables' lookup (stand_in.h). */
#include "stand_in.h"

#include <stdbool.h>
#include <string.h>

const struct pl_stand_in *pl__stand_in_named(const struct pl_stand_in *table, size_t n,
					     const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(name, table[i].name) == 0)
			return &table[i];
	return NULL;
}

void *pl__stand_in_take(const struct pl_stand_in *s, void *found)
{
	void *hook, *none = NULL;

	memcpy(&hook, &s->hook, sizeof(hook)); /* POSIX: a function's address fits */
	if (found && found != hook)
		__atomic_compare_exchange_n(s->real_slot, &none, found, false, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
	return hook;
}
