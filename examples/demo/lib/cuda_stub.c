// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * No CUDA variant: what the demo links when nvcc was not found at build
 * time. The symbols are weak, so that cuda.o, linked beside libdemo.a when
 * there is one, wins wherever the linker meets this file.
 */
#include <errno.h>

#include "cuda.h"
#include "error.h"

#define WEAK __attribute__((weak))

WEAK int cuda_device_count(const char **why)
{
	*why = "this build has no CUDA variant (nvcc was not found when it was built)";
	return -1;
}

WEAK int cuda_proc_create(unsigned int index, struct cuda_proc **proc)
{
	(void)index;
	*proc = NULL;
	error_set("this build has no CUDA variant");
	return -ENOSYS;
}

WEAK void cuda_proc_bind(struct cuda_proc *proc)
{
	(void)proc;
}

WEAK void cuda_proc_destroy(struct cuda_proc *proc)
{
	(void)proc;
}

WEAK bool cuda_supports(const struct work *w)
{
	(void)w;
	return false;
}

WEAK int cuda_point_run(struct cuda_proc *proc, const struct work *w, size_t begin, size_t end,
			union work_value *acc, struct cuda_counts *counts)
{
	(void)proc;
	(void)w;
	(void)begin;
	(void)end;
	(void)acc;
	(void)counts;
	error_set("this build has no CUDA variant");
	return -1;
}
