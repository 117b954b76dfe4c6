/* Placeholder until the trace command lands; see the issue. */
#include "cli.h"
#include <stdio.h>
int pl__cmd_trace(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "%s: not built yet\n", argv[0]);
	return 1;
}
