/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A running process read from outside: its memory (process_vm_readv), its threads. */
#ifndef OPTRACE_TRACE_PROCESS_READ_H
#define OPTRACE_TRACE_PROCESS_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The threads of process pid now, to bound a registry's walk; limit if more or unknown. */
int process_thread_count(pid_t pid, int limit);

/* Reads size bytes at address of process pid; 0 or -errno. */
int process_read(pid_t pid, uint64_t address, void *buffer, size_t size);

/* The string at address of process pid, cut to size - 1 bytes; 0 or -errno. */
int process_read_string(pid_t pid, uint64_t address, char *text, size_t size, bool *truncated);

#endif /* OPTRACE_TRACE_PROCESS_READ_H */
