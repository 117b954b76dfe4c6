/* Subcommands of the `perflink` tool. Each gets argv with its own name in
 * argv[0] and returns the process exit status (0 ok, 1 failure, 2 usage). */
#ifndef PL_DAEMON_CLI_H
#define PL_DAEMON_CLI_H

struct pl_cli_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
};

int pl__cmd_trace(int argc, char **argv);
int pl__cmd_resources(int argc, char **argv);
int pl__cmd_status(int argc, char **argv);
int pl__cmd_compare(int argc, char **argv);
/* only where the USB link is built (PL_HAVE_LINK) */
int pl__cmd_stream(int argc, char **argv);
int pl__cmd_integrity(int argc, char **argv);
int pl__cmd_record_proc(int argc, char **argv);

#endif
