// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * liboptrace-starpu: StarPU's tasks as optrace tasks, in an unmodified StarPU
 * program (LD_PRELOAD). StarPU 1.3 has no tool interface, so the library
 * interposes starpu_task_submit(), which starpu_task_insert() and the rest
 * reach through the PLT, and chains two callbacks of each task it submits:
 *
 * - the submit is a task_launch (the task's or its codelet's name, one
 *   point) of the innermost optrace operation open on the submitting thread;
 * - prologue_callback_pop_func runs on the worker that took the task: a
 *   task_begin there, its variant the worker's kind (CPU, CUDA, OpenCL) and
 *   its processor the worker;
 * - callback_func runs once the body is done, on that worker: task_end.
 *
 * The program's own callbacks are called after, with their arguments, and
 * freed as it asked (callback_arg_free, prologue_callback_pop_arg_free).
 * Untraced, a submit costs one check of liboptrace's semaphores.
 */
#include <stdbool.h>
#include <stdlib.h>

#include <starpu.h>

#include <optrace/optrace.h>

#include "intern.h"
#include "real.h"

/* What one submitted task carries through its callbacks. */
struct traced_task {
	struct starpu_task *task;
	uint64_t id;
	uint32_t runs; /* a regenerated task runs again: its point */
	void (*pop_func)(void *);
	void *pop_arg;
	bool pop_arg_free;
	void (*callback_func)(void *);
	void *callback_arg;
	bool callback_arg_free;
};

typedef int (*submit_fn)(struct starpu_task *task);

static int variant_of_worker(int worker)
{
	if (worker < 0)
		return OPTRACE_VARIANT_CPU;
	switch (starpu_worker_get_type(worker)) {
	case STARPU_CUDA_WORKER:
		return OPTRACE_VARIANT_GPU;
	case STARPU_OPENCL_WORKER:
		return OPTRACE_VARIANT_OPENCL;
	default:
		return OPTRACE_VARIANT_CPU;
	}
}

static void on_pop(void *arg)
{
	struct traced_task *traced = arg;
	int worker = starpu_worker_get_id();

	optrace_task_begin(traced->id, traced->runs, variant_of_worker(worker),
			   worker < 0 ? 0 : (uint32_t)worker);
	if (traced->pop_func)
		traced->pop_func(traced->pop_arg);
}

static void on_done(void *arg)
{
	struct traced_task *traced = arg;
	struct starpu_task *task = traced->task;

	optrace_task_end(traced->id, traced->runs, OPTRACE_STATUS_OK);
	traced->runs++;
	if (traced->callback_func)
		traced->callback_func(traced->callback_arg);
	/* Regenerated, it runs again with the same callbacks: keep them. */
	if (task->regenerate)
		return;
	if (traced->callback_arg_free)
		free(traced->callback_arg);
	if (traced->pop_arg_free)
		free(traced->pop_arg);
	free(traced);
}

static const char *name_of(const struct starpu_task *task)
{
	const char *name = task->name;

	if (!name && task->cl)
		name = task->cl->name;
	/* The task and its name may be gone before a tracer reads the name. */
	return optrace_starpu_intern(name ? name : "starpu_task");
}

/* Puts the program's callbacks back, as they were before submit. */
static void restore(struct starpu_task *task, struct traced_task *traced)
{
	task->prologue_callback_pop_func = traced->pop_func;
	task->prologue_callback_pop_arg = traced->pop_arg;
	task->prologue_callback_pop_arg_free = traced->pop_arg_free;
	task->callback_func = traced->callback_func;
	task->callback_arg = traced->callback_arg;
	task->callback_arg_free = traced->callback_arg_free;
}

INTERPOSED int starpu_task_submit(struct starpu_task *task)
{
	struct traced_task *traced;
	int err;

	REAL(submit_fn, starpu_task_submit);
	submit_fn submit = found_starpu_task_submit;

	if (!task || !optrace_enabled() || !task->cl)
		return submit(task);
	traced = calloc(1, sizeof(*traced));
	if (!traced)
		return submit(task);
	*traced = (struct traced_task){
		.task = task,
		.pop_func = task->prologue_callback_pop_func,
		.pop_arg = task->prologue_callback_pop_arg,
		.pop_arg_free = task->prologue_callback_pop_arg_free,
		.callback_func = task->callback_func,
		.callback_arg = task->callback_arg,
		.callback_arg_free = task->callback_arg_free,
	};
	traced->id = optrace_task_launch(optrace_current_op(), name_of(task), 1);
	task->prologue_callback_pop_func = on_pop;
	task->prologue_callback_pop_arg = traced;
	task->prologue_callback_pop_arg_free = 0;
	task->callback_func = on_done;
	task->callback_arg = traced;
	task->callback_arg_free = 0;
	err = submit(task);
	if (err) {
		restore(task, traced);
		free(traced);
	}
	return err;
}
