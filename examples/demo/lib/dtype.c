// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Element types. float16 is stored as IEEE binary16 bit patterns and
 * converted in software: the runtime has no kernels for it, only the host
 * reference path, which works in double.
 */
#include <math.h>
#include <string.h>

#include "dtype.h"

static const size_t dtype_sizes[DEMO_DTYPE__COUNT] = {
	[DEMO_FLOAT64] = sizeof(double),
	[DEMO_FLOAT32] = sizeof(float),
	[DEMO_INT64] = sizeof(int64_t),
	[DEMO_FLOAT16] = sizeof(uint16_t),
};

static const char *const dtype_names[DEMO_DTYPE__COUNT] = {
	[DEMO_FLOAT64] = "float64",
	[DEMO_FLOAT32] = "float32",
	[DEMO_INT64] = "int64",
	[DEMO_FLOAT16] = "float16",
};

bool dtype_valid(int dtype)
{
	return dtype >= 0 && dtype < DEMO_DTYPE__COUNT;
}

size_t dtype_size(enum demo_dtype dtype)
{
	return dtype_sizes[dtype];
}

const char *demo_dtype_name(enum demo_dtype dtype)
{
	if (!dtype_valid(dtype))
		return "unknown";
	return dtype_names[dtype];
}

enum demo_dtype dtype_promote(enum demo_dtype a, enum demo_dtype b)
{
	if (a == b)
		return a;
	/* float64 wins; int64 with any narrower float needs float64 too. */
	if (a == DEMO_FLOAT64 || b == DEMO_FLOAT64 || a == DEMO_INT64 || b == DEMO_INT64)
		return DEMO_FLOAT64;
	return DEMO_FLOAT32; /* float32 with float16 */
}

enum demo_dtype dtype_inexact(enum demo_dtype dtype)
{
	return dtype == DEMO_INT64 ? DEMO_FLOAT64 : dtype;
}

int64_t dtype_double_to_int64(double value)
{
	if (isnan(value))
		return 0;
	if (value >= 9223372036854775807.0)
		return INT64_MAX;
	if (value <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)value;
}

double dtype_load(enum demo_dtype dtype, const void *element)
{
	switch (dtype) {
	case DEMO_FLOAT64:
		return *(const double *)element;
	case DEMO_FLOAT32:
		return *(const float *)element;
	case DEMO_INT64:
		return (double)*(const int64_t *)element;
	case DEMO_FLOAT16:
		return demo_f16_to_double(*(const uint16_t *)element);
	default:
		return NAN;
	}
}

void dtype_store(enum demo_dtype dtype, void *element, double value)
{
	switch (dtype) {
	case DEMO_FLOAT64:
		*(double *)element = value;
		break;
	case DEMO_FLOAT32:
		*(float *)element = (float)value;
		break;
	case DEMO_INT64:
		*(int64_t *)element = dtype_double_to_int64(value);
		break;
	case DEMO_FLOAT16:
		*(uint16_t *)element = demo_f16_from_double(value);
		break;
	default:
		break;
	}
}

/* v >> shift, rounded to nearest, ties to even; 0 < shift < 64. */
static uint64_t shift_round_even(uint64_t v, unsigned int shift)
{
	uint64_t quotient = v >> shift;
	uint64_t rest = v & ((1ULL << shift) - 1);
	uint64_t half = 1ULL << (shift - 1);

	if (rest > half || (rest == half && (quotient & 1)))
		quotient++;
	return quotient;
}

uint16_t demo_f16_from_double(double value)
{
	uint64_t bits, mantissa, half;
	uint16_t sign;
	int exponent, biased;

	memcpy(&bits, &value, sizeof(bits));
	sign = (uint16_t)((bits >> 48) & 0x8000);
	exponent = (int)((bits >> 52) & 0x7ff);
	mantissa = bits & ((1ULL << 52) - 1);

	if (exponent == 0x7ff) /* infinity stays, NaN stays quiet */
		return sign | 0x7c00 | (mantissa ? 0x200 : 0);

	biased = exponent - 1023 + 15;
	if (biased >= 31)
		return sign | 0x7c00;
	if (biased > 0) {
		/* A carry out of the mantissa bumps the exponent, up to infinity. */
		half = shift_round_even(((uint64_t)biased << 52) | mantissa, 42);
		return sign | (uint16_t)(half >= 0x7c00 ? 0x7c00 : half);
	}
	/* Subnormal: units of 2^-24; shift = 1023 + 52 - 24 - exponent. */
	if (exponent == 0 || 1051 - exponent > 63)
		return sign;
	half = shift_round_even((1ULL << 52) | mantissa, (unsigned int)(1051 - exponent));
	return sign | (uint16_t)half;
}

double demo_f16_to_double(uint16_t half)
{
	int exponent = (half >> 10) & 0x1f;
	int mantissa = half & 0x3ff;
	double value;

	if (exponent == 0)
		value = ldexp(mantissa, -24);
	else if (exponent == 31)
		value = mantissa ? NAN : INFINITY;
	else
		value = ldexp(mantissa + 1024, exponent - 25);
	return (half & 0x8000) ? -value : value;
}
