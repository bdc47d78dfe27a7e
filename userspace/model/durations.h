/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Every duration of a table row, for `optrace report`'s percentiles: kept
 * exactly up to DURATIONS_EXACT_MAX values (8 bytes each), then folded into
 * a histogram of DURATIONS_SUB linear buckets per power of two, whose
 * percentiles are within 1 / (2 * DURATIONS_SUB) of the true value (0.4%).
 * Memory per row: at most 512 KiB exact, then about 1 KiB per power of two
 * that holds values.
 */
#ifndef OPTRACE_MODEL_DURATIONS_H
#define OPTRACE_MODEL_DURATIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DURATIONS_EXACT_MAX 65536
#define DURATIONS_SUB 128    /* linear buckets per power of two */
#define DURATIONS_OCTAVES 58 /* [0, 128) one by one, then 2^7 .. 2^64 */

struct durations {
	uint64_t count;
	uint64_t min_ns;
	uint64_t max_ns;
	uint64_t *values; /* while exact: count of them */
	size_t capacity;
	bool sorted;
	bool folded;			      /* past DURATIONS_EXACT_MAX: buckets, values freed */
	uint64_t *buckets[DURATIONS_OCTAVES]; /* DURATIONS_SUB counts each, or NULL */
};

/* Adds one value to *set, created on first use. 0 or -ENOMEM (the value is lost). */
int durations_add(struct durations **set, uint64_t ns);

/* Adds every value of from (may be NULL) to *into. 0 or -ENOMEM. */
int durations_merge(struct durations **into, const struct durations *from);

/* Whether durations_quantile() is exact (every value kept). */
bool durations_exact(const struct durations *set);

/*
 * The p-th quantile (0..1) by nearest rank: the smallest value that at
 * least p of them are at or below; 0 for none. Sorts the values in place.
 */
double durations_quantile(struct durations *set, double p);

void durations_free(struct durations *set);

#endif /* OPTRACE_MODEL_DURATIONS_H */
