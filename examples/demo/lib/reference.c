// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The host reference implementation. Slow on purpose: plain and obviously right. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

/* Element i of a, as double; a 0-d array broadcasts. */
static double load(const struct demo_array *a, size_t i)
{
	size_t index = a->ndim ? i : 0;

	return dtype_load(a->dtype, (const char *)array_data(a) + index * dtype_size(a->dtype));
}

static void store(const struct demo_array *a, size_t i, double value)
{
	dtype_store(a->dtype, (char *)array_data(a) + i * dtype_size(a->dtype), value);
}

static double binop_reference(int code, double x, double y)
{
	switch (code) {
	case BINOP_ADD:
		return x + y;
	case BINOP_SUBTRACT:
		return x - y;
	case BINOP_MULTIPLY:
		return x * y;
	default:
		return x / y;
	}
}

/* NumPy's round: scale, round half to even, unscale; decimals may be < 0. */
static double round_reference(double x, int decimals)
{
	double scale;

	if (decimals >= 0) {
		scale = pow(10.0, decimals);
		return isfinite(x * scale) ? nearbyint(x * scale) / scale : x;
	}
	scale = pow(10.0, -decimals);
	return nearbyint(x / scale) * scale;
}

static double sum_reference(const struct demo_array *a)
{
	size_t n = array_volume(a), i;
	double sum = 0;

	for (i = 0; i < n; i++)
		sum += load(a, i);
	return sum;
}

static double var_reference(const struct demo_array *a)
{
	size_t n = array_volume(a), i;
	double mean = sum_reference(a) / (double)n, sum = 0, d;

	for (i = 0; i < n; i++) {
		d = load(a, i) - mean;
		sum += d * d;
	}
	return sum / (double)n;
}

static double norm_reference(const struct demo_array *a)
{
	size_t n = array_volume(a), i;
	double sum = 0;

	for (i = 0; i < n; i++)
		sum += load(a, i) * load(a, i);
	return sqrt(sum);
}

static double dot_row(const struct demo_array *a, const struct demo_array *b, size_t row)
{
	size_t cols = a->ndim == 2 ? a->shape[1] : array_volume(a), c;
	double sum = 0;

	for (c = 0; c < cols; c++)
		sum += load(a, row * cols + c) * load(b, c);
	return sum;
}

/* NaN sorts last, as in NumPy. */
static int compare_doubles(double x, double y)
{
	if (isnan(x) || isnan(y))
		return isnan(x) - isnan(y);
	return (x > y) - (x < y);
}

static int compare_float64(const void *l, const void *r)
{
	return compare_doubles(*(const double *)l, *(const double *)r);
}

static int compare_float32(const void *l, const void *r)
{
	return compare_doubles(*(const float *)l, *(const float *)r);
}

static int compare_int64(const void *l, const void *r)
{
	int64_t x = *(const int64_t *)l, y = *(const int64_t *)r;

	return (x > y) - (x < y);
}

static int compare_float16(const void *l, const void *r)
{
	return compare_doubles(demo_f16_to_double(*(const uint16_t *)l),
			       demo_f16_to_double(*(const uint16_t *)r));
}

static int (*const sort_compare[DEMO_DTYPE__COUNT])(const void *, const void *) = {
	[DEMO_FLOAT64] = compare_float64,
	[DEMO_FLOAT32] = compare_float32,
	[DEMO_INT64] = compare_int64,
	[DEMO_FLOAT16] = compare_float16,
};

static void sort_reference(const struct work *w)
{
	const struct demo_array *a = w->in[0], *out = w->out;
	size_t n = array_volume(a);

	/* The output has a's dtype and length: sort a raw copy in place. */
	memmove(array_data(out), array_data(a), n * dtype_size(a->dtype));
	qsort(array_data(out), n, dtype_size(out->dtype), sort_compare[out->dtype]);
}

static double median_reference(const struct demo_array *a)
{
	size_t n = array_volume(a), i;
	double *copy, median;

	if (!n)
		return NAN;
	copy = malloc(n * sizeof(*copy));
	if (!copy)
		return NAN;
	for (i = 0; i < n; i++)
		copy[i] = load(a, i);
	qsort(copy, n, sizeof(*copy), compare_float64);
	median = n % 2 ? copy[n / 2] : (copy[n / 2 - 1] + copy[n / 2]) / 2;
	free(copy);
	return median;
}

void reference_run(const struct work *w)
{
	const struct demo_array *a = w->in[0], *b = w->in[1], *out = w->out;
	size_t n = array_volume(out), i;

	switch (w->kind) {
	case WORK_FILL:
		for (i = 0; i < n; i++)
			store(out, i, w->scalar);
		break;
	case WORK_ARANGE:
		for (i = 0; i < n; i++)
			store(out, i, (double)i);
		break;
	case WORK_BINARY:
		for (i = 0; i < n; i++)
			store(out, i,
			      binop_reference(w->code, load(a, i), b ? load(b, i) : w->scalar));
		break;
	case WORK_UNARY:
		for (i = 0; i < n; i++)
			store(out, i,
			      w->code == UNOP_SQRT ? sqrt(load(a, i))
						   : round_reference(load(a, i), w->decimals));
		break;
	case WORK_SUM:
		store(out, 0, sum_reference(a));
		break;
	case WORK_MEAN:
		store(out, 0, sum_reference(a) / (double)array_volume(a));
		break;
	case WORK_VAR:
		store(out, 0, var_reference(a));
		break;
	case WORK_NORM:
		store(out, 0, norm_reference(a));
		break;
	case WORK_DOT:
		for (i = 0; i < n; i++)
			store(out, i, dot_row(a, b, i));
		break;
	case WORK_SORT:
		sort_reference(w);
		break;
	case WORK_MEDIAN:
		store(out, 0, median_reference(a));
		break;
	default:
		break;
	}
}
