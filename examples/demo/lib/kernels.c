// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernels. Each has typed loops for the common case, all operands of one
 * dtype, and a generic loop through double for mixed dtypes. int64
 * arithmetic wraps, as NumPy's does, by computing in uint64_t.
 */
#include <math.h>

#include "kernels.h"

static bool result_is_integer(const struct work *w)
{
	return w->out->dtype == DEMO_INT64;
}

void kernel_accumulate(const struct work *w, union work_value *acc, union work_value part)
{
	if (result_is_integer(w))
		acc->i = (int64_t)((uint64_t)acc->i + (uint64_t)part.i);
	else
		acc->f += part.f;
}

void kernel_store_result(const struct work *w, union work_value result)
{
	if (result_is_integer(w))
		*(int64_t *)array_data(w->out) = result.i;
	else
		dtype_store(w->out->dtype, array_data(w->out), result.f);
}

static void fill_range(const struct work *w, size_t begin, size_t end)
{
	const struct demo_array *out = w->out;
	size_t i;

	switch (out->dtype) {
	case DEMO_FLOAT64: {
		double *o = array_data(out);

		for (i = begin; i < end; i++)
			o[i] = w->scalar;
		break;
	}
	case DEMO_FLOAT32: {
		float *o = array_data(out);
		float value = (float)w->scalar;

		for (i = begin; i < end; i++)
			o[i] = value;
		break;
	}
	case DEMO_INT64: {
		int64_t *o = array_data(out);
		int64_t value = dtype_double_to_int64(w->scalar);

		for (i = begin; i < end; i++)
			o[i] = value;
		break;
	}
	default:
		for (i = begin; i < end; i++)
			dtype_store(out->dtype,
				    (char *)array_data(out) + i * dtype_size(out->dtype),
				    w->scalar);
		break;
	}
}

static void arange_range(const struct work *w, size_t begin, size_t end)
{
	const struct demo_array *out = w->out;
	size_t i;

	switch (out->dtype) {
	case DEMO_FLOAT64: {
		double *o = array_data(out);

		for (i = begin; i < end; i++)
			o[i] = (double)i;
		break;
	}
	case DEMO_FLOAT32: {
		float *o = array_data(out);

		for (i = begin; i < end; i++)
			o[i] = (float)i;
		break;
	}
	case DEMO_INT64: {
		int64_t *o = array_data(out);

		for (i = begin; i < end; i++)
			o[i] = (int64_t)i;
		break;
	}
	default:
		for (i = begin; i < end; i++)
			dtype_store(out->dtype,
				    (char *)array_data(out) + i * dtype_size(out->dtype),
				    (double)i);
		break;
	}
}

static double binop_apply(int code, double x, double y)
{
	switch (code) {
	case BINOP_ADD:
		return x + y;
	case BINOP_SUBTRACT:
		return x - y;
	case BINOP_MULTIPLY:
		return x * y;
	case BINOP_DIVIDE:
		return x / y;
	default:
		return NAN;
	}
}

/*
 * One loop per (type, operator); U is the type the arithmetic is done in.
 * A 0-d operand broadcasts: its stride is 0. Division by an int64 never
 * comes here (true division gives float64).
 */
