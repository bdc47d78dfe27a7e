// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * optrace: traces the operations of array runtimes through liboptrace's
 * USDT probes. `optrace COMMAND --help` describes each command.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/diag.h"

#define OPTRACE_COMMAND_ENTRY(name, summary) { #name, cmd_##name, summary },

/* The table of cli/commands.h: the one list of commands. */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = { OPTRACE_COMMANDS(OPTRACE_COMMAND_ENTRY) };

/* argp gives every command --version (and -V) with this. */
const char *argp_program_version = "optrace " OPTRACE_VERSION;

static void usage(FILE *out)
{
	fprintf(out, "Usage: optrace COMMAND [OPTION...]\n\n"
		     "Traces the operations of array runtimes (liboptrace's USDT probes).\n\n"
		     "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nExamples:\n"
		     "  optrace list -p 1234              # probes of process 1234\n"
		     "  optrace stat -p 1234 -d 10        # aggregate 10 s of process 1234\n"
		     "  optrace stat -- ./runtime --args  # run a command and trace it\n"
		     "  optrace stat -a 5                 # every runtime, every 5 s\n"
		     "  optrace top -p 1234               # a live screen\n"
		     "  optrace serve                     # for Prometheus, on port 9464\n\n"
		     "`optrace COMMAND --help` describes each command.\n");
}

/* " list, stat, ...": the commands' names, for an unknown command's error. */
static void command_names(char *names, size_t size)
{
	size_t used = 0;

	names[0] = '\0';
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]) && used < size; i++)
		used += (size_t)snprintf(names + used, size - used, "%s %s", i ? "," : "",
					 commands[i].name);
}

int main(int argc, char **argv)
{
	char names[256];

	/* Usage errors exit 2, runtime failures 1, as with the other commands. */
	argp_err_exit_status = 2;
	/*
	 * Past a file size limit (ulimit -f) a write fails with EFBIG, which
	 * every writer handles, instead of SIGXFSZ killing optrace mid-file.
	 */
	signal(SIGXFSZ, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	/* optrace help CMD is optrace CMD --help, as git's and perf's. */
	if (!strcmp(argv[1], "help") && argc > 2) {
		char *help_argv[] = { argv[0], argv[2], "--help", NULL };

		return main(3, help_argv);
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("optrace " OPTRACE_VERSION "\n");
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		char name[32];

		if (strcmp(argv[1], commands[i].name))
			continue;
		/* argp names the program by argv[0]: "Usage: optrace stat ...". */
		snprintf(name, sizeof(name), "optrace %s", commands[i].name);
		argv[1] = name;
		/* -h is help, as in bcc's tools (argp's own is -?); not a command's after --. */
		for (int arg = 2; arg < argc && strcmp(argv[arg], "--"); arg++) {
			if (!strcmp(argv[arg], "-h"))
				argv[arg] = "--help";
		}
		return commands[i].run(argc - 1, argv + 1);
	}
	diag("unknown command '%s'", argv[1]);
	command_names(names, sizeof(names));
	diag("the commands are%s (optrace --help)", names);
	return 2;
}
