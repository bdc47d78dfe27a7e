/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What each thread of a process is doing now, read from liboptrace's thread
 * views (struct optrace_thread_view, the exported optrace_threads) in the
 * process's memory with process_vm_readv: its open operations, the task
 * points running on it and its wait. Nothing is attached and the process is
 * not stopped, so it works on a process stuck in a system call or a spin
 * loop, and on one no tracer ever armed. The process is untrusted: the walk
 * is bounded, every view checked, every string bounded and read apart.
 */
#ifndef OPTRACE_TRACE_VIEW_READ_H
#define OPTRACE_TRACE_VIEW_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <optrace/abi.h>

#define VIEW_TEXT_MAX 256 /* a name or call site, cut with "..." past it */

struct view_op {
	uint64_t id;	   /* 0: begun while untraced */
	uint64_t begin_ns; /* 0: begun while untraced (no age) */
	int mode;	   /* enum optrace_mode, -1 until announced */
	int reason;	   /* enum optrace_mode_reason, with mode */
	char name[VIEW_TEXT_MAX];
	char callsite[VIEW_TEXT_MAX]; /* "" if none */
};

struct view_point {
	uint64_t task;	   /* 0: launched while untraced */
	uint64_t begin_ns; /* 0: begun while untraced */
	uint32_t point;
	uint32_t processor;
	int variant;		  /* enum optrace_variant */
	char name[VIEW_TEXT_MAX]; /* "" if unknown */
};

struct view_thread {
	uint32_t tid;
	char comm[32];
	uint32_t depth;	 /* operations open, ops the outermost op_count of them */
	size_t op_count; /* at most OPTRACE_VIEW_DEPTH */
	struct view_op ops[OPTRACE_VIEW_DEPTH];
	size_t point_count;
	struct view_point points[OPTRACE_VIEW_POINTS];
	bool waiting;
	int wait_kind; /* enum optrace_wait_kind */
	uint64_t wait_op;
	uint64_t wait_begin_ns;
};

struct process_view {
	pid_t pid;
	char comm[32];
	int rank; /* -1 if the runtime announced none */
	int rank_count;
	uint64_t now_ns; /* CLOCK_MONOTONIC when it was read */
	size_t thread_count;
	struct view_thread *threads; /* the threads that have a view, busy or idle */
	unsigned int rejected;	     /* views that made no sense (a hostile or torn read) */
};

/* Ages only: the names and call sites are not read ("" in the view). */
#define VIEW_READ_AGES 1u

/*
 * Reads process pid's views into view (flags: VIEW_READ_AGES, or 0). 0, or a negative errno: -ESRCH
 * (no such process), -ENOENT (no liboptrace), -ENOTSUP (a liboptrace older than the views), -EPROTO
 * (a registry that makes no sense), -ENOMEM, or what process_vm_readv said (-EPERM).
 */
int view_read_process(pid_t pid, struct process_view *view, unsigned int flags);

void process_view_free(struct process_view *view);

/* A thread with nothing open, running or waited on. */
bool view_thread_idle(const struct view_thread *thread);

/* How long something begun at begin_ns has been open at the view's time; false: unknown. */
bool view_age(const struct process_view *view, uint64_t begin_ns, uint64_t *age_ns);

/* The oldest ages of a process's open operations and running points. */
struct view_oldest {
	uint64_t op_ns, point_ns;	/* the oldest known age; 0 if none is known */
	bool op_unknown, point_unknown; /* one open has no known age (begun untraced) */
};

void process_view_oldest(const struct process_view *view, struct view_oldest *oldest);

#endif /* OPTRACE_TRACE_VIEW_READ_H */
