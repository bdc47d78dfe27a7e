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
 * A thread's view before its first call that begins something (view.h):
 * shared, never in the registry and never read, so that a call that ends
 * something writes to it without a test.
 */
extern struct optrace_thread_view optrace_view_unset OPTRACE_INTERNAL;

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
 * What a thread's exit and the process's forks do to liboptrace's state
 * (lifecycle.c: the batch buffer, then the view), given once at load: this
 * file calls them through these and knows neither.
 */
struct thread_hooks {
	void (*thread_exit)(struct thread_state *t); /* at its exit, on its own thread */
	void (*before_fork)(struct thread_state *t); /* in the parent, the forking thread */
	void (*in_child)(struct thread_state *t);    /* in the child, its one thread */
};

void optrace_thread_hooks(const struct thread_hooks *hooks) OPTRACE_INTERNAL;

/* The thread's exit and the process's forks reach t from now on (the hooks above). */
void optrace_thread_watch(struct thread_state *t) OPTRACE_INTERNAL;

#endif /* OPTRACE_THREAD_H */
