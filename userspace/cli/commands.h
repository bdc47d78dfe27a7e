/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The optrace subcommands, written once: X(NAME, SUMMARY) for each, in the
 * order `optrace --help` lists them. NAME's entry point is cmd_NAME(), which
 * parses its own arguments (argv[0] is "optrace NAME"); SUMMARY is its line
 * in `optrace --help` and the NAME of its man page. main.c's table is built
 * from this list and the Makefile's COMMANDS read from it; make lint
 * (scripts/check-commands.sh) checks the bash completion and docs/optrace.md's
 * synopsis against it.
 */
#ifndef OPTRACE_CLI_COMMANDS_H
#define OPTRACE_CLI_COMMANDS_H

/* One command a line: the Makefile and scripts/check-commands.sh read them. */
#define OPTRACE_COMMANDS(X)                                                      \
	X(list, "the optrace probes of a process or file, and their semaphores") \
	X(stat, "per-operation and per-task aggregates, counted in the kernel")  \
	X(top, "the same aggregates as a live screen, slowest first")            \
	X(record, "every operation, task and wait into a capture file")          \
	X(report, "a capture file's profile as text")                            \
	X(export, "a capture file's profile for Perfetto or Legion Prof")        \
	X(serve, "the aggregates of stat for Prometheus, over HTTP (/metrics)")  \
	X(dump, "what every thread of a process is doing now, for hung jobs")

#define OPTRACE_COMMAND_DECLARE(name, summary) int cmd_##name(int argc, char **argv);
OPTRACE_COMMANDS(OPTRACE_COMMAND_DECLARE)
#undef OPTRACE_COMMAND_DECLARE

#endif /* OPTRACE_CLI_COMMANDS_H */
