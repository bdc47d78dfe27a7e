// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Units of work: their sizes, and copies that launches own. */
#include <stdlib.h>

#include "work.h"

size_t work_volume(const struct work *w)
{
	switch (w->kind) {
	case WORK_SUM:
	case WORK_MEAN:
	case WORK_VAR:
	case WORK_NORM:
	case WORK_MEDIAN:
	case WORK_DOT:
		return array_volume(w->in[0]);
	default:
		return array_volume(w->out);
	}
}

size_t work_extent(const struct work *w)
{
	if (w->kind == WORK_DOT && w->in[0]->ndim == 2)
		return w->in[0]->shape[0];
	if (w->kind == WORK_SUM || w->kind == WORK_DOT)
		return array_volume(w->in[0]);
	return array_volume(w->out);
}

bool work_reduces(const struct work *w)
{
	return w->kind == WORK_SUM || (w->kind == WORK_DOT && w->out->ndim == 0);
}

bool work_has_float16(const struct work *w)
{
	unsigned int i;

	for (i = 0; i < 2; i++)
		if (w->in[i] && w->in[i]->dtype == DEMO_FLOAT16)
			return true;
	return w->out && w->out->dtype == DEMO_FLOAT16;
}

struct work *work_clone(const struct work *w, uint32_t points, bool reference)
{
	struct work *copy = malloc(sizeof(*copy));
	unsigned int i;

	if (!copy)
		return NULL;
	*copy = *w;
	copy->points = points;
	copy->reference = reference;
	copy->partials = NULL;
	if (!reference && work_reduces(w)) {
		copy->partials = calloc(points, sizeof(*copy->partials));
		if (!copy->partials) {
			free(copy);
			return NULL;
		}
	}
	for (i = 0; i < 2; i++)
		demo_array_get(copy->in[i]);
	demo_array_get(copy->out);
	return copy;
}

void work_free(struct work *w)
{
	unsigned int i;

	if (!w)
		return;
	for (i = 0; i < 2; i++)
		demo_array_put(w->in[i]);
	demo_array_put(w->out);
	free(w->partials);
	free(w);
}
