// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Operation frames, argument checks and results. */
#include <stdarg.h>
#include <stdio.h>

#include <optrace/abi.h>

#include "error.h"
#include "mode.h"
#include "op.h"
#include "probe.h"

void op_begin(struct op *op, const char *name, const char *callsite)
{
	op->name = name;
	op->status = OPTRACE_STATUS_OK;
	op->id = probe_op_begin(name, callsite);
}

int op_end(struct op *op)
{
	probe_op_end(op->id, op->status);
	return op_failed(op) ? -1 : 0;
}

struct demo_array *op_finish_array(struct op *op, struct demo_array *result)
{
	if (op_end(op)) {
		demo_array_put(result);
		return NULL;
	}
	return result;
}

void op_fail(struct op *op, const char *fmt, ...)
{
	char message[200];
	va_list args;

	va_start(args, fmt);
	vsnprintf(message, sizeof(message), fmt, args);
	va_end(args);
	error_set("%s: %s", op->name, message);
	op->status = OPTRACE_STATUS_ERROR;
}

void op_fail_helper(struct op *op)
{
	op->status = OPTRACE_STATUS_ERROR;
}

bool op_failed(const struct op *op)
{
	return op->status != OPTRACE_STATUS_OK;
}

void op_mode(struct op *op, int mode, int reason)
{
	probe_op_mode(op->id, mode, reason);
}

void op_mode_from_helpers(struct op *op)
{
	op_mode(op, mode_of_helpers(probe_helper_modes()), OPTRACE_MODE_REASON_HELPERS);
}

void op_fallback(struct op *op, int reason, const char *detail)
{
	probe_op_fallback(op->id, reason, detail);
}

bool op_check_array(struct op *op, const struct demo_array *a)
{
	if (a)
		return true;
	op_fail(op, "no array");
	return false;
}

bool op_check_1d(struct op *op, const struct demo_array *a)
{
	if (!op_check_array(op, a))
		return false;
	if (a->ndim == 1)
		return true;
	op_fail(op, "needs a 1-D array, not %u-D", a->ndim);
	return false;
}

struct demo_array *op_new_array(struct op *op, enum demo_dtype dtype, unsigned int ndim,
				const size_t *shape)
{
	struct demo_array *a;

	if (!dtype_valid(dtype)) {
		op_fail(op, "unknown dtype %d", (int)dtype);
		return NULL;
	}
	a = array_new(dtype, ndim, shape);
	if (!a)
		op_fail(op, "out of memory");
	return a;
}

struct demo_array *op_result(struct op *op, struct demo_array *out, enum demo_dtype dtype,
			     const struct demo_array *like)
{
	if (!out)
		return op_new_array(op, dtype, like->ndim, like->shape);
	if (out->dtype != dtype) {
		op_fail(op, "out is %s, the result %s", demo_dtype_name(out->dtype),
			demo_dtype_name(dtype));
		return NULL;
	}
	if (!array_same_shape(out, like)) {
		op_fail(op, "out has %zu elements in %u-D, the result %zu in %u-D",
			array_volume(out), out->ndim, array_volume(like), like->ndim);
		return NULL;
	}
	return demo_array_get(out);
}
