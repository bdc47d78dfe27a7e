// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Reductions: sum (a ScalarReduction task), and the composites built on it
 * the way cuPyNumeric builds them: mean = sum / n; var = mean of squared
 * deviations; norm = sqrt(sum(a * a)). Each gives a 0-d array, a future
 * while deferred. dot is a Dot task: 1-D . 1-D or matrix . vector.
 */
#include "demo.h"
#include "exec.h"
#include "op.h"

/* A composite on float16 runs its reference whole, into a 0-d float16. */
static struct demo_array *reduce_fallback(struct op *op, enum work_kind kind, struct demo_array *a)
{
	struct work w = { .kind = kind, .in = { a } };

	w.out = op_new_array(op, a->dtype, 0, NULL);
	if (w.out)
		exec_fallback_dtype(op, &w);
	return w.out;
}

struct demo_array *demo_sum_at(struct demo_array *a, const char *callsite)
{
	struct work w = { .kind = WORK_SUM, .in = { a } };
	struct op op;

	op_begin(&op, "demo.sum", callsite);
	if (!op_check_array(&op, a))
		goto cleanup;
	w.out = op_new_array(&op, a->dtype, 0, NULL);
	if (w.out)
		exec_run(&op, &w);
cleanup:
	return op_finish_array(&op, w.out);
}

struct demo_array *demo_mean_at(struct demo_array *a, const char *callsite)
{
	struct demo_array *sum = NULL, *result = NULL;
	struct op op;

	op_begin(&op, "demo.mean", callsite);
	if (!op_check_array(&op, a))
		goto cleanup;
	if (a->dtype == DEMO_FLOAT16) {
		result = reduce_fallback(&op, WORK_MEAN, a);
		goto cleanup;
	}
	sum = demo_sum(a);
	if (sum)
		result = demo_divide_scalar(sum, (double)array_volume(a), NULL);
	if (!result) {
		op_fail_helper(&op);
		goto cleanup;
	}
	op_mode_from_helpers(&op);
cleanup:
	demo_array_put(sum);
	return op_finish_array(&op, result);
}

struct demo_array *demo_var_at(struct demo_array *a, const char *callsite)
{
	struct demo_array *mean = NULL, *deviation = NULL, *square = NULL, *sum = NULL;
	struct demo_array *result = NULL;
	struct op op;

	op_begin(&op, "demo.var", callsite);
	if (!op_check_array(&op, a))
		goto cleanup;
	if (a->dtype == DEMO_FLOAT16) {
		result = reduce_fallback(&op, WORK_VAR, a);
		goto cleanup;
	}
	mean = demo_mean(a);
	if (!mean)
		goto helper_failed;
	deviation = demo_subtract(a, mean, NULL);
	if (!deviation)
		goto helper_failed;
	square = demo_multiply(deviation, deviation, NULL);
	if (!square)
		goto helper_failed;
	sum = demo_sum(square);
	if (!sum)
		goto helper_failed;
	result = demo_divide_scalar(sum, (double)array_volume(a), NULL);
	if (!result)
		goto helper_failed;
	op_mode_from_helpers(&op);
	goto cleanup;
helper_failed:
	op_fail_helper(&op);
cleanup:
	demo_array_put(sum);
	demo_array_put(square);
	demo_array_put(deviation);
	demo_array_put(mean);
	return op_finish_array(&op, result);
}

struct demo_array *demo_norm_at(struct demo_array *a, const char *callsite)
{
	struct demo_array *square = NULL, *sum = NULL, *result = NULL;
	struct op op;

	op_begin(&op, "demo.norm", callsite);
	if (!op_check_array(&op, a))
		goto cleanup;
	if (a->dtype == DEMO_FLOAT16) {
		result = reduce_fallback(&op, WORK_NORM, a);
		goto cleanup;
	}
	square = demo_multiply(a, a, NULL);
	if (square)
		sum = demo_sum(square);
	if (sum)
		result = demo_sqrt(sum, NULL);
	if (!result) {
		op_fail_helper(&op);
		goto cleanup;
	}
	op_mode_from_helpers(&op);
cleanup:
	demo_array_put(sum);
	demo_array_put(square);
	return op_finish_array(&op, result);
}

struct demo_array *demo_dot_at(struct demo_array *a, struct demo_array *b, const char *callsite)
{
	struct work w = { .kind = WORK_DOT, .in = { a, b } };
	size_t rows;
	struct op op;

	op_begin(&op, "demo.dot", callsite);
	if (!op_check_array(&op, a) || !op_check_1d(&op, b))
		goto cleanup;
	if (a->ndim == 1 && a->shape[0] == b->shape[0]) {
		w.out = op_new_array(&op, dtype_promote(a->dtype, b->dtype), 0, NULL);
	} else if (a->ndim == 2 && a->shape[1] == b->shape[0]) {
		rows = a->shape[0];
		w.out = op_new_array(&op, dtype_promote(a->dtype, b->dtype), 1, &rows);
	} else {
		op_fail(&op, "shapes do not align: %u-D of %zu elements . %zu elements", a->ndim,
			array_volume(a), b->shape[0]);
		goto cleanup;
	}
	if (w.out)
		exec_run(&op, &w);
cleanup:
	return op_finish_array(&op, w.out);
}
