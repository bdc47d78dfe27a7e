/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The frame of one operation: begun first, ended last, with its status.
 * Every public operation is written as
 *
 *	op_begin(&op, "demo.x", callsite);
 *	... checks, helpers or exec_run(), which announce the mode ...
 *	return op_finish_array(&op, result);
 */
#ifndef DEMO_OP_H
#define DEMO_OP_H

#include <stdbool.h>
#include <stdint.h>

#include "array.h"

struct op {
	uint64_t id; /* liboptrace's, 0 while untraced */
	const char *name;
	int status; /* enum optrace_status */
};

void op_begin(struct op *op, const char *name, const char *callsite);

/* Ends the operation: 0, or -1 if it failed. */
int op_end(struct op *op);

/* Ends it and returns result, or drops result and returns NULL on failure. */
struct demo_array *op_finish_array(struct op *op, struct demo_array *result);

/* The operation fails: the message becomes demo_last_error(). */
void op_fail(struct op *op, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* It fails because a helper did, whose message stands. */
void op_fail_helper(struct op *op);

bool op_failed(const struct op *op);

void op_mode(struct op *op, int mode, int reason);

/* A composite announces its mode once its helpers have run. */
void op_mode_from_helpers(struct op *op);

void op_fallback(struct op *op, int reason, const char *detail);

/* Argument checks that fail the operation with a message. */
bool op_check_array(struct op *op, const struct demo_array *a);
bool op_check_1d(struct op *op, const struct demo_array *a);

/* A new array for the result, or NULL (the operation has failed). */
struct demo_array *op_new_array(struct op *op, enum demo_dtype dtype, unsigned int ndim,
				const size_t *shape);

/* The result: out if given (it must have this dtype and like's shape), or new. */
struct demo_array *op_result(struct op *op, struct demo_array *out, enum demo_dtype dtype,
			     const struct demo_array *like);

#endif /* DEMO_OP_H */
