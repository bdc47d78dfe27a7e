/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Arrays: a view (dtype, shape, offset) of a reference-counted store. Views
 * share a store, and the store carries what host access must wait for.
 */
#ifndef DEMO_ARRAY_H
#define DEMO_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "demo.h"
#include "dtype.h"

struct demo_store {
	int refs;
	enum demo_dtype dtype;
	size_t count;
	void *data;
	/*
	 * Touched only by the thread that issues operations on the store: no
	 * processor reads them. deferred: a deferred operation has used the
	 * store, so operations on it defer too (cuPyNumeric's DeferredArray).
	 * last_write / last_use: the stream sequence of the last launch that
	 * wrote it / used it, 0 for none.
	 */
	bool deferred;
	uint64_t last_write;
	uint64_t last_use;
};

struct demo_array {
	int refs;
	struct demo_store *store;
	enum demo_dtype dtype;
	unsigned int ndim; /* 0 (a scalar), 1, or 2 (row major) */
	size_t shape[2];
	size_t offset; /* of element 0, in elements of the store */
};

/* A new array on new, uninitialised storage; NULL when out of memory. */
struct demo_array *array_new(enum demo_dtype dtype, unsigned int ndim, const size_t *shape);

size_t array_volume(const struct demo_array *a);
bool array_same_shape(const struct demo_array *a, const struct demo_array *b);

static inline void *array_data(const struct demo_array *a)
{
	return (char *)a->store->data + a->offset * dtype_size(a->dtype);
}

/* Before the host reads (write: or writes) a's data, wait for its launches. */
void array_wait_host(uint64_t op, const struct demo_array *a, bool write);

/* A launch with stream sequence seq uses a (write: and writes it). */
void array_mark_launch(struct demo_array *a, uint64_t seq, bool write);

#endif /* DEMO_ARRAY_H */
