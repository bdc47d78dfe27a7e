/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Finding liboptrace in processes. */
#ifndef OPTRACE_TRACE_TARGETS_H
#define OPTRACE_TRACE_TARGETS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct library {
	char path[PATH_MAX];	    /* as this process can open it: /proc/PID/root/... */
	char mapped_path[PATH_MAX]; /* as the target names it */
	dev_t dev;
	ino_t ino;
	unsigned long base; /* where its first page is mapped: its load base */
};

/* One line of /proc/PID/maps that maps a file. */
struct mapping {
	uint64_t start, end, offset;
	char perms[5];
	bool deleted; /* replaced on disk: read it through map_files */
	char path[PATH_MAX];
};

typedef int (*mapping_fn)(const struct mapping *mapping, void *ctx);

/*
 * What a path a traced process names held when it was not a regular file:
 * a FIFO or a device the process (in its own mount namespace, or another
 * user) put there. Linux has no EFTYPE; this code is otherwise unused.
 */
#define ENOTREGULAR EMEDIUMTYPE

/*
 * Opens a file that a traced process names (a library its mappings list)
 * to read it: without blocking, as a FIFO with no writer would block open()
 * and every read for ever, and only if it is a regular file. Returns the
 * descriptor (close-on-exec) or a negative errno: -ENOTREGULAR for a FIFO,
 * a device, a socket or a folder.
 */
int target_file_open(const char *path);

/* strerror() that names -ENOTREGULAR for what it is. */
const char *target_strerror(int err);

/*
 * Calls fn for each file mapping of process pid until it returns non-zero,
 * which is returned; 0 at the end, -ESRCH or another negative errno.
 */
int for_each_mapping(pid_t pid, mapping_fn fn, void *ctx);

/* A mapped file as this process can open it: through the process's root, or map_files. */
void mapping_openable_path(pid_t pid, const struct mapping *mapping, char *out, size_t size);

/*
 * The liboptrace that process pid maps. Returns 0, -ESRCH (no such process),
 * -EACCES (not allowed to read its mappings), -ENOENT (no liboptrace) or
 * -ENOTREGULAR (the path it maps holds no regular file now).
 */
int find_liboptrace(pid_t pid, struct library *library);

/*
 * The process a -p PID names: pid itself, or the process of thread pid (a
 * TID, as top -H and gdb show them). 0, -ESRCH when there is none, or
 * another negative errno.
 */
int process_of_id(pid_t id, pid_t *tgid);

/* Why the kernel refused to show process pid's mappings, as a hint. */
const char *mappings_refused_hint(void);

/* True if the file name is liboptrace's: liboptrace.so, .so.1, .so.1.2.3. */
int is_liboptrace_name(const char *path);

/* The parent of process pid (from /proc/PID/stat), or 0 when it is gone. */
pid_t process_parent(pid_t pid);

/*
 * When process pid started, in clock ticks since boot (/proc/PID/stat):
 * with the pid, names one process; 0 when it is gone.
 */
uint64_t process_start_time(pid_t pid);

/* The process's command name (comm), or "?" when it is gone. */
void process_name(pid_t pid, char *name, size_t size);

/*
 * Every process that maps liboptrace, by pid (callback returns non-zero to
 * stop). Returns 0 or a negative errno. One whose liboptrace path holds no
 * regular file (-ENOTREGULAR) is passed over, and counted.
 */
int for_each_liboptrace_process(int (*callback)(pid_t pid, const struct library *library,
						void *ctx),
				void *ctx);

/*
 * How many processes the last for_each_liboptrace_process() passed over;
 * the first of them (at most max) into pids.
 */
int liboptrace_processes_passed_over(pid_t *pids, int max);

#endif /* OPTRACE_TRACE_TARGETS_H */
