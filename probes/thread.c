// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A thread's life as liboptrace sees it: at its exit its batch buffer is
 * handed over and its view freed for a later thread; before a fork the
 * parent hands over what it holds, and in the child every other thread's
 * buffer and view are free again.
 */
#include <pthread.h>
#include <stdbool.h>

#include "thread.h"

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static bool exit_key_ok;

static void on_thread_exit(void *value)
{
	struct thread_state *t = &optrace_thread;

	(void)value;
	optrace_batch_thread_exit(t);
	optrace_view_thread_exit(t);
}

static void before_fork(void)
{
	optrace_batch_before_fork(&optrace_thread);
}

static void in_child(void)
{
	optrace_batch_in_child(&optrace_thread);
	optrace_view_in_child(&optrace_thread);
}

static void setup_process(void)
{
	exit_key_ok = pthread_key_create(&exit_key, on_thread_exit) == 0;
	pthread_atfork(before_fork, NULL, in_child);
}

void optrace_thread_watch(struct thread_state *t)
{
	pthread_once(&setup_once, setup_process);
	/* Any value but NULL: the key's destructor runs at the thread's exit. */
	if (exit_key_ok)
		pthread_setspecific(exit_key, t);
}
