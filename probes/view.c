// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Thread views (include/optrace/abi.h): each thread's open operations,
 * running task points and wait, for `optrace dump`. A view is set up at the
 * thread's first call, kept in a registry that tracers read from outside
 * (the exported optrace_threads) and reused by a later thread once its
 * thread exits: views are never freed, so that a reader walking the
 * registry never follows a pointer into freed memory.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "view.h"

/* Used through a local name: see optrace_batches in batch.c (copy relocations). */
static struct optrace_view_registry registry = {
	.magic = OPTRACE_VIEW_REGISTRY_MAGIC,
	.view_size = sizeof(struct optrace_thread_view),
};
extern struct optrace_view_registry optrace_threads __attribute__((alias("registry")));

/*
 * A thread's view when there was no memory for one: like optrace_view_unset
 * (thread.c), shared, never in the registry, so that the calls that end
 * something need no test of their own.
 */
static struct optrace_thread_view sink;

static struct optrace_thread_view *registry_first(void)
{
	return (struct optrace_thread_view *)(uintptr_t)__atomic_load_n(&registry.head,
									__ATOMIC_ACQUIRE);
}

static struct optrace_thread_view *registry_next(const struct optrace_thread_view *view)
{
	return (struct optrace_thread_view *)(uintptr_t)view->next;
}

/* A view another thread left, or a new one. */
static struct optrace_thread_view *claim_view(uint32_t tid)
{
	struct optrace_thread_view *view;

	for (view = registry_first(); view; view = registry_next(view)) {
		uint32_t free_tid = 0;

		if (__atomic_compare_exchange_n(&view->tid, &free_tid, tid, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			return view;
	}
	view = aligned_alloc(64, (sizeof(*view) + 63) & ~(size_t)63);
	if (!view)
		return NULL;
	memset(view, 0, sizeof(*view));
	view->magic = OPTRACE_VIEW_MAGIC;
	view->tid = tid;
	optrace_registry_push(&registry.head, &view->next, view);
	return view;
}

struct optrace_thread_view *optrace_view_setup(struct thread_state *t)
{
	struct optrace_thread_view *view;

	t->tid = (uint32_t)gettid();
	view = claim_view(t->tid);
	if (!view) {
		t->view = &sink;
		return t->view;
	}
	view->depth = 0;
	view->waiting = 0;
	memset(view->points, 0, sizeof(view->points));
	t->view = view;
	optrace_thread_watch(t);
	return view;
}

/* Its operations no longer open anywhere: free for the next thread. */
void optrace_view_thread_exit(struct thread_state *t)
{
	struct optrace_thread_view *view = t->view;

	if (view == &optrace_view_unset || view == &sink)
		return;
	t->view = &optrace_view_unset;
	view->depth = 0;
	view->waiting = 0;
	memset(view->points, 0, sizeof(view->points));
	__atomic_store_n(&view->tid, 0, __ATOMIC_RELEASE);
}

/* In the child: this thread only; what it has open stays open in the child too. */
void optrace_view_in_child(struct thread_state *t)
{
	for (struct optrace_thread_view *view = registry_first(); view;
	     view = registry_next(view)) {
		if (view != t->view)
			view->tid = 0;
	}
	if (t->view != &optrace_view_unset && t->view != &sink) {
		t->tid = (uint32_t)gettid();
		t->view->tid = t->tid;
	}
}
