// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Element-wise operations: add, subtract, multiply, divide (array with
 * array, or with a scalar), sqrt, and round. Result types follow NumPy:
 * promotion between arrays, true division and sqrt of int64 give float64,
 * and a scalar is a Python float. round with negative decimals is beyond
 * the runtime and falls back.
 */

#include <optrace/abi.h>

#include "demo.h"
#include "exec.h"
#include "op.h"

static const char *const round_detail =
	"round with negative decimals is not supported; running the host reference";

/* The shape a and b broadcast to (a 0-d operand takes the other's), or NULL. */
static const struct demo_array *broadcast(const struct demo_array *a, const struct demo_array *b)
{
	if (array_same_shape(a, b) || b->ndim == 0)
		return a;
	if (a->ndim == 0)
		return b;
	return NULL;
}

static struct demo_array *binary(const char *name, enum binop code, struct demo_array *a,
				 struct demo_array *b, bool scalar_rhs, double scalar,
				 struct demo_array *out, const char *callsite)
{
	struct work w = { .kind = WORK_BINARY, .code = code, .scalar = scalar, .in = { a, b } };
	const struct demo_array *like;
	enum demo_dtype dtype;
	struct op op;

	op_begin(&op, name, callsite);
	if (!op_check_array(&op, a) || (!scalar_rhs && !op_check_array(&op, b)))
		goto cleanup;
	if (scalar_rhs) {
		like = a;
		dtype = a->dtype == DEMO_INT64 ? DEMO_FLOAT64 : a->dtype;
	} else {
		like = broadcast(a, b);
		if (!like) {
			op_fail(&op, "operands of %zu and %zu elements do not match",
				array_volume(a), array_volume(b));
			goto cleanup;
		}
		dtype = dtype_promote(a->dtype, b->dtype);
	}
	if (code == BINOP_DIVIDE)
		dtype = dtype_inexact(dtype);
	w.out = op_result(&op, out, dtype, like);
	if (w.out)
		exec_run(&op, &w);
cleanup:
	return op_finish_array(&op, w.out);
}

struct demo_array *demo_add_at(struct demo_array *a, struct demo_array *b, struct demo_array *out,
			       const char *callsite)
{
	return binary("demo.add", BINOP_ADD, a, b, false, 0, out, callsite);
}

struct demo_array *demo_subtract_at(struct demo_array *a, struct demo_array *b,
				    struct demo_array *out, const char *callsite)
{
	return binary("demo.subtract", BINOP_SUBTRACT, a, b, false, 0, out, callsite);
}

struct demo_array *demo_multiply_at(struct demo_array *a, struct demo_array *b,
				    struct demo_array *out, const char *callsite)
{
	return binary("demo.multiply", BINOP_MULTIPLY, a, b, false, 0, out, callsite);
}

struct demo_array *demo_divide_at(struct demo_array *a, struct demo_array *b,
				  struct demo_array *out, const char *callsite)
{
	return binary("demo.divide", BINOP_DIVIDE, a, b, false, 0, out, callsite);
}

struct demo_array *demo_add_scalar_at(struct demo_array *a, double b, struct demo_array *out,
				      const char *callsite)
{
	return binary("demo.add", BINOP_ADD, a, NULL, true, b, out, callsite);
}

struct demo_array *demo_subtract_scalar_at(struct demo_array *a, double b, struct demo_array *out,
					   const char *callsite)
{
	return binary("demo.subtract", BINOP_SUBTRACT, a, NULL, true, b, out, callsite);
}

struct demo_array *demo_multiply_scalar_at(struct demo_array *a, double b, struct demo_array *out,
					   const char *callsite)
{
	return binary("demo.multiply", BINOP_MULTIPLY, a, NULL, true, b, out, callsite);
}

struct demo_array *demo_divide_scalar_at(struct demo_array *a, double b, struct demo_array *out,
					 const char *callsite)
{
	return binary("demo.divide", BINOP_DIVIDE, a, NULL, true, b, out, callsite);
}

struct demo_array *demo_sqrt_at(struct demo_array *a, struct demo_array *out, const char *callsite)
{
	struct work w = { .kind = WORK_UNARY, .code = UNOP_SQRT, .in = { a } };
	struct op op;

	op_begin(&op, "demo.sqrt", callsite);
	if (!op_check_array(&op, a))
		goto cleanup;
	w.out = op_result(&op, out, dtype_inexact(a->dtype), a);
	if (w.out)
		exec_run(&op, &w);
cleanup:
	return op_finish_array(&op, w.out);
}

struct demo_array *demo_round_at(struct demo_array *a, int decimals, struct demo_array *out,
				 const char *callsite)
{
	struct work w = {
		.kind = WORK_UNARY, .code = UNOP_ROUND, .decimals = decimals, .in = { a }
	};
	struct op op;

	op_begin(&op, "demo.round", callsite);
	if (!op_check_array(&op, a))
		goto cleanup;
	w.out = op_result(&op, out, a->dtype, a);
	if (!w.out)
		goto cleanup;
	/* An unsupported dtype is the first reason, as with every operation. */
	if (decimals < 0 && !work_has_float16(&w))
		exec_fallback(&op, &w, OPTRACE_FALLBACK_UNSUPPORTED_ARGUMENTS, round_detail);
	else
		exec_run(&op, &w);
cleanup:
	return op_finish_array(&op, w.out);
}
