// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/durations.h"

/* Bucket of v: [0, 128) one by one; then 128 linear buckets per power of two. */
static void bucket_of(uint64_t v, unsigned int *octave, unsigned int *sub)
{
	unsigned int e;

	if (v < DURATIONS_SUB) {
		*octave = 0;
		*sub = (unsigned int)v;
		return;
	}
	e = 63 - (unsigned int)__builtin_clzll(v); /* >= 7 */
	*octave = e - 6;
	*sub = (unsigned int)(v >> (e - 7)) - DURATIONS_SUB;
}

/* The middle of a bucket: within half its width (1/256 of it) of any value there. */
static double bucket_middle(unsigned int octave, unsigned int sub)
{
	double low, width;

	if (octave == 0)
		return sub;
	low = (double)((uint64_t)(DURATIONS_SUB + sub) << (octave - 1));
	width = (double)(1ULL << (octave - 1));
	return low + (width - 1) / 2;
}

/* The counts of an octave, allocated on first use; NULL when out of memory. */
static uint64_t *octave_of(struct durations *set, unsigned int octave)
{
	if (!set->buckets[octave])
		set->buckets[octave] = calloc(DURATIONS_SUB, sizeof(uint64_t));
	return set->buckets[octave];
}

static int fold_one(struct durations *set, uint64_t v)
{
	unsigned int octave, sub;
	uint64_t *counts;

	bucket_of(v, &octave, &sub);
	counts = octave_of(set, octave);
	if (!counts)
		return -ENOMEM;
	counts[sub]++;
	return 0;
}

/* From exact values to buckets, once there are too many. */
static int fold(struct durations *set)
{
	for (uint64_t i = 0; i < set->count; i++) {
		if (fold_one(set, set->values[i]))
			return -ENOMEM;
	}
	free(set->values);
	set->values = NULL;
	set->capacity = 0;
	set->folded = true;
	return 0;
}

static void note_extremes(struct durations *set, uint64_t min_ns, uint64_t max_ns)
{
	if (!set->count || min_ns < set->min_ns)
		set->min_ns = min_ns;
	if (max_ns > set->max_ns)
		set->max_ns = max_ns;
}

int durations_add(struct durations **set_out, uint64_t ns)
{
	struct durations *set = *set_out;

	if (!set) {
		set = calloc(1, sizeof(*set));
		if (!set)
			return -ENOMEM;
		*set_out = set;
	}
	if (!set->folded && set->count == DURATIONS_EXACT_MAX && fold(set))
		return -ENOMEM;
	if (set->folded) {
		if (fold_one(set, ns))
			return -ENOMEM;
	} else {
		if (set->count == set->capacity) {
			size_t capacity = set->capacity ? set->capacity * 2 : 16;
			uint64_t *grown = realloc(set->values, capacity * sizeof(*grown));

			if (!grown)
				return -ENOMEM;
			set->values = grown;
			set->capacity = capacity;
		}
		set->values[set->count] = ns;
		set->sorted = false;
	}
	note_extremes(set, ns, ns);
	set->count++;
	return 0;
}

int durations_merge(struct durations **into, const struct durations *from)
{
	struct durations *set = *into;

	if (!from || !from->count)
		return 0;
	if (!from->folded) {
		for (uint64_t i = 0; i < from->count; i++) {
			if (durations_add(into, from->values[i]))
				return -ENOMEM;
		}
		return 0;
	}
	if (!set) {
		set = calloc(1, sizeof(*set));
		if (!set)
			return -ENOMEM;
		*into = set;
	}
	if (!set->folded && fold(set))
		return -ENOMEM;
	for (unsigned int o = 0; o < DURATIONS_OCTAVES; o++) {
		uint64_t *counts;

		if (!from->buckets[o])
			continue;
		counts = octave_of(set, o);
		if (!counts)
			return -ENOMEM;
		for (unsigned int s = 0; s < DURATIONS_SUB; s++)
			counts[s] += from->buckets[o][s];
	}
	note_extremes(set, from->min_ns, from->max_ns);
	set->count += from->count;
	return 0;
}

bool durations_exact(const struct durations *set)
{
	return !set || !set->folded;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

double durations_quantile(struct durations *set, double p)
{
	uint64_t rank, seen = 0;
	double value;

	if (!set || !set->count)
		return 0;
	if (p < 0)
		p = 0;
	if (p > 1)
		p = 1;
	rank = (uint64_t)(p * (double)set->count);
	if ((double)rank < p * (double)set->count - 1e-9)
		rank++;
	if (rank < 1)
		rank = 1;
	if (!set->folded) {
		if (!set->sorted)
			qsort(set->values, set->count, sizeof(*set->values), compare_u64);
		set->sorted = true;
		return (double)set->values[rank - 1];
	}
	for (unsigned int o = 0; o < DURATIONS_OCTAVES; o++) {
		for (unsigned int s = 0; set->buckets[o] && s < DURATIONS_SUB; s++) {
			seen += set->buckets[o][s];
			if (seen < rank)
				continue;
			value = bucket_middle(o, s);
			if (value < (double)set->min_ns)
				value = (double)set->min_ns;
			if (value > (double)set->max_ns)
				value = (double)set->max_ns;
			return value;
		}
	}
	return (double)set->max_ns;
}

void durations_free(struct durations *set)
{
	if (!set)
		return;
	for (unsigned int o = 0; o < DURATIONS_OCTAVES; o++)
		free(set->buckets[o]);
	free(set->values);
	free(set);
}
