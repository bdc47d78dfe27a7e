/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Loading a shared library into a running process, the way gdb's `call
 * dlopen(...)` and wprof's agent loader do: ptrace stops one thread of it,
 * makes that thread call the dynamic loader's dlopen() and then the
 * library's initialisation function, and puts the thread back where it was
 * (registers, vector state, an interrupted system call restarted, signals
 * that came meanwhile delivered). x86-64 only. docs/cupti.md, "Loading the
 * collector into a running process", says how and what can go wrong.
 *
 * inject.c: stopping the thread and the calls, from a helper process of its
 * own; it reads the process first through inject_target.h. What is loaded,
 * and into which processes, is its callers' (inject_cuda.h: the GPU
 * collector).
 */
#ifndef OPTRACE_TRACE_INJECT_H
#define OPTRACE_TRACE_INJECT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/inject_target.h"

/* What to load, and how to start it. */
struct inject_request {
	const char *library;	/* the path dlopen() gets: as the process names it */
	const char *init;	/* int init(void), called once loaded: 1 means it started */
	const char *error;	/* a char array the library fills in when init fails, or NULL */
	bool unload_on_failure; /* init failed: dlclose() the library again */
};

enum {
	INJECT_LOADED = 0,  /* loaded and started */
	INJECT_ALREADY = 1, /* the process maps the library already: nothing was done */
};

/*
 * Loads request->library into process pid and calls its init function.
 * Returns INJECT_LOADED (why[]: how it went, for -v), or a negative errno with why[] saying, in one
 * sentence, what happened and that the process runs on: -ENOTSUP (not
 * x86-64), -EPERM (ptrace refused, and why), -ETIMEDOUT (no thread
 * stopped; or a call that has not returned, said so), -ENOEXEC (dlopen
 * failed: dlerror()'s text), -ECANCELED (init failed: the library's error
 * text), -ESRCH (the process ended).
 */
int inject_library(pid_t pid, const struct inject_request *request, char *why, size_t size);

#endif /* OPTRACE_TRACE_INJECT_H */
