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
 * own; inject_target.c: what is read of the process before it is touched
 * (its mappings, the loader's symbols in its libraries, whether it may be
 * stopped at all), and the GPU collector's policy.
 */
#ifndef OPTRACE_TRACE_INJECT_H
#define OPTRACE_TRACE_INJECT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define INJECT_WHY_SIZE 512

/* What to load, and how to start it. */
struct inject_request {
	const char *library;	/* the path dlopen() gets: as the process names it */
	const char *init;	/* int init(void), called once loaded: 1 means it started */
	const char *error;	/* a char array the library fills in when init fails, or NULL */
	bool unload_on_failure; /* init failed: dlclose() the library again */
};

/* The loader's functions in the process, found in its libraries. */
struct inject_loader {
	uint64_t dlopen;  /* dlopen (libc since glibc 2.34, libdl, musl) or __libc_dlopen_mode */
	uint64_t dlerror; /* 0 if none */
	uint64_t dlclose; /* 0 if none */
	char found_in[PATH_MAX + 64]; /* "dlopen in PATH" */
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

/*
 * Whether process pid may be stopped and called into at all, without
 * touching it: 0, or a negative errno and why[] (not x86-64, a 32-bit
 * process, a seccomp filter, stopped, traced by another tracer, statically
 * linked, not allowed to ptrace).
 */
int inject_check(pid_t pid, char *why, size_t size);

/* The loader's functions in process pid: 0, -ENOENT (none: statically linked?) or -errno. */
int inject_find_loader(pid_t pid, struct inject_loader *loader);

/*
 * The address of symbol name (a dynamic symbol) in process pid, in the
 * mapped file whose base name is library's (a path or a base name): 0,
 * -ENOENT (not mapped, or no such symbol) or -errno.
 */
int inject_symbol_address(pid_t pid, const char *library, const char *name, uint64_t *address);

/*
 * True if process pid maps a file whose base name starts with one of the
 * names (NULL-terminated); the first such file's path (as the process names
 * it) into path when not NULL.
 */
bool inject_maps(pid_t pid, const char *const *names, char *path, size_t size);

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

#endif /* OPTRACE_TRACE_INJECT_H */
