/* Whether a library is still mapped, by its file's base name in
 * /proc/self/maps: what the sampler's tests of unloading check dlclose did.
 * 1, 0, or -1 when the maps cannot be read. */
#ifndef PL_TEST_MAPPED_H
#define PL_TEST_MAPPED_H

#include <stdio.h>
#include <string.h>

static inline int still_mapped(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		found |= strstr(line, base) != NULL;
	fclose(f);
	return found;
}

#endif
