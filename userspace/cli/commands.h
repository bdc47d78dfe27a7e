/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The optrace subcommands; each parses its own arguments (argv[0] is its name). */
#ifndef OPTRACE_CLI_COMMANDS_H
#define OPTRACE_CLI_COMMANDS_H

int cmd_list(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_dump(int argc, char **argv);

#endif /* OPTRACE_CLI_COMMANDS_H */
