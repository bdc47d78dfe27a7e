/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The rank a runtime announced, read from liboptrace's optrace_runtime
 * symbol in the process's memory: known also to a tracer that attached after
 * the runtime's rt_init probe fired.
 */
#ifndef OPTRACE_TRACE_RUNTIME_INFO_H
#define OPTRACE_TRACE_RUNTIME_INFO_H

#include <optrace/optrace.h>
#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 0, or a negative errno: -ESRCH, -ENOENT (no liboptrace), -EPROTO (an ABI it does not know). */
int runtime_info_read(pid_t pid, struct optrace_runtime_info *info);

/* Where liboptrace's exported symbol name lies in process pid. 0 or -errno. */
int liboptrace_symbol_address(pid_t pid, const char *name, uint64_t *address);

/*
 * Reads size bytes at liboptrace's symbol name (a string that lives as long
 * as the program: the address is kept by it) in process pid, its address in
 * *address, and returns 0 if valid() accepts them. The address is the one the
 * last call for this process and name found: the process's maps and
 * liboptrace's ELF are read again (60 us, where a tracer reads every process
 * 20 times a second) only for a new process (a reused pid included: it has
 * another start time), or when what lies there is unreadable or fails
 * valid(). Else -ESRCH, -ENOENT (no liboptrace, or no such symbol), -EPROTO
 * (read, and not valid).
 */
int liboptrace_symbol_read(pid_t pid, const char *name, void *buffer, size_t size,
			   bool (*valid)(const void *buffer), uint64_t *address);

/* Lookups of the maps and the ELF that liboptrace_symbol_read() made (for tests). */
uint64_t liboptrace_symbol_lookups(void);

#endif /* OPTRACE_TRACE_RUNTIME_INFO_H */
