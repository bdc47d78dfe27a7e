/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A unit of work: what one operation computes, in a form that the eager
 * path, a task point and the host reference can all run.
 */
#ifndef DEMO_WORK_H
#define DEMO_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array.h"

enum work_kind {
	/* with kernels, eager or deferred */
	WORK_FILL,
	WORK_ARANGE,
	WORK_BINARY,
	WORK_UNARY,
	WORK_SUM,
	WORK_DOT,
	/* host reference only: what the runtime lacks, and composites on
	 * float16, which fall back whole instead of calling helpers */
	WORK_MEAN,
	WORK_VAR,
	WORK_NORM,
	WORK_SORT,
	WORK_MEDIAN,
	WORK__COUNT
};

enum binop { BINOP_ADD, BINOP_SUBTRACT, BINOP_MULTIPLY, BINOP_DIVIDE };
enum unop { UNOP_SQRT, UNOP_ROUND };

/* A partial result of a reduction: .i when the result is int64. */
union work_value {
	double f;
	int64_t i;
};

struct work {
	enum work_kind kind;
	int code;      /* enum binop, enum unop */
	double scalar; /* fill value, or the right operand when in[1] is NULL */
	int decimals;  /* round */
	struct demo_array *in[2];
	struct demo_array *out;
	/* deferred reductions: one partial per point, combined in order */
	union work_value *partials;
	uint32_t points;
	bool reference; /* a launch of the host reference */
};

/* The volume the mode decision is made on. */
size_t work_volume(const struct work *w);

/* The iteration space that points split: elements, or rows of a matrix. */
size_t work_extent(const struct work *w);

bool work_reduces(const struct work *w);
bool work_has_float16(const struct work *w);

/* A heap copy for a launch: its own references and partials. */
struct work *work_clone(const struct work *w, uint32_t points, bool reference);
void work_free(struct work *w);

#endif /* DEMO_WORK_H */
