/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Element types: sizes, promotion, and access as double. */
#ifndef DEMO_DTYPE_H
#define DEMO_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "demo.h"

bool dtype_valid(int dtype);
size_t dtype_size(enum demo_dtype dtype);

/* NumPy's result type of a binary operation on two arrays. */
enum demo_dtype dtype_promote(enum demo_dtype a, enum demo_dtype b);

/* The result type of true division and sqrt: integers become float64. */
enum demo_dtype dtype_inexact(enum demo_dtype dtype);

double dtype_load(enum demo_dtype dtype, const void *element);
void dtype_store(enum demo_dtype dtype, void *element, double value);

/* A C cast that is defined for every double: NaN is 0, the rest saturates. */
int64_t dtype_double_to_int64(double value);

#endif /* DEMO_DTYPE_H */
