// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * liboptrace's per-thread state, and a thread's life: at its exit and at a
 * fork, the hooks that lifecycle.c gave at load run (its batch buffer
 * handed over, its view freed for a later thread).
 */
#include <pthread.h>
#include <stdbool.h>

#include "thread.h"

__thread struct thread_state optrace_thread
	__attribute__((tls_model("initial-exec"))) = { .view = &optrace_view_unset };

struct optrace_thread_view optrace_view_unset;

static const struct thread_hooks *hooks;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static bool exit_key_ok;

void optrace_thread_hooks(const struct thread_hooks *given)
{
	__atomic_store_n(&hooks, given, __ATOMIC_RELEASE);
}

static const struct thread_hooks *current_hooks(void)
{
	return __atomic_load_n(&hooks, __ATOMIC_ACQUIRE);
}

static void on_thread_exit(void *value)
{
	const struct thread_hooks *h = current_hooks();

	(void)value;
	if (h)
		h->thread_exit(&optrace_thread);
}

static void before_fork(void)
{
	const struct thread_hooks *h = current_hooks();

	if (h)
		h->before_fork(&optrace_thread);
}

static void in_child(void)
{
	const struct thread_hooks *h = current_hooks();

	if (h)
		h->in_child(&optrace_thread);
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
