/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * liboptrace's per-thread state: the fast path's buffer, id blocks and the
 * thread's view (its open operations, points and wait, which tracers read
 * from outside). It lives in initial-exec TLS so that reaching it is one
 * instruction; the view lives on the heap, where a reader can find it.
 */
#ifndef OPTRACE_THREAD_H
#define OPTRACE_THREAD_H

#include <stdint.h>

#include <optrace/abi.h>

/* liboptrace's own symbols, not exported (the version script exports optrace_*). */
#define OPTRACE_INTERNAL __attribute__((visibility("hidden")))

/* Deeper operations are still traced; their parent is reported as 0. */
#define OPTRACE_STACK_DEPTH OPTRACE_VIEW_DEPTH

struct id_block {
	uint64_t next;
	uint64_t end;
};

/* Kept small: a dlopen()ed library's static TLS comes from a small surplus. */
struct thread_state {
	struct optrace_thread_view *view; /* never NULL: see optrace_view_of() */
	uint32_t tid;			  /* set with the view or the batch buffer */
	uint32_t reserved;
	struct optrace_batch *batch;
	const char *root_name; /* the depth-0 op's name, while it is traced */
	struct id_block ops;
	struct id_block tasks;
	uint64_t last_event_ns; /* clock.h: an event's time is never less */
};

extern __thread struct thread_state optrace_thread __attribute__((tls_model("initial-exec")))
OPTRACE_INTERNAL;

/*
 * probes/view.c: the thread's view, set up at its first call that begins
 * something (op_begin, task_begin, wait_begin, task_launch); until then it
 * is optrace_view_unset, shared and never read, so that a call that ends
 * something writes to it without a test. Never NULL.
 */
extern struct optrace_thread_view optrace_view_unset OPTRACE_INTERNAL;
struct optrace_thread_view *optrace_view_setup(struct thread_state *t) OPTRACE_INTERNAL;

static inline struct optrace_thread_view *optrace_view_of(struct thread_state *t)
{
	struct optrace_thread_view *view = t->view;

	if (__builtin_expect(view == &optrace_view_unset, 0))
		view = optrace_view_setup(t);
	return view;
}

/*
 * Puts node (whose next field is *next) at the head of a registry that
 * tracers walk from outside: lock-free, and whole before it is seen.
 */
static inline void optrace_registry_push(uint64_t *head, uint64_t *next, void *node)
{
	uint64_t old = __atomic_load_n(head, __ATOMIC_RELAXED);

	do {
		*next = old;
	} while (!__atomic_compare_exchange_n(head, &old, (uintptr_t)node, false, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

/*
 * probes/thread.c: the thread's exit and the process's forks reach the
 * batch buffer and the view of every thread that called optrace_thread_watch().
 */
void optrace_thread_watch(struct thread_state *t) OPTRACE_INTERNAL;
void optrace_batch_thread_exit(struct thread_state *t) OPTRACE_INTERNAL;
void optrace_batch_before_fork(struct thread_state *t) OPTRACE_INTERNAL;
void optrace_batch_in_child(struct thread_state *t) OPTRACE_INTERNAL;
void optrace_view_thread_exit(struct thread_state *t) OPTRACE_INTERNAL;
void optrace_view_in_child(struct thread_state *t) OPTRACE_INTERNAL;

#endif /* OPTRACE_THREAD_H */
