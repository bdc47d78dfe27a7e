/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `--cuda -p`: the GPU collector loaded into running processes (inject.h). */
#ifndef OPTRACE_TRACE_INJECT_CUDA_H
#define OPTRACE_TRACE_INJECT_CUDA_H

#include <stddef.h>
#include <sys/types.h>

#include "trace/inject.h"

/*
 * The GPU collector (liboptrace-cupti.so) for `--cuda -p`: loads it into
 * process pid unless there already. collector: the path to load (as the
 * process names it), or NULL for the one beside the liboptrace the process
 * maps, else beside fallback_liboptrace (optrace's own). Refuses, before
 * touching it, a process that maps no CUDA library, one that does not map
 * liboptrace, and everything inject_check() refuses. Returns INJECT_LOADED,
 * INJECT_ALREADY, or a negative errno with why[].
 */
int inject_cuda_collector(pid_t pid, const char *collector, const char *fallback_liboptrace,
			  char *why, size_t size);

#endif /* OPTRACE_TRACE_INJECT_CUDA_H */
