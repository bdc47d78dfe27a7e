// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Creation: fill, full, zeros, arange, linspace. As in cuPyNumeric, zeros
 * calls full, which calls fill, and linspace is arange scaled and shifted:
 * composites announce their mode after their helpers ran. On float16 a
 * composite falls back whole, without calling helpers.
 */
#include "demo.h"
#include "exec.h"
#include "op.h"

int demo_fill_at(struct demo_array *a, double value, const char *callsite)
{
	struct work w = { .kind = WORK_FILL, .scalar = value, .out = a };
	struct op op;

	op_begin(&op, "demo.fill", callsite);
	if (op_check_array(&op, a))
		exec_run(&op, &w);
	return op_end(&op);
}

struct demo_array *demo_full_at(size_t n, double value, enum demo_dtype dtype, const char *callsite)
{
	struct demo_array *a;
	struct op op;

	op_begin(&op, "demo.full", callsite);
	a = op_new_array(&op, dtype, 1, &n);
	if (!a)
		goto cleanup;
	if (dtype == DEMO_FLOAT16) {
		struct work w = { .kind = WORK_FILL, .scalar = value, .out = a };

		exec_fallback_dtype(&op, &w);
		goto cleanup;
	}
	if (demo_fill(a, value)) {
		op_fail_helper(&op);
		goto cleanup;
	}
	op_mode_from_helpers(&op);
cleanup:
	return op_finish_array(&op, a);
}

struct demo_array *demo_zeros_at(size_t n, enum demo_dtype dtype, const char *callsite)
{
	struct demo_array *a = NULL;
	struct op op;

	op_begin(&op, "demo.zeros", callsite);
	if (dtype == DEMO_FLOAT16) {
		struct work w = { .kind = WORK_FILL, .scalar = 0 };

		a = op_new_array(&op, dtype, 1, &n);
		if (!a)
			goto cleanup;
		w.out = a;
		exec_fallback_dtype(&op, &w);
		goto cleanup;
	}
	a = demo_full(n, 0.0, dtype);
	if (!a) {
		op_fail_helper(&op);
		goto cleanup;
	}
	op_mode_from_helpers(&op);
cleanup:
	return op_finish_array(&op, a);
}

struct demo_array *demo_arange_at(size_t n, enum demo_dtype dtype, const char *callsite)
{
	struct work w = { .kind = WORK_ARANGE };
	struct op op;

	op_begin(&op, "demo.arange", callsite);
	w.out = op_new_array(&op, dtype, 1, &n);
	if (w.out)
		exec_run(&op, &w);
	return op_finish_array(&op, w.out);
}

/* start + arange(n) * step, in place: numpy.linspace without endpoint fixup. */
struct demo_array *demo_linspace_at(double start, double stop, size_t n, const char *callsite)
{
	double step = n > 1 ? (stop - start) / (double)(n - 1) : 0.0;
	struct demo_array *a, *same = NULL;
	struct op op;

	op_begin(&op, "demo.linspace", callsite);
	a = demo_arange(n, DEMO_FLOAT64);
	if (!a)
		goto helper_failed;
	same = demo_multiply_scalar(a, step, a);
	if (!same)
		goto helper_failed;
	demo_array_put(same);
	same = demo_add_scalar(a, start, a);
	if (!same)
		goto helper_failed;
	demo_array_put(same);
	op_mode_from_helpers(&op);
	goto cleanup;
helper_failed:
	op_fail_helper(&op);
cleanup:
	return op_finish_array(&op, a);
}
