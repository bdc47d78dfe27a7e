/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The CUDA variant: GPU processors and the task points they run. Built
 * from cuda.cu where nvcc was found, against the static CUDA runtime, so
 * the demo needs no libcudart.so and runs where there is no GPU or driver;
 * otherwise cuda_stub.c says that this build has none. Nothing here calls
 * CUDA unless GPU processors were asked for.
 */
#ifndef DEMO_CUDA_H
#define DEMO_CUDA_H

#include <stdbool.h>
#include <stddef.h>

#include "work.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cuda_proc;

/* What one GPU point launched: the truth's gpu records. */
struct cuda_counts {
	unsigned int kernels;
	unsigned int copies;
	unsigned int memsets;
};

/* CUDA devices found, or -1 with *why set (no CUDA in this build, no GPU, ...). */
int cuda_device_count(const char **why);

/* GPU processor index, on device index % devices: its own stream. */
int cuda_proc_create(unsigned int index, struct cuda_proc **proc);

/* On the processor's worker thread, before its first point. */
void cuda_proc_bind(struct cuda_proc *proc);

void cuda_proc_destroy(struct cuda_proc *proc);

/* Whether the CUDA variant implements w (its kind and dtypes). */
bool cuda_supports(const struct work *w);

/*
 * Compute [begin, end) of w's extent on the GPU: inputs copied to the device,
 * kernels launched on the processor's stream, results copied back, then the
 * stream synchronized. A reduction adds its part into *acc. Returns 0, or -1
 * (error_set()) when a CUDA call failed; counts says what was launched.
 */
int cuda_point_run(struct cuda_proc *proc, const struct work *w, size_t begin, size_t end,
		   union work_value *acc, struct cuda_counts *counts);

#ifdef __cplusplus
}
#endif

#endif /* DEMO_CUDA_H */
