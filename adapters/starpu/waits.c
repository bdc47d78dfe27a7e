// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * StarPU's waits as optrace waits of the operation open on the waiting
 * thread: starpu_task_wait_for_all() a fence, starpu_task_wait() a wait on
 * one task's result, starpu_data_acquire() host access to data that tasks
 * may still be writing. Untraced, each costs one check of the semaphores.
 */

#include <starpu.h>

#include <optrace/optrace.h>

#include "real.h"

typedef int (*wait_all_fn)(void);
typedef int (*wait_fn)(struct starpu_task *task);
typedef int (*acquire_fn)(starpu_data_handle_t handle, enum starpu_data_access_mode mode);

INTERPOSED int starpu_task_wait_for_all(void)
{
	uint64_t op;
	int err;

	REAL(wait_all_fn, starpu_task_wait_for_all);
	if (!optrace_enabled())
		return found_starpu_task_wait_for_all();
	op = optrace_current_op();
	optrace_wait_begin(op, OPTRACE_WAIT_FENCE);
	err = found_starpu_task_wait_for_all();
	optrace_wait_end(op, OPTRACE_WAIT_FENCE);
	return err;
}

INTERPOSED int starpu_task_wait(struct starpu_task *task)
{
	uint64_t op;
	int err;

	REAL(wait_fn, starpu_task_wait);
	if (!optrace_enabled())
		return found_starpu_task_wait(task);
	op = optrace_current_op();
	optrace_wait_begin(op, OPTRACE_WAIT_OTHER);
	err = found_starpu_task_wait(task);
	optrace_wait_end(op, OPTRACE_WAIT_OTHER);
	return err;
}

INTERPOSED int starpu_data_acquire(starpu_data_handle_t handle, enum starpu_data_access_mode mode)
{
	uint64_t op;
	int err;

	REAL(acquire_fn, starpu_data_acquire);
	if (!optrace_enabled())
		return found_starpu_data_acquire(handle, mode);
	op = optrace_current_op();
	optrace_wait_begin(op, OPTRACE_WAIT_INLINE_MAP);
	err = found_starpu_data_acquire(handle, mode);
	optrace_wait_end(op, OPTRACE_WAIT_INLINE_MAP);
	return err;
}
