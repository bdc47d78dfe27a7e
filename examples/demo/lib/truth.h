/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The ground truth: how often each probe fired, by what it carried. */
#ifndef DEMO_TRUTH_H
#define DEMO_TRUTH_H

#include <stdint.h>

/* In the order the truth file lists them. */
enum truth_kind {
	TRUTH_OP,	/* name, depth */
	TRUTH_MODE,	/* name, mode, reason */
	TRUTH_FALLBACK, /* name, reason */
	TRUTH_STATUS,	/* name, status */
	TRUTH_LAUNCH,	/* task name; points summed */
	TRUTH_TASK,	/* task name, variant */
	TRUTH_GPU,	/* op, root op and task names, what: GPU task points' work */
	TRUTH_WAIT,	/* kind */
	TRUTH__COUNT
};

/* Count one probe call. name must live as long as the process. */
void truth_count(enum truth_kind kind, const char *name, int a, int b, uint64_t points);

/*
 * What GPU task points launched, by the operation that launched their task
 * and the operation the user called (its depth-0 ancestor, or itself): what
 * a CUDA collector should attribute to them. Not a probe of liboptrace.
 */
enum truth_gpu_what {
	TRUTH_GPU_POINTS,  /* task points run by the CUDA variant */
	TRUTH_GPU_KERNELS, /* kernels they launched */
	TRUTH_GPU_COPIES,  /* cudaMemcpyAsync calls they made */
	TRUTH_GPU_MEMSETS, /* cudaMemsetAsync calls (the demo makes none) */
	TRUTH_GPU__COUNT
};

void truth_count_gpu(const char *op_name, const char *root_name, const char *task_name,
		     enum truth_gpu_what what, uint64_t count);

#endif /* DEMO_TRUTH_H */
