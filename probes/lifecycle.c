// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A thread's life as liboptrace sees it: at its exit its batch buffer is
 * handed over and its view freed for a later thread; before a fork the
 * parent hands over what it holds, and in the child every other thread's
 * buffer and view are free again. thread.c runs these through its hooks,
 * so that it calls neither batch.c nor view.c, which call it.
 */
#include "batch.h"
#include "thread.h"
#include "view.h"

static void thread_exit(struct thread_state *t)
{
	optrace_batch_thread_exit(t);
	optrace_view_thread_exit(t);
}

static void in_child(struct thread_state *t)
{
	optrace_batch_in_child(t);
	optrace_view_in_child(t);
}

static const struct thread_hooks hooks = {
	.thread_exit = thread_exit,
	.before_fork = optrace_batch_before_fork,
	.in_child = in_child,
};

/* At load, before any thread of the process calls in. */
__attribute__((constructor)) static void watch_threads(void)
{
	optrace_thread_hooks(&hooks);
}