#define DEFINE_BINARY_TYPED(NAME, T, U)                                  \
	static void NAME(const struct work *w, size_t begin, size_t end) \
	{                                                                \
		const struct demo_array *a = w->in[0], *b = w->in[1];    \
		T rhs = (T)w->scalar;                                    \
		const T *x = array_data(a);                              \
		const T *y = b ? (const T *)array_data(b) : &rhs;        \
		size_t xs = a->ndim ? 1 : 0, ys = b && b->ndim ? 1 : 0;  \
		T *o = array_data(w->out);                               \
		size_t i;                                                \
                                                                         \
		switch (w->code) {                                       \
		case BINOP_ADD:                                          \
			for (i = begin; i < end; i++)                    \
				o[i] = (T)((U)x[i * xs] + (U)y[i * ys]); \
			break;                                           \
		case BINOP_SUBTRACT:                                     \
			for (i = begin; i < end; i++)                    \
				o[i] = (T)((U)x[i * xs] - (U)y[i * ys]); \
			break;                                           \
		case BINOP_MULTIPLY:                                     \
			for (i = begin; i < end; i++)                    \
				o[i] = (T)((U)x[i * xs] * (U)y[i * ys]); \
			break;                                           \
		case BINOP_DIVIDE:                                       \
			for (i = begin; i < end; i++)                    \
				o[i] = (T)((U)x[i * xs] / (U)y[i * ys]); \
			break;                                           \
		}                                                        \
	}

DEFINE_BINARY_TYPED(binary_float64, double, double)
DEFINE_BINARY_TYPED(binary_float32, float, float)
DEFINE_BINARY_TYPED(binary_int64, int64_t, uint64_t)

static void binary_generic(const struct work *w, size_t begin, size_t end)
{
	const struct demo_array *a = w->in[0], *b = w->in[1], *out = w->out;
	const char *x = array_data(a), *y = b ? array_data(b) : NULL;
	size_t xs = a->ndim ? dtype_size(a->dtype) : 0;
	size_t ys = b && b->ndim ? dtype_size(b->dtype) : 0;
	size_t os = dtype_size(out->dtype);
	char *o = array_data(out);
	double rhs;
	size_t i;

	for (i = begin; i < end; i++) {
		rhs = b ? dtype_load(b->dtype, y + i * ys) : w->scalar;
		dtype_store(out->dtype, o + i * os,
			    binop_apply(w->code, dtype_load(a->dtype, x + i * xs), rhs));
	}
}

static void binary_range(const struct work *w, size_t begin, size_t end)
{
	enum demo_dtype dtype = w->out->dtype;
	bool uniform = w->in[0]->dtype == dtype && (w->in[1] ? w->in[1]->dtype == dtype : true);

	if (uniform && dtype == DEMO_FLOAT64)
		binary_float64(w, begin, end);
	else if (uniform && dtype == DEMO_FLOAT32)
		binary_float32(w, begin, end);
	else if (uniform && dtype == DEMO_INT64 && w->in[1] && w->code != BINOP_DIVIDE)
		binary_int64(w, begin, end);
	else
		binary_generic(w, begin, end);
}

static double round_decimals(double x, double scale)
{
	double scaled = x * scale;

	if (!isfinite(scaled))
		return x;
	return nearbyint(scaled) / scale; /* halves to even, like NumPy */
}

static void unary_range(const struct work *w, size_t begin, size_t end)
{
	const struct demo_array *a = w->in[0], *out = w->out;
	double scale = pow(10.0, w->decimals);
	size_t is = dtype_size(a->dtype), os = dtype_size(out->dtype), i;
	const char *x = array_data(a);
	char *o = array_data(out);

	if (a->dtype == DEMO_FLOAT64 && out->dtype == DEMO_FLOAT64) {
		const double *xd = (const double *)x;
		double *od = (double *)o;

		if (w->code == UNOP_SQRT)
			for (i = begin; i < end; i++)
				od[i] = sqrt(xd[i]);
		else
			for (i = begin; i < end; i++)
				od[i] = round_decimals(xd[i], scale);
		return;
	}
	if (w->code == UNOP_ROUND && a->dtype == DEMO_INT64) {
		/* Integers are whole already: copy them exactly. */
		for (i = begin; i < end; i++)
			((int64_t *)o)[i] = ((const int64_t *)x)[i];
		return;
	}
	for (i = begin; i < end; i++) {
		double v = dtype_load(a->dtype, x + i * is);

		v = w->code == UNOP_SQRT ? sqrt(v) : round_decimals(v, scale);
		dtype_store(out->dtype, o + i * os, v);
	}
}

