/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The optrace subcommands; each parses its own arguments (argv[0] is its name). */
#ifndef OPTRACE_COMMANDS_H
#define OPTRACE_COMMANDS_H

#include <bpf/libbpf.h>
#include <stdarg.h>

int cmd_list(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);

/* Shared by the commands. */
extern int verbose;
int libbpf_print(enum libbpf_print_level level, const char *format, va_list args);

/*
 * NULL when this process can trace (root or CAP_BPF+CAP_PERFMON, kernel BTF,
 * uprobes), else a sentence saying what is missing and what to do.
 */
const char *tracing_unavailable(void);

/* The liboptrace that `--` and -a attach to by default, or NULL. */
const char *default_liboptrace(char *buffer, unsigned long size);

#endif /* OPTRACE_COMMANDS_H */
