// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sort, which the runtime does not implement (it always runs the host
 * reference, like an API cuPyNumeric lacks), and median, a composite of
 * sort and mean whose helpers run in different modes: MIXED.
 */
#include <optrace/abi.h>

#include "demo.h"
#include "exec.h"
#include "op.h"

static const char *const sort_detail = "sort is not implemented; running the host reference";

struct demo_array *demo_sort_at(struct demo_array *a, const char *callsite)
{
	struct work w = { .kind = WORK_SORT, .in = { a } };
	struct op op;

	op_begin(&op, "demo.sort", callsite);
	if (!op_check_1d(&op, a))
		goto cleanup;
	w.out = op_new_array(&op, a->dtype, 1, a->shape);
	if (!w.out)
		goto cleanup;
	if (work_has_float16(&w))
		exec_fallback_dtype(&op, &w);
	else
		exec_fallback(&op, &w, OPTRACE_FALLBACK_UNIMPLEMENTED_API, sort_detail);
cleanup:
	return op_finish_array(&op, w.out);
}

/* The mean of the middle one or two elements of the sorted array. */
struct demo_array *demo_median_at(struct demo_array *a, const char *callsite)
{
	struct demo_array *sorted = NULL, *middle = NULL, *result = NULL;
	size_t n, first, count;
	struct op op;

	op_begin(&op, "demo.median", callsite);
	if (!op_check_1d(&op, a))
		goto cleanup;
	if (a->dtype == DEMO_FLOAT16) {
		struct work w = { .kind = WORK_MEDIAN, .in = { a } };

		w.out = result = op_new_array(&op, a->dtype, 0, NULL);
		if (result)
			exec_fallback_dtype(&op, &w);
		goto cleanup;
	}
	n = array_volume(a);
	first = n % 2 || !n ? n / 2 : n / 2 - 1;
	count = n % 2 ? 1 : (n ? 2 : 0);
	sorted = demo_sort(a);
	if (sorted)
		middle = demo_slice(sorted, first, first + count);
	if (middle)
		result = demo_mean(middle);
	if (!result) {
		op_fail_helper(&op);
		goto cleanup;
	}
	op_mode_from_helpers(&op);
cleanup:
	demo_array_put(middle);
	demo_array_put(sorted);
	return op_finish_array(&op, result);
}
