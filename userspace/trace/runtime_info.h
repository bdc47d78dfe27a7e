/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The rank a runtime announced, read from liboptrace's optrace_runtime
 * symbol in the process's memory: known also to a tracer that attached after
 * the runtime's rt_init probe fired.
 */
#ifndef OPTRACE_RUNTIME_INFO_H
#define OPTRACE_RUNTIME_INFO_H

#include <optrace/optrace.h>
#include <sys/types.h>

#include <stdint.h>

/* 0, or a negative errno: -ESRCH, -ENOENT (no liboptrace), -EPROTO (an ABI it does not know). */
int runtime_info_read(pid_t pid, struct optrace_runtime_info *info);

/* Where liboptrace's exported symbol name lies in process pid. 0 or -errno. */
int liboptrace_symbol_address(pid_t pid, const char *name, uint64_t *address);

#endif /* OPTRACE_RUNTIME_INFO_H */
