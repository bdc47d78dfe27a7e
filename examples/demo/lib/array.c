// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Arrays, views and host access. */
#include <errno.h>
#include <stdlib.h>

#include <optrace/abi.h>

#include "array.h"
#include "error.h"
#include "probe.h"
#include "sched.h"

static struct demo_store *store_new(enum demo_dtype dtype, size_t count)
{
	struct demo_store *store;
	size_t size = dtype_size(dtype);

	if (count && size > SIZE_MAX / count)
		return NULL;
	store = calloc(1, sizeof(*store));
	if (!store)
		return NULL;
	/* Never malloc(0): an empty array still has a valid pointer. */
	store->data = malloc(count ? count * size : 1);
	if (!store->data) {
		free(store);
		return NULL;
	}
	store->refs = 1;
	store->dtype = dtype;
	store->count = count;
	return store;
}

static void store_put(struct demo_store *store)
{
	if (__atomic_sub_fetch(&store->refs, 1, __ATOMIC_ACQ_REL))
		return;
	free(store->data);
	free(store);
}

static struct demo_array *view_new(struct demo_store *store, enum demo_dtype dtype,
				   unsigned int ndim, const size_t *shape, size_t offset)
{
	struct demo_array *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->refs = 1;
	a->store = store;
	a->dtype = dtype;
	a->ndim = ndim;
	a->shape[0] = ndim > 0 ? shape[0] : 1;
	a->shape[1] = ndim > 1 ? shape[1] : 1;
	a->offset = offset;
	return a;
}

struct demo_array *array_new(enum demo_dtype dtype, unsigned int ndim, const size_t *shape)
{
	size_t count = 1;
	struct demo_store *store;
	struct demo_array *a;

	if (ndim > 0)
		count = shape[0];
	if (ndim > 1) {
		if (shape[1] && count > SIZE_MAX / shape[1])
			return NULL;
		count *= shape[1];
	}
	store = store_new(dtype, count);
	if (!store)
		return NULL;
	a = view_new(store, dtype, ndim, shape, 0);
	if (!a)
		store_put(store);
	return a;
}

size_t array_volume(const struct demo_array *a)
{
	return a->shape[0] * a->shape[1];
}

bool array_same_shape(const struct demo_array *a, const struct demo_array *b)
{
	return a->ndim == b->ndim && a->shape[0] == b->shape[0] && a->shape[1] == b->shape[1];
}

void array_wait_host(uint64_t op, const struct demo_array *a, bool write)
{
	const struct demo_store *store = a->store;
	uint64_t seq = write ? store->last_use : store->last_write;
	/* A 0-d array is a reduction's result: reading it waits on a future. */
	int kind = a->ndim == 0 && !write ? OPTRACE_WAIT_FUTURE : OPTRACE_WAIT_INLINE_MAP;

	sched_wait(op, seq, kind);
}

void array_mark_launch(struct demo_array *a, uint64_t seq, bool write)
{
	struct demo_store *store = a->store;

	store->deferred = true;
	store->last_use = seq;
	if (write)
		store->last_write = seq;
}

struct demo_array *demo_array_get(struct demo_array *a)
{
	if (a)
		__atomic_add_fetch(&a->refs, 1, __ATOMIC_RELAXED);
	return a;
}

void demo_array_put(struct demo_array *a)
{
	if (!a || __atomic_sub_fetch(&a->refs, 1, __ATOMIC_ACQ_REL))
		return;
	store_put(a->store);
	free(a);
}

size_t demo_array_size(const struct demo_array *a)
{
	return array_volume(a);
}

unsigned int demo_array_ndim(const struct demo_array *a)
{
	return a->ndim;
}

size_t demo_array_dim(const struct demo_array *a, unsigned int axis)
{
	return axis < a->ndim ? a->shape[axis] : 1;
}

enum demo_dtype demo_array_dtype(const struct demo_array *a)
{
	return a->dtype;
}

bool demo_array_is_deferred(const struct demo_array *a)
{
	return a->store->deferred;
}

struct demo_array *demo_slice(struct demo_array *a, size_t start, size_t stop)
{
	struct demo_array *view;
	size_t shape;

	if (!a || a->ndim != 1 || start > stop || stop > a->shape[0]) {
		error_set("slice [%zu:%zu] of an array of shape (%zu)", start, stop,
			  a ? a->shape[0] : 0);
		return NULL;
	}
	shape = stop - start;
	view = view_new(a->store, a->dtype, 1, &shape, a->offset + start);
	if (!view) {
		error_set("slice: out of memory");
		return NULL;
	}
	__atomic_add_fetch(&a->store->refs, 1, __ATOMIC_RELAXED);
	return view;
}

struct demo_array *demo_reshape(struct demo_array *a, size_t rows, size_t cols)
{
	struct demo_array *view;
	size_t shape[2] = { rows, cols };

	if (!a || a->ndim == 0 || (cols && rows > SIZE_MAX / cols) ||
	    rows * cols != array_volume(a)) {
		error_set("reshape to (%zu, %zu): the sizes differ", rows, cols);
		return NULL;
	}
	view = view_new(a->store, a->dtype, 2, shape, a->offset);
	if (!view) {
		error_set("reshape: out of memory");
		return NULL;
	}
	__atomic_add_fetch(&a->store->refs, 1, __ATOMIC_RELAXED);
	return view;
}

int demo_array_read(struct demo_array *a, size_t start, size_t count, double *dst)
{
	size_t volume, size, i;
	const char *data;

	if (!a || !dst) {
		error_set("read: no array");
		return -EINVAL;
	}
	volume = array_volume(a);
	if (start > volume || count > volume - start) {
		error_set("read [%zu, +%zu) of an array of %zu elements", start, count, volume);
		return -ERANGE;
	}
	if (!count)
		return 0;
	array_wait_host(probe_current_op(), a, false);
	data = array_data(a);
	size = dtype_size(a->dtype);
	for (i = 0; i < count; i++)
		dst[i] = dtype_load(a->dtype, data + (start + i) * size);
	return 0;
}

int demo_item(struct demo_array *a, double *value)
{
	if (!a || array_volume(a) != 1) {
		error_set("item: not an array of one element");
		return -EINVAL;
	}
	return demo_array_read(a, 0, 1, value);
}
