/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The runtime's kernels: what a task point (or the eager path) computes on
 * a range of its work's iteration space. float16 never reaches them.
 */
#ifndef DEMO_KERNELS_H
#define DEMO_KERNELS_H

#include <stddef.h>

#include "work.h"

/* Compute [begin, end) of w's extent; a reduction adds its part into *acc. */
void kernel_range(const struct work *w, size_t begin, size_t end, union work_value *acc);

/* *acc += part, in the type of w's result. */
void kernel_accumulate(const struct work *w, union work_value *acc, union work_value part);

/* Write a reduction's result into w's 0-d output. */
void kernel_store_result(const struct work *w, union work_value result);

#endif /* DEMO_KERNELS_H */
