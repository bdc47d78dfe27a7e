/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A task point's body, by variant, and the completion of a launch's work. */
#ifndef DEMO_POINT_H
#define DEMO_POINT_H

#include <stdint.h>

#include "work.h"

/* Run point of w (one of w->points) as variant (enum optrace_variant). */
void point_run(struct work *w, uint32_t point, int variant, unsigned int omp_threads);

/*
 * Run point of w with the CUDA variant on a GPU processor, and count what it
 * launched in the truth under its launching and root operations' names and
 * its task's. A point whose CUDA calls fail is computed on the CPU instead,
 * with a warning.
 */
struct cuda_proc;
void point_run_gpu(struct cuda_proc *gpu, struct work *w, uint32_t point, const char *op_name,
		   const char *root_name, const char *task_name);

/* After the last point: combine a reduction's partials into its result. */
void point_finish(struct work *w);

#endif /* DEMO_POINT_H */
