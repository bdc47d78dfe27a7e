/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What loading BPF needs, shared by the tracing commands. */
#ifndef OPTRACE_TRACE_SETUP_H
#define OPTRACE_TRACE_SETUP_H

#include <bpf/libbpf.h>
#include <stdarg.h>

/* libbpf's messages, shown with -v (libbpf_set_print(); common/diag.h's verbosity). */
int libbpf_print(enum libbpf_print_level level, const char *format, va_list args);

/*
 * NULL when this process can trace (root or CAP_BPF+CAP_PERFMON, kernel BTF,
 * uprobes), else a sentence saying what is missing and what to do.
 */
const char *tracing_unavailable(void);

/* The liboptrace that `--` and -a attach to by default, or NULL. */
const char *default_liboptrace(char *buffer, unsigned long size);

#endif /* OPTRACE_TRACE_SETUP_H */