static union work_value sum_range(const struct work *w, size_t begin, size_t end)
{
	const struct demo_array *a = w->in[0];
	union work_value part = { 0 };
	size_t i;

	switch (a->dtype) {
	case DEMO_FLOAT64: {
		const double *x = array_data(a);
		double sum = 0;

		for (i = begin; i < end; i++)
			sum += x[i];
		part.f = sum;
		break;
	}
	case DEMO_FLOAT32: {
		const float *x = array_data(a);
		double sum = 0;

		for (i = begin; i < end; i++)
			sum += x[i];
		part.f = sum;
		break;
	}
	case DEMO_INT64: {
		const int64_t *x = array_data(a);
		uint64_t sum = 0;

		for (i = begin; i < end; i++)
			sum += (uint64_t)x[i];
		part.i = (int64_t)sum;
		break;
	}
	default: {
		const char *x = array_data(a);
		double sum = 0;

		for (i = begin; i < end; i++)
			sum += dtype_load(a->dtype, x + i * dtype_size(a->dtype));
		part.f = sum;
		break;
	}
	}
	return part;
}

/* One row (or a vector's range) of a . b, from column begin to end. */
static union work_value dot_span(const struct work *w, const char *x, size_t begin, size_t end)
{
	const struct demo_array *a = w->in[0], *b = w->in[1];
	const char *y = array_data(b);
	size_t xs = dtype_size(a->dtype), ys = dtype_size(b->dtype), i;
	union work_value part = { 0 };

	if (result_is_integer(w)) {
		const int64_t *xi = (const int64_t *)x, *yi = (const int64_t *)y;
		uint64_t sum = 0;

		for (i = begin; i < end; i++)
			sum += (uint64_t)xi[i] * (uint64_t)yi[i];
		part.i = (int64_t)sum;
	} else if (a->dtype == DEMO_FLOAT64 && b->dtype == DEMO_FLOAT64) {
		const double *xd = (const double *)x, *yd = (const double *)y;
		double sum = 0;

		for (i = begin; i < end; i++)
			sum += xd[i] * yd[i];
		part.f = sum;
	} else {
		double sum = 0;

		for (i = begin; i < end; i++)
			sum += dtype_load(a->dtype, x + i * xs) * dtype_load(b->dtype, y + i * ys);
		part.f = sum;
	}
	return part;
}

/* Matrix . vector: rows [begin, end) of the result. */
static void matvec_rows(const struct work *w, size_t begin, size_t end)
{
	const struct demo_array *a = w->in[0];
	size_t cols = a->shape[1], row_size = cols * dtype_size(a->dtype);
	size_t os = dtype_size(w->out->dtype), r;
	const char *m = array_data(a);
	char *o = array_data(w->out);
	union work_value v;

	for (r = begin; r < end; r++) {
		v = dot_span(w, m + r * row_size, 0, cols);
		if (result_is_integer(w))
			((int64_t *)o)[r] = v.i;
		else
			dtype_store(w->out->dtype, o + r * os, v.f);
	}
}

void kernel_range(const struct work *w, size_t begin, size_t end, union work_value *acc)
{
	switch (w->kind) {
	case WORK_FILL:
		fill_range(w, begin, end);
		break;
	case WORK_ARANGE:
		arange_range(w, begin, end);
		break;
	case WORK_BINARY:
		binary_range(w, begin, end);
		break;
	case WORK_UNARY:
		unary_range(w, begin, end);
		break;
	case WORK_SUM:
		kernel_accumulate(w, acc, sum_range(w, begin, end));
		break;
	case WORK_DOT:
		if (w->out->ndim == 0)
			kernel_accumulate(w, acc, dot_span(w, array_data(w->in[0]), begin, end));
		else
			matvec_rows(w, begin, end);
		break;
	default:
		break; /* reference-only work never reaches a kernel */
	}
}
