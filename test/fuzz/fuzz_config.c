/* libFuzzer target: the config file loader (common/options.h) on arbitrary
 * file contents, through a memfd so that the real file path runs. */
#include "options.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static long opt_int;
static double opt_double;
static bool opt_bool;
static char *opt_string;

static const struct pl_option table[] = {
	{ "hz", PL_OPT_INT, &opt_int, 1, 1000, "N", "" },
	{ "ratio", PL_OPT_DOUBLE, &opt_double, 0, 1, "R", "" },
	{ "on", PL_OPT_BOOL, &opt_bool, 0, 0, NULL, "" },
	{ "out", PL_OPT_STRING, &opt_string, 0, 0, "PATH", "" },
	PL_OPT_END,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[PL_ERRBUF];
	int fd = memfd_create("fuzz-config", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		pl__config_load(table, path, err, sizeof(err));
	}
	close(fd);
	pl__options_free(table);
	return 0;
}
