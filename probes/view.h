/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Thread views (include/optrace/abi.h): each thread's open operations,
 * running task points and wait, in a registry that tracers read from
 * outside (view.c).
 */
#ifndef OPTRACE_VIEW_H
#define OPTRACE_VIEW_H

#include "thread.h"

/*
 * The thread's view, set up at its first call that begins something
 * (op_begin, task_begin, wait_begin, task_launch); until then it is
 * optrace_view_unset (thread.h). Never NULL.
 */
struct optrace_thread_view *optrace_view_setup(struct thread_state *t) OPTRACE_INTERNAL;

static inline struct optrace_thread_view *optrace_view_of(struct thread_state *t)
{
	struct optrace_thread_view *view = t->view;

	if (__builtin_expect(view == &optrace_view_unset, 0))
		view = optrace_view_setup(t);
	return view;
}

/* The thread exits: its view is free for a later thread. */
void optrace_view_thread_exit(struct thread_state *t) OPTRACE_INTERNAL;
/* In a forked child: every other thread's view is free. */
void optrace_view_in_child(struct thread_state *t) OPTRACE_INTERNAL;

#endif /* OPTRACE_VIEW_H */
