/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What is read of a process before a library is loaded into it (inject.h),
 * without touching it: whether it may be stopped, where its loader's
 * functions are, which files it maps and their symbols.
 */
#ifndef OPTRACE_TRACE_INJECT_TARGET_H
#define OPTRACE_TRACE_INJECT_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How long a why[] is: one sentence, said to the user. */
#define INJECT_WHY_SIZE 512

/* The loader's functions in the process, found in its libraries. */
struct inject_loader {
	uint64_t dlopen;  /* dlopen (libc since glibc 2.34, libdl, musl) or __libc_dlopen_mode */
	uint64_t dlerror; /* 0 if none */
	uint64_t dlclose; /* 0 if none */
	char found_in[PATH_MAX + 64]; /* "dlopen in PATH" */
};

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

#endif /* OPTRACE_TRACE_INJECT_TARGET_H */
