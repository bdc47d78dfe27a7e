// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Task points. A point owns a contiguous piece of its work's extent. The
 * CPU variant computes it on the processor's thread; the OpenMP variant
 * splits it again over an OpenMP team; the host reference variant runs the
 * whole reference path (its task has one point). Partial results are kept
 * per point and per team member and combined in order, so that a result
 * does not depend on which thread finished first.
 */
#include <stdio.h>

#include <optrace/abi.h>

#include "config.h"
#include "cuda.h"
#include "demo.h"
#include "kernels.h"
#include "point.h"
#include "reference.h"
#include "truth.h"

/* Piece k of n of [begin, end). */
static size_t split(size_t begin, size_t end, unsigned int k, unsigned int n)
{
	return begin + (size_t)((unsigned __int128)(end - begin) * k / n);
}

static void run_openmp(const struct work *w, size_t begin, size_t end, union work_value *acc,
		       unsigned int threads)
{
	union work_value parts[CONFIG_MAX_OMP_THREADS];
	int chunks = (int)threads, chunk;

#pragma omp parallel for num_threads(threads) schedule(static, 1)
	for (chunk = 0; chunk < chunks; chunk++) {
		parts[chunk].i = 0;
		kernel_range(w, split(begin, end, (unsigned int)chunk, threads),
			     split(begin, end, (unsigned int)chunk + 1, threads), &parts[chunk]);
	}
	if (!work_reduces(w))
		return;
	for (chunk = 0; chunk < chunks; chunk++)
		kernel_accumulate(w, acc, parts[chunk]);
}

void point_run(struct work *w, uint32_t point, int variant, unsigned int omp_threads)
{
	size_t extent = work_extent(w);
	size_t begin = split(0, extent, point, w->points);
	size_t end = split(0, extent, point + 1, w->points);
	union work_value scratch = { 0 };
	union work_value *acc = w->partials ? &w->partials[point] : &scratch;

	switch (variant) {
	case OPTRACE_VARIANT_HOST_REFERENCE:
		reference_run(w);
		break;
	case OPTRACE_VARIANT_OPENMP:
		run_openmp(w, begin, end, acc, omp_threads);
		break;
	default:
		kernel_range(w, begin, end, acc);
		break;
	}
}

void point_run_gpu(struct cuda_proc *gpu, struct work *w, uint32_t point, const char *op_name,
		   const char *root_name, const char *task_name)
{
	size_t extent = work_extent(w);
	size_t begin = split(0, extent, point, w->points);
	size_t end = split(0, extent, point + 1, w->points);
	union work_value scratch = { 0 };
	union work_value *acc = w->partials ? &w->partials[point] : &scratch;
	struct cuda_counts counts;
	static int warned;

	if (cuda_point_run(gpu, w, begin, end, acc, &counts)) {
		/* A wrong result would fail the workload: compute it here instead. */
		if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
			fprintf(stderr,
				"optrace-demo: GPU task point failed (%s); running on the "
				"CPU instead\n",
				demo_last_error());
		kernel_range(w, begin, end, acc);
	}
	truth_count_gpu(op_name, root_name, task_name, TRUTH_GPU_POINTS, 1);
	truth_count_gpu(op_name, root_name, task_name, TRUTH_GPU_KERNELS, counts.kernels);
	truth_count_gpu(op_name, root_name, task_name, TRUTH_GPU_COPIES, counts.copies);
	truth_count_gpu(op_name, root_name, task_name, TRUTH_GPU_MEMSETS, counts.memsets);
}

void point_finish(struct work *w)
{
	union work_value result = { 0 };
	uint32_t point;

	if (!w->partials)
		return;
	for (point = 0; point < w->points; point++)
		kernel_accumulate(w, &result, w->partials[point]);
	kernel_store_result(w, result);
}
